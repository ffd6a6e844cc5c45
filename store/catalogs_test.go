package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestEachCatalog: every catalog once, in URL order, across pages; a
// domain's, with its own parent and depth for a catalog two domains share;
// findings with their messages.
func TestEachCatalog(t *testing.T) { eachDialect(t, testEachCatalog) }

func testEachCatalog(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	if _, err := db.Enqueue(ctx, []string{"a.example", "b.example", "c.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	const shared = "https://shared.example/catalog.json"
	signed := finding.List{{Severity: finding.Info, Code: "signature_verified", Path: "/signature", Message: "signed by did:web:shared.example"}}
	for _, d := range []string{"a.example", "b.example", "c.example"} {
		root := "https://" + d + "/.well-known/ai-catalog.json"
		r := store.DomainResult{Domain: d, RunID: 0, Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: root,
			Catalogs: []store.CatalogRecord{{URL: root, SHA256: "c-" + d, SpecVersion: "1.0", EntryCount: 1, JudgedBy: "catalog/test"}}}
		if d != "c.example" {
			r.Catalogs = append(r.Catalogs, store.CatalogRecord{URL: shared, ParentURL: root, Depth: 1, SHA256: "s",
				SpecVersion: "1.0", Findings: signed, JudgedBy: "catalog/test"})
		}
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		URL, Parent string
		Depth       int
	}
	read := func(domain string) (out []row, all []store.CatalogRow) {
		t.Helper()
		if err := db.EachCatalogPaged(ctx, domain, 2, func(c store.CatalogRow) error {
			out = append(out, row{c.URL, c.ParentURL, c.Depth})
			all = append(all, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out, all
	}
	got, all := read("")
	want := []row{
		{"https://a.example/.well-known/ai-catalog.json", "", 0},
		{"https://b.example/.well-known/ai-catalog.json", "", 0},
		{"https://c.example/.well-known/ai-catalog.json", "", 0},
		{shared, "https://b.example/.well-known/ai-catalog.json", 1}, // the catalogs row keeps the last writer's
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("all catalogs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(signed, all[3].Findings); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if all[0].Findings == nil || len(all[0].Findings) != 0 || all[0].SpecVersion != "1.0" || all[0].EntryCount != 1 {
		t.Errorf("a root catalog: %+v", all[0])
	}
	got, _ = read("a.example")
	if diff := cmp.Diff([]row{{"https://a.example/.well-known/ai-catalog.json", "", 0}, {shared, "https://a.example/.well-known/ai-catalog.json", 1}}, got); diff != "" {
		t.Errorf("a.example's catalogs (-want +got):\n%s", diff)
	}
	if got, _ = read("nobody.example"); len(got) != 0 {
		t.Errorf("catalogs of an unknown domain: %v", got)
	}
}

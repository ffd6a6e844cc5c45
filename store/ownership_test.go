package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// sharedNested is a domain's result whose root catalog nests a catalog that
// another domain's root nests too.
func sharedNested(domain, shared string) store.DomainResult {
	root := "https://" + domain + "/.well-known/ai-catalog.json"
	card := "https://cards.example/" + domain
	return store.DomainResult{Domain: domain, Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: root,
		Catalogs: []store.CatalogRecord{
			{URL: root, SHA256: "r-" + domain},
			{URL: shared, ParentURL: root, Depth: 1, SHA256: "shared",
				Findings: finding.List{{Severity: finding.Warning, Code: "spec_version_missing", Message: "m"}}},
		},
		Cards:    []store.CardRecord{{Key: card, SHA256: "c", Grade: "conformant", JSON: []byte(`{}`)}},
		Listings: []store.ListingRecord{{CatalogURL: shared, Identifier: "i", CardKey: card}},
	}
}

// TestNestedCatalogOwnedByEveryDomain: a nested catalog two domains reach
// belongs to both. Each shows its findings, and after a passing failure of
// the shared catalog's parent each keeps what it listed through it.
func TestNestedCatalogOwnedByEveryDomain(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "o.db"), nil)
	if _, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	const shared = "https://shared.example/catalog.json"
	for _, d := range []string{"a.example", "b.example"} {
		if err := db.SaveDomain(ctx, sharedNested(d, shared)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.Domains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if diff := cmp.Diff([]string{"spec_version_missing"}, r.CatalogFindings); diff != "" {
			t.Errorf("%s catalog findings (-want +got):\n%s", r.Domain, diff)
		}
	}
	// a.example's root is read again but the nested catalog is not (a 503):
	// what a.example listed through it stays listed.
	again := sharedNested("a.example", shared)
	again.Catalogs, again.Listings, again.Cards = again.Catalogs[:1], nil, nil
	again.KeepCatalogs = []string{"https://a.example/.well-known/ai-catalog.json"}
	if err := db.SaveDomain(ctx, again); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Domains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Cards != 1 {
			t.Errorf("%s lists %d card(s) after its nested catalog failed for a passing reason, want 1", r.Domain, r.Cards)
		}
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// The pages' queries on both databases: paging walks every server once,
// search and the grade filter narrow, the counts add up, and a server's
// detail page finds its card and listing.
func TestSiteQueries(t *testing.T) { eachDialect(t, testSiteQueries) }

func testSiteQueries(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	domains := []string{"a.example", "b.example", "c.example"}
	if _, err := db.Enqueue(ctx, domains, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		if err := db.SaveDomain(ctx, result(d, "https://mcp."+d+"/one", "https://mcp."+d+"/two")); err != nil {
			t.Fatal(err)
		}
	}
	var walked []string
	f := store.SiteFilter{Limit: 2}
	for range 10 {
		page, err := db.SiteServers(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			walked = append(walked, r.Subject)
		}
		if page.Next == nil {
			break
		}
		f.After = *page.Next
	}
	want := []string{"https://mcp.a.example/one", "https://mcp.a.example/two", "https://mcp.b.example/one",
		"https://mcp.b.example/two", "https://mcp.c.example/one", "https://mcp.c.example/two"}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("paged walk (-want +got):\n%s", diff)
	}

	// Every card is named com.example/x: its namespace is com.example, and
	// neither a namespace it merely starts with nor one it has no "/" after
	// is its own.
	err := db.SaveNamespaces(ctx, []store.NamespaceRow{
		{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http", Result: "{}", CheckedAt: db.Now()},
		{Namespace: "com", Kind: "other", Method: "dns", Result: "{}", CheckedAt: db.Now()},
		{Namespace: "com.example/x", Kind: "other", Method: "github", Result: "{}", CheckedAt: db.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    store.SiteFilter
		want int
	}{
		{"namespace method", store.SiteFilter{NSMethod: "http"}, 6},
		{"a namespace the name only starts with", store.SiteFilter{NSMethod: "dns"}, 0},
		{"the whole name as a namespace", store.SiteFilter{NSMethod: "github"}, 0},
		{"search by domain", store.SiteFilter{Q: "B.EXAMPLE"}, 2},
		{"search matches nothing", store.SiteFilter{Q: "100%_"}, 0},
		{"grade", store.SiteFilter{Grade: "conformant"}, 6},
		{"other grade", store.SiteFilter{Grade: "non_conformant"}, 0},
	} {
		page, err := db.SiteServers(ctx, tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(page.Rows) != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.name, len(page.Rows), tc.want)
		}
	}

	// A server only the Registry declares: no grade, an unchecked namespace.
	const reg = "https://registry.example"
	entry := store.RegistryEntry{Source: reg, Name: "io.example/only", Version: "1.0.0", Status: "active", ReportedLatest: true,
		ServerJSON: `{"name":"io.example/only","version":"1.0.0"}`}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{entry}}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: reg, Name: entry.Name, Version: entry.Version, ChangedAt: db.Now()}
	only := []store.RegistryRemote{{URLNorm: "https://only.example/mcp", URL: "https://only.example/mcp", Type: "streamable-http"}}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", only); err != nil {
		t.Fatal(err)
	}
	counts, err := db.SiteCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	two := func(a, b string) []store.SiteCount {
		return []store.SiteCount{{Value: a, Count: 6}, {Value: b, Count: 1}}
	}
	all := []store.SiteCount{{Value: "", Count: 7}}
	wantCounts := store.SiteCounts{Total: 7, BySource: two("card", "registry"), ByGrade: two("conformant", ""),
		ByOutcome: all, ByCategory: all, ByNSMethod: two("http", "")}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	d, ok, err := db.SiteServer(ctx, store.SiteKey{Kind: store.KindEndpoint, Subject: "https://mcp.b.example/two"})
	if err != nil || !ok {
		t.Fatalf("detail: ok=%v err=%v", ok, err)
	}
	if len(d.Cards) != 1 || d.Cards[0].Key != "https://b.example/card" || len(d.Listings) != 1 {
		t.Errorf("detail: %d cards (%+v), %d listings", len(d.Cards), d.Cards, len(d.Listings))
	}
}

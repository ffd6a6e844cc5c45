package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestListingFindingFilter: a filter on a listing's code keeps exactly the
// servers an active listing of which carries that code, in every reader
// that takes filters: the feed's walk (export, servers), the
// Registry-shaped entries (serve's API) and the site's pages, a page of
// one at a time, each server once however many of its listings carry the
// code. Not a code that merely contains it or that an underscore
// would match as a LIKE wildcard, not a listing that went away while
// another domain still lists the server without it, not an endpoint only
// the Registry declares. The site's summary counts the same servers.
func TestListingFindingFilter(t *testing.T) { eachDialect(t, testListingFindingFilter) }

func testListingFindingFilter(t *testing.T, dsn string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return now })
	type server struct{ name, endpoint, codes string }
	run := int64(0)
	save := func(domain string, servers ...server) {
		t.Helper()
		run++
		root := "https://" + domain + "/.well-known/ai-catalog.json"
		r := store.DomainResult{Domain: domain, RunID: run, Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: root,
			Catalogs: []store.CatalogRecord{{URL: root, SHA256: "c-" + domain, JudgedBy: "catalog/test"}}}
		for i, s := range servers {
			key := "https://cards.example/" + s.name + ".json"
			r.Cards = append(r.Cards, store.CardRecord{Key: key, SourceURL: key, SHA256: "h-" + s.name,
				Name: "com.example/" + s.name, Version: "1", Grade: "conformant",
				JSON: []byte(`{"name":"com.example/` + s.name + `","version":"1"}`), JudgedBy: "servercard/test"})
			l := store.ListingRecord{CatalogURL: root, Identifier: "urn:x:" + s.name, CardKey: key, Codes: s.codes, Entry: i}
			if s.endpoint != "" {
				r.Remotes = append(r.Remotes, store.RemoteRecord{URLNorm: s.endpoint, URL: s.endpoint, Type: "streamable-http",
					CardKey: key, JSON: []byte(`{"type":"streamable-http","url":"` + s.endpoint + `"}`)})
				l.RemoteNorm = s.endpoint
			}
			r.Listings = append(r.Listings, l)
		}
		if _, err := db.Enqueue(ctx, []string{domain}, store.EnqueueOptions{RunID: run}); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	const (
		epA, epB, epD, epE = "https://mcp.a.example/mcp", "https://mcp.b.example/mcp", "https://mcp.d.example/mcp", "https://mcp.e.example/mcp"
		cardC              = "https://cards.example/c.json"
		epG                = "https://mcp.g.example/mcp"
		epR                = "https://only.r.example/mcp"
		reg                = "https://registry.example"
	)
	save("a.example", server{"a", epA, "entry_digest_mismatch signature_verified"})
	save("b.example", server{"b", epB, "signaturexverified"})
	save("c.example", server{"c", "", "signature_verified"})
	save("d.example", server{"d", epD, ""})
	save("e.example", server{"e", epE, "signature_verified"})
	save("f.example", server{"e", epE, ""})
	save("e.example") // stops listing it
	save("g.example", server{"g", epG, "signature_verified"})
	save("h.example", server{"g", epG, "entry_digest_mismatch signature_verified"})
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{{Source: reg,
		Name: "example.r/only", Version: "1.0.0", Status: "active", ReportedLatest: true,
		ServerJSON: `{"name":"example.r/only","version":"1.0.0","description":"r"}`}}}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: reg, Name: "example.r/only", Version: "1.0.0", ChangedAt: store.FormatTime(now)}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-r", []store.RegistryRemote{{URLNorm: epR, URL: epR,
		Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}

	// Each reader's answer, as record keys in its order.
	readers := map[string]func(code string) []string{
		"feed": func(code string) []string {
			var keys []string
			if err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: store.FeedFilter{ListingFinding: code,
				Source: store.FeedSourceAll}}, func(r *store.FeedServer) error {
				keys = append(keys, r.Cursor().Key)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return keys
		},
		"entries": func(code string) []string {
			es, _, err := db.FeedEntries(ctx, store.EntryQuery{Limit: 100, FeedFilter: store.FeedFilter{ListingFinding: code,
				Source: store.FeedSourceAll}})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range es {
				for _, r := range e.Records {
					keys = append(keys, r.Cursor().Key)
				}
			}
			return keys
		},
		"site": func(code string) []string {
			var keys []string
			for _, k := range walkSite(t, db, store.SiteFilter{ListingFinding: code, Limit: 1}) {
				keys = append(keys, k.Subject)
			}
			return keys
		},
	}
	for code, want := range map[string][]string{
		"signature_verified":    {epA, cardC, epG},
		"entry_digest_mismatch": {epA, epG},
		"signaturexverified":    {epB},
		"entry_digest":          nil,
		"signature":             nil,
	} {
		slices.Sort(want)
		for name, read := range readers {
			got := read(code)
			slices.Sort(got) // the site's order puts cards first, the feed's last
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, listing finding %q (-want +got):\n%s", name, code, diff)
			}
		}
	}
	// The summary counts each server once under each code its active
	// listings carry.
	counts, err := db.SiteCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.SiteCount{{Value: "signature_verified", Count: 3}, {Value: "entry_digest_mismatch", Count: 2},
		{Value: "signaturexverified", Count: 1}}, counts.ByListingFinding); diff != "" {
		t.Errorf("servers by listing finding (-want +got):\n%s", diff)
	}
	// Without the filter, every reader sees every server, the Registry's too.
	if got := readers["feed"](""); len(got) != 7 {
		t.Errorf("feed without a filter: %v, want the 7 servers", got)
	}
}

package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestSearchIndexAgreesWithScan: with a search index attached, the site's
// search pages through exactly the servers a walk of every server finds, on
// both databases: for terms in each searched field, rare and common, of one
// and two characters too (the index's vocabulary), after the crawl and the
// Registry change and the index is refreshed; and a server a crawl wrote
// after the last Refresh is found before the next.
func TestSearchIndexAgreesWithScan(t *testing.T) { eachDialect(t, testSearchIndexAgreesWithScan) }

func testSearchIndexAgreesWithScan(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	scan := open(t, dsn, nil) // the same database, never indexed
	const reg = "https://registry.example"

	// save writes domain i: a card (named by i) with i%3 endpoints, the
	// first domains' with descriptions of their own, and every fifth
	// domain's card declaring no endpoint.
	save := func(i int, extra string) {
		t.Helper()
		saveSearchDomain(t, db, i, store.CardRecord{Name: fmt.Sprintf("com.example/server-%02d", i),
			Title: fmt.Sprintf("Title %02d Ünïcode", i), Description: "an MCP server" + extra}, extra)
	}
	for i := range 30 {
		save(i, "")
	}
	registry := func(name, url, description string) {
		t.Helper()
		e := store.RegistryEntry{Source: reg, Name: name, Version: "1.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: fmt.Sprintf(`{"name":%q,"version":"1.0.0","description":%q}`, name, description)}
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{e}}); err != nil {
			t.Fatal(err)
		}
		doc := store.RegistryEntryDoc{Source: reg, Name: name, Version: "1.0.0", ChangedAt: db.Now()}
		rs := []store.RegistryRemote{{URLNorm: url, URL: url, Type: "streamable-http"}}
		if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-"+name, rs); err != nil {
			t.Fatal(err)
		}
	}
	// A server whose text ends with "qz" and holds it nowhere else.
	if _, err := db.Enqueue(ctx, []string{"d40.qz"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDomain(ctx, result("d40.qz", "https://mcp.d40.example/x")); err != nil {
		t.Fatal(err)
	}
	registry("io.example/only", "https://only.registry.example/mcp", "found only in the Registry: zebrafish, 地图")
	// A short term held many times by one server and once by another: a
	// bound on the terms' occurrences rather than their servers would miss
	// the second.
	registry("io.example/shared", "https://mcp1.d01.example/path", "also in a card: quokka, λόγος λόγος λόγος λόγος λόγος")
	registry("io.example/third", "https://third.registry.example/mcp", "λόγος")

	ix := openSearchIndex(t, db)

	// walk pages through a search ten servers at a time.
	walk := func(db *store.DB, q string) []store.SiteKey {
		t.Helper()
		return walkSite(t, db, store.SiteFilter{Q: q, Limit: 10})
	}
	terms := []string{
		"server-07",          // a name
		"TITLE 1",            // a title, any case
		"ünïcode",            // non-ASCII, as written
		"an mcp server",      // a description: every card
		"mcp1.d04",           // an endpoint URL
		"d10.example",        // a listing domain (a card without endpoints)
		"zebrafish",          // a Registry-only server's server.json
		"quokka",             // the server.json of an endpoint a card declares too
		"only.registry",      // a Registry-only endpoint's URL
		"d2",                 // two characters: the index's vocabulary
		"qz",                 // two characters, only at the end of a server's text
		"Z",                  // one character, there too, any case
		"ü",                  // one letter beyond ASCII, any case
		"ÜN",                 // two, one of them ASCII
		"ος",                 // two, the last folded by FTS5 to another letter (σ)
		"地图",                 // two characters without case
		"图",                  // one
		"%",                  // one character, LIKE's special
		"zq",                 // two characters nothing holds
		"nothing matches me", // nothing
		`50%_"x`,             // LIKE's and FTS5's specials
	}
	// check compares every term's walks, with candidates collected whole
	// and, with a bound of three, walked in key order.
	check := func(when string) {
		t.Helper()
		defer ix.SetMaxCandidates(ix.SetMaxCandidates(0))
		for _, q := range terms {
			want := walk(scan, q)
			for _, bound := range []int{2000, 3} {
				ix.SetMaxCandidates(bound)
				if diff := cmp.Diff(want, walk(db, q)); diff != "" {
					t.Errorf("%s, at most %d candidates: search %q, index against scan (-scan +index):\n%s", when, bound, q, diff)
				}
			}
		}
	}
	if ix.Ready() {
		t.Fatal("ready before its first refresh")
	}
	check("before the first refresh") // the scan answers
	if _, err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !ix.Ready() {
		t.Fatal("not ready after a refresh")
	}
	check("after the first refresh")
	if got := walk(db, "zebrafish"); len(got) != 1 {
		t.Fatalf("the index found %v for a Registry-only term, want one server", got)
	}

	// Cards change, a domain stops listing its endpoints, the Registry
	// entry changes: a refresh brings each in.
	save(31, " of the new kind")
	save(33, "") // a card without endpoints: found by its listing's domain
	if err := db.SaveDomain(ctx, result("d05.example")); err != nil {
		t.Fatal(err)
	}
	// The crawl's changes are found before the next refresh: the records
	// written since the index was last exact are candidates too, within
	// the bound and over it.
	func() {
		defer ix.SetMaxCandidates(ix.SetMaxCandidates(0))
		for _, q := range []string{"new kind", "d05.example", "server-31", "d33.example", "an mcp server"} {
			want := walk(scan, q)
			for _, bound := range []int{2000, 3, 1} {
				ix.SetMaxCandidates(bound)
				if diff := cmp.Diff(want, walk(db, q)); diff != "" {
					t.Errorf("before a refresh, at most %d candidates: search %q, index against scan (-scan +index):\n%s", bound, q, diff)
				}
			}
		}
	}()
	if got := walk(db, "d33.example"); len(got) != 1 {
		t.Errorf("a server written after the last refresh: found %v, want one", got)
	}
	registry("io.example/only", "https://only.registry.example/mcp", "renamed: narwhal")
	terms = append(terms, "new kind", "narwhal", "d05.example")
	if n, err := ix.Refresh(ctx); err != nil || n == 0 {
		t.Fatalf("refresh after changes: %d records, %v", n, err)
	}
	check("after changes and a refresh")
	if got := walk(db, "zebrafish"); len(got) != 0 {
		t.Errorf("the old server.json is still found: %v", got)
	}
	if n, err := ix.Refresh(ctx); err != nil || n != 0 {
		t.Errorf("a refresh with nothing new read %d records (%v), want 0", n, err)
	}
}

// TestFeedSearchThroughIndex: the API's name search reads only the cards
// the index proposes (and those written since it was exact), and answers
// what a read of every name answers, page by page, before, during and after
// the index catches up with new writes.
func TestFeedSearchThroughIndex(t *testing.T) { eachDialect(t, testFeedSearchThroughIndex) }

func testFeedSearchThroughIndex(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	scan := open(t, dsn, nil) // the same database, never indexed
	save := func(i int, name string) {
		t.Helper()
		saveSearchDomain(t, db, i, store.CardRecord{Name: name, Title: fmt.Sprintf("Title %02d", i)}, "")
	}
	for i := range 30 {
		save(i, fmt.Sprintf("com.example/Server-%02d", i))
	}
	ix := openSearchIndex(t, db)

	// walk reads every page of a search, three entries at a time.
	walk := func(db *store.DB, q string) []string {
		t.Helper()
		var got []string
		eq := store.EntryQuery{Search: q, Limit: 3}
		for range 100 {
			page, more, err := db.FeedEntries(ctx, eq)
			if err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			for _, e := range page {
				for _, r := range e.Records {
					got = append(got, e.CardKey+" "+r.Name+" "+r.EndpointNorm)
				}
			}
			if !more {
				return got
			}
			eq.After = page[len(page)-1].CardKey
		}
		t.Fatalf("search %q: more than 100 pages", q)
		return nil
	}
	terms := []string{
		"server-07",          // one name, in another case
		"server-1",           // ten names
		"example/server",     // every name
		"title 07",           // a title: proposed by the index, not a name
		"d10.example",        // a listing domain: proposed, not a name
		"se",                 // two characters: the index's vocabulary
		"7",                  // one character
		"é",                  // one letter beyond ASCII
		"nothing matches me", // nothing
		`50%_"x`,             // LIKE's and FTS5's specials
	}
	check := func(when string) {
		t.Helper()
		for _, q := range terms {
			if diff := cmp.Diff(walk(scan, q), walk(db, q)); diff != "" {
				t.Errorf("%s: search %q, index against scan (-scan +index):\n%s", when, q, diff)
			}
		}
	}
	check("before the first refresh")
	if n := ix.Narrowed(); n != 0 {
		t.Fatalf("an index not yet built narrowed %d searches", n)
	}
	if _, err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the first refresh")
	if ix.Narrowed() == 0 {
		t.Fatal("a current index narrowed no search")
	}
	// Terms of one or two characters too, of any alphabet.
	for _, q := range []string{"se", "7", "图", "地图", "é", "ß", "ΣΣ"} {
		before := ix.Narrowed()
		walk(db, q)
		if ix.Narrowed() == before {
			t.Errorf("search %q was not narrowed", q)
		}
	}
	if got := walk(db, "server-07"); len(got) != 1 {
		t.Fatalf("server-07: %v, want one record", got)
	}
	// A search reads the index while another does, but not while a
	// Refresh writes it: then it reads every name, and still finds them.
	before := ix.Narrowed()
	release := ix.Hold(false)
	if got := walk(db, "server-07"); len(got) != 1 {
		t.Errorf("server-07 beside another search: %v, want one record", got)
	}
	release()
	if ix.Narrowed() == before {
		t.Error("a search beside another was not narrowed")
	}
	before = ix.Narrowed()
	release = ix.Hold(true)
	if got := walk(db, "server-07"); len(got) != 1 {
		t.Errorf("server-07 during a refresh: %v, want one record", got)
	}
	release()
	if n := ix.Narrowed() - before; n != 0 {
		t.Errorf("%d searches narrowed during a refresh", n)
	}

	// New writes put the index behind: the records written since it was
	// last exact are read besides its candidates, so the new servers are
	// found at once.
	save(31, "com.example/Server-31 renamed")
	save(7, "com.example/other")
	before = ix.Narrowed()
	check("behind the writes")
	if got := walk(db, "renamed"); len(got) != 1 {
		t.Errorf("a server written after the last refresh: %v, want it found", got)
	}
	if ix.Narrowed() == before {
		t.Error("an index behind by two servers narrowed no search")
	}
	// More records written since than a search may collect: every name is
	// read.
	old := ix.SetMaxCandidates(1)
	before = ix.Narrowed()
	check("behind by more records than candidates allowed")
	if n := ix.Narrowed() - before; n != 0 {
		t.Errorf("%d searches narrowed with more records written since than allowed", n)
	}
	ix.SetMaxCandidates(old)
	if _, err := ix.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	terms = append(terms, "renamed", "other")
	check("after catching up")
	if ix.Narrowed() == before {
		t.Error("the caught-up index narrowed no search")
	}
}

// openSearchIndex attaches a search index in the test's directory to db.
func openSearchIndex(t *testing.T, db *store.DB) *store.SearchIndex {
	t.Helper()
	ix, err := db.OpenSearchIndex(context.Background(), store.SearchIndexOptions{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// saveSearchDomain writes domain i: a card with card's name, title and
// description and i%3 endpoints (their paths ending in suffix); a card
// without endpoints is listed on its own.
func saveSearchDomain(t *testing.T, db *store.DB, i int, card store.CardRecord, suffix string) {
	t.Helper()
	ctx := context.Background()
	d := fmt.Sprintf("d%02d.example", i)
	if _, err := db.Enqueue(ctx, []string{d}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	var remotes []string
	for j := range i % 3 {
		remotes = append(remotes, fmt.Sprintf("https://mcp%d.%s/path%s", j, d, suffix))
	}
	r := result(d, remotes...)
	r.Cards[0].Name, r.Cards[0].Title, r.Cards[0].Description = card.Name, card.Title, card.Description
	if len(remotes) == 0 {
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: r.Cards[0].Key})
	}
	if err := db.SaveDomain(ctx, r); err != nil {
		t.Fatal(err)
	}
}

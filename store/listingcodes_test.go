package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestListingCodes: what a catalog found of an entry and of its signature
// is kept with the listing and read back with each record's listing
// chain. A change of it alone moves the record (its updated_at, the feed's
// version) and leaves one listing, not two, whether the result is
// definitive or adds to what was listed; the same codes again move nothing;
// a transient failure keeps them. The entry a listing came from is kept
// the same way for the server's page, and a move of it alone moves
// nothing in the feed.
func TestListingCodes(t *testing.T) { eachDialect(t, testListingCodes) }

func testListingCodes(t *testing.T, dsn string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return now })
	const (
		root     = "https://a.example/.well-known/ai-catalog.json"
		cardKey  = "https://a.example/card.json"
		endpoint = "https://mcp.a.example/mcp"
	)
	result := func(run int64, codes string, entry int) store.DomainResult {
		return store.DomainResult{Domain: "a.example", RunID: run, Outcome: store.OutcomeCatalog, Definitive: true,
			CatalogURL: root,
			Catalogs:   []store.CatalogRecord{{URL: root, SHA256: "c", JudgedBy: "catalog/test"}},
			Cards: []store.CardRecord{{Key: cardKey, SourceURL: cardKey, SHA256: "h", Name: "com.example/a", Version: "1",
				Grade: "conformant", JSON: []byte(`{"name":"com.example/a","version":"1"}`), JudgedBy: "servercard/test"}},
			Remotes: []store.RemoteRecord{{URLNorm: endpoint, URL: endpoint, Type: "streamable-http", CardKey: cardKey,
				JSON: []byte(`{"type":"streamable-http","url":"` + endpoint + `"}`)}},
			Listings: []store.ListingRecord{{CatalogURL: root, Identifier: "urn:air:a.example:mcp:a", CardKey: cardKey,
				RemoteNorm: endpoint, Codes: codes, Entry: entry}},
		}
	}
	// A result that is not definitive (the domain's time ran out, say)
	// adds to what was listed: the listings it lists again take its codes.
	partial := func(run int64, codes string, entry int) store.DomainResult {
		r := result(run, codes, entry)
		r.Definitive = false
		return r
	}
	type seen struct {
		Codes     [][]string
		UpdatedAt string
		Entries   []int // the site's
	}
	read := func() seen {
		t.Helper()
		var s seen
		if err := db.EachFeedServer(ctx, store.FeedQuery{Since: "0"}, func(r *store.FeedServer) error {
			for _, l := range r.Listings {
				s.Codes = append(s.Codes, l.Codes)
			}
			s.UpdatedAt = r.UpdatedAt
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		d, _, err := db.SiteServer(ctx, store.SiteKey{Kind: store.KindEndpoint, Subject: endpoint})
		if err != nil {
			t.Fatalf("the site's server: %v", err)
		}
		for _, l := range d.Listings {
			s.Entries = append(s.Entries, l.Entry)
		}
		return s
	}
	steps := []struct {
		name  string
		save  store.DomainResult
		codes [][]string
		entry int
		moved bool
	}{
		{"first crawl, nothing found", result(1, "", 0), [][]string{nil}, 0, true},
		{"signed", result(2, store.CodesText([]string{"signature_verified"}), 0), [][]string{{"signature_verified"}}, 0, true},
		{"the same again", result(3, "signature_verified", 0), [][]string{{"signature_verified"}}, 0, false},
		{"the same, its entry moved down the catalog", result(4, "signature_verified", 2),
			[][]string{{"signature_verified"}}, 2, false},
		{"its digest stops matching",
			result(5, store.CodesText([]string{"signature_verified", "entry_digest_mismatch", "signature_verified"}), 2),
			[][]string{{"entry_digest_mismatch", "signature_verified"}}, 2, true},
		{"a transient failure", store.DomainResult{Domain: "a.example", RunID: 6, Outcome: store.OutcomeFailed,
			Class: "timeout"}, [][]string{{"entry_digest_mismatch", "signature_verified"}}, 2, false},
		{"a partial crawl finds the digest matching", partial(7, "signature_verified", 1), [][]string{{"signature_verified"}},
			1, true},
		{"nothing found any more", result(8, "", 1), [][]string{nil}, 1, true},
	}
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: 1}); err != nil {
		t.Fatal(err)
	}
	before, version := read(), feedVersion(t, db)
	for _, step := range steps {
		now = now.Add(time.Hour)
		if err := db.SaveDomain(ctx, step.save); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got := read()
		if diff := cmp.Diff(step.codes, got.Codes); diff != "" {
			t.Errorf("%s: listings' codes (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff([]int{step.entry}, got.Entries); diff != "" {
			t.Errorf("%s: the listing's entry on the site (-want +got):\n%s", step.name, diff)
		}
		if moved := got.UpdatedAt != before.UpdatedAt; moved != step.moved {
			t.Errorf("%s: updated_at %q -> %q, want moved=%v", step.name, before.UpdatedAt, got.UpdatedAt, step.moved)
		}
		if v := feedVersion(t, db); step.moved && v == version {
			t.Errorf("%s: the feed's version stayed %s", step.name, v)
		} else {
			version = v
		}
		before = got
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestFeedEntryRepeats: a walk of entries with FactRepeats marks each
// card's entry whose publisher identifier and version an earlier entry of
// the same walk has, and no other: not the first, not one of another
// version or identifier, not because a card's own other endpoint is listed
// under its identifier, and not after an entry the filter leaves out.
func TestFeedEntryRepeats(t *testing.T) { eachDialect(t, testFeedEntryRepeats) }

func testFeedEntryRepeats(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	for _, c := range []struct {
		domain, id, version, grade string
		remotes                    []string
	}{
		// Two endpoints, both listed under its identifier: one entry.
		{"a.example", "urn:x:one", "1.0.0", "", []string{"https://mcp.a.example/1", "https://mcp.a.example/2"}},
		{"b.example", "urn:x:one", "1.0.0", "", []string{"https://mcp.b.example/1"}},
		{"c.example", "urn:x:one", "2.0.0", "", []string{"https://mcp.c.example/1"}},
		{"d.example", "urn:x:d", "1.0.0", "", []string{"https://mcp.d.example/1"}},
		// A card without remotes, listed by its card key.
		{"e.example", "urn:x:one", "1.0.0", "", nil},
		// Its own key as identifier: made up by the crawler, no publisher's.
		{"f.example", "https://f.example/card", "1.0.0", "", []string{"https://mcp.f.example/1"}},
		{"g.example", "urn:x:g", "1.0.0", "warnings", []string{"https://mcp.g.example/1"}},
		{"h.example", "urn:x:g", "1.0.0", "", []string{"https://mcp.h.example/1"}},
	} {
		if err := feedtest.Save(ctx, db, 1, c.domain, feedtest.Card{Key: "https://" + c.domain + "/card",
			Name: "com.example/" + c.domain, Version: c.version, Grade: c.grade, Identifier: c.id, Remotes: c.remotes}); err != nil {
			t.Fatal(err)
		}
	}
	// Every page size: an earlier entry on the same page, or on one before.
	repeats := func(filter store.FeedFilter, want store.Facts) map[string]bool {
		t.Helper()
		var first map[string]bool
		for _, size := range []int{500, 1, 2, 3, -1} {
			// The last: pages of 2, the records under their identifiers
			// off the page looked up one at a time.
			chunk := *store.IdentifierChunk
			if size < 0 {
				size, *store.IdentifierChunk = 2, 1
			}
			got := map[string]bool{}
			err := db.EachFeedEntryPaged(ctx, filter, want, size, func(e *store.FeedEntry) error {
				got[e.CardKey] = e.Repeats
				return nil
			})
			*store.IdentifierChunk = chunk
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = got
			} else if diff := cmp.Diff(first, got); diff != "" {
				t.Errorf("pages of %d (-pages of 500 +got):\n%s", size, diff)
			}
		}
		return first
	}
	k := func(d string) string { return "https://" + d + "/card" }
	want := map[string]bool{k("a.example"): false, k("b.example"): true, k("c.example"): false, k("d.example"): false,
		k("e.example"): true, k("f.example"): false, k("g.example"): false, k("h.example"): true}
	if diff := cmp.Diff(want, repeats(store.FeedFilter{}, store.FactsBase|store.FactRepeats)); diff != "" {
		t.Errorf("repeats (-want +got):\n%s", diff)
	}
	// Left out by the filter, g.example's entry is not there to repeat.
	delete(want, k("g.example"))
	want[k("h.example")] = false
	if diff := cmp.Diff(want, repeats(store.FeedFilter{Grade: "conformant"}, store.FactsBase|store.FactRepeats)); diff != "" {
		t.Errorf("repeats of the conformant cards (-want +got):\n%s", diff)
	}
	// Not asked, not read.
	for key, r := range repeats(store.FeedFilter{}, store.FactsBase) {
		if r {
			t.Errorf("%s repeats without FactRepeats", key)
		}
	}
}

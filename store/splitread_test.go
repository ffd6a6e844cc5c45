package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestSplitWalkReadsWhatOneReads: a whole walk that reads its records on
// one connection and their listings and facts on another (a read-only
// handle, or PostgreSQL's pool) hands over the records and entries a walk
// on one connection does, page after page.
func TestSplitWalkReadsWhatOneReads(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		// One connection: a SQLite file opened for writing has one, and
		// PostgreSQL is held to one.
		one, two := filledPair(ctx, t, dsn, 30, store.Options{MaxConns: 1})
		ignore := cmpopts.IgnoreUnexported(store.FeedServer{})
		for _, db := range []*store.DB{one, two} {
			db.SetFeedPage(4)
		}
		records := func(db *store.DB) []store.FeedServer {
			t.Helper()
			var out []store.FeedServer
			if err := db.EachFeedServer(ctx, store.FeedQuery{}, func(s *store.FeedServer) error {
				out = append(out, *s)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		want := records(one)
		if len(want) < 40 {
			t.Fatalf("the fill made %d records; the walk should cross pages", len(want))
		}
		if diff := cmp.Diff(want, records(two), ignore); diff != "" {
			t.Errorf("records (-one connection +two):\n%s", diff)
		}
		entries := func(db *store.DB) []store.FeedEntry {
			t.Helper()
			var out []store.FeedEntry
			if err := db.EachFeedEntry(ctx, store.FeedFilter{}, store.FactRepeats|store.FactCategory, func(e *store.FeedEntry) error {
				out = append(out, *e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		got := entries(two)
		if diff := cmp.Diff(entries(one), got, ignore); diff != "" {
			t.Errorf("entries (-one connection +two):\n%s", diff)
		}
		// An entry's records have the categories the walk of records
		// gives them, though in entry order a page's keys are no range.
		category := map[[2]string]string{}
		for _, s := range want {
			category[[2]string{s.EndpointNorm, s.CardKey}] = s.Category + "/" + s.CategorySource
		}
		categorized := 0
		for _, e := range got {
			for _, s := range e.Records {
				if c, w := s.Category+"/"+s.CategorySource, category[[2]string{s.EndpointNorm, s.CardKey}]; c != w {
					t.Errorf("record %s of card %s: category %q in its entry, %q in the walk", s.EndpointNorm, s.CardKey, c, w)
				}
				if s.Category != "" {
					categorized++
				}
			}
		}
		if categorized == 0 {
			t.Error("no record of an entry has a category; the fill stores some")
		}
	})
}

// TestSplitWalkPanicGivesConnectionsBack: a panic in a walk's callback
// (serve recovers one) gives its connections back to the pool, both of a
// split walk's and the one of a walk on one: walk after walk can still
// read.
func TestSplitWalkPanicGivesConnectionsBack(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w, r := filledPair(ctx, t, dsn, 3, store.Options{})
		// r reads on two connections, w (on SQLite) on one.
		for _, db := range []*store.DB{r, w} {
			for range 10 {
				func() {
					defer func() {
						if p := recover(); p != "broken writer" {
							t.Fatalf("recovered %v, want the callback's panic", p)
						}
					}()
					_ = db.EachFeedServer(ctx, store.FeedQuery{}, func(*store.FeedServer) error { panic("broken writer") })
				}()
			}
			n := 0
			if err := db.EachFeedServer(ctx, store.FeedQuery{}, func(*store.FeedServer) error { n++; return nil }); err != nil {
				t.Fatalf("a walk after ten that panicked: %v", err)
			}
			if n == 0 {
				t.Error("the walk after the panics read no record")
			}
		}
	})
}

// filledPair opens dsn with opts, fills it with domains domains, and opens
// it again read-only; both close when the test ends.
func filledPair(ctx context.Context, t *testing.T, dsn string, domains int, opts store.Options) (w, r *store.DB) {
	t.Helper()
	w, err := store.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := feedtest.Fill(ctx, w, feedtest.Options{Domains: domains, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	if r, err = store.Open(ctx, dsn, store.Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return w, r
}

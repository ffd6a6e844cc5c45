package feed_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// testClock is a clock tests move on by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock {
	return &testClock{t: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// filledStore is a real database holding feedtest's varied servers, each
// domain saved a second after the last.
func filledStore(t testing.TB, domains int) (*store.DB, *testClock) {
	t.Helper()
	ctx := context.Background()
	clock := newTestClock()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "feed.db"), store.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: domains, RunID: 1,
		BeforeDomain: func() { clock.Advance(time.Second) }}); err != nil {
		t.Fatal(err)
	}
	return db, clock
}

// TestStoreGolden pins every format's bytes for a database filled through
// the store's own writes: shared endpoints, cards without remotes, inline
// cards, probes, decisions, hostile text and links. The files were written
// by the export that read every server into memory (main's, categories
// and the publishers' AI Catalog included); the streamed export must write
// the same bytes. store.ai-catalog.minted is the AI Catalog of an operator
// that names its own domain: the cards whose publisher gave no identifier
// get one minted instead of being left out.
func TestStoreGolden(t *testing.T) {
	db, _ := filledStore(t, 40)
	for _, f := range feed.FormatNames() {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			if err := exportAll(context.Background(), db, f, &buf); err != nil {
				t.Fatal(err)
			}
			golden(t, "store."+f, buf.Bytes())
		})
	}
	for _, c := range []struct {
		name, publisher string
		skipped         int
	}{{"store.ai-catalog", "", 3}, {"store.ai-catalog.minted", "directory.example", 0}} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			skipped := -1
			if err := feed.Write(context.Background(), &buf, "ai-catalog", db, feed.WriteOptions{
				Catalog: feed.CatalogOptions{PublisherDomain: c.publisher}, Skipped: &skipped}); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, buf.Bytes())
			if skipped != c.skipped {
				t.Errorf("skipped %d cards, want %d", skipped, c.skipped)
			}
		})
	}
}

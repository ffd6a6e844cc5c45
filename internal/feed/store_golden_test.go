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

// tickingClock returns a clock that advances a second on every reading,
// from a fixed start, so stored times are distinct and reproducible.
func tickingClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// filledStore is a real database holding feedtest's varied servers.
func filledStore(t testing.TB, domains int) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "feed.db"), store.Options{Now: tickingClock()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: domains, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestStoreGolden pins every format's bytes for a database filled through
// the store's own writes: shared endpoints, cards without remotes, inline
// cards, probes, decisions, hostile text and links. The files were written
// by the export that read every server into memory; the streamed export
// must write the same bytes.
func TestStoreGolden(t *testing.T) {
	db := filledStore(t, 40)
	for _, f := range feed.Formats {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			if err := exportAll(context.Background(), db, f, &buf); err != nil {
				t.Fatal(err)
			}
			golden(t, "store."+f, buf.Bytes())
		})
	}
}

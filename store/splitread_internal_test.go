package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestBeginPairOneSnapshot: the two transactions of a split read see one
// state even when writes commit between their begins. SQLite, which
// shares no snapshot between connections, begins again when one did, and
// after splitReadTries gives up the split (the walk reads on one
// connection); PostgreSQL's second transaction takes the first one's
// exported snapshot whatever was written since.
func TestBeginPairOneSnapshot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		writes    int // the first this many runs between the begins write
		wantCalls map[string]int
		wantPair  map[string]bool
	}{
		{"no write", 0, map[string]int{"sqlite": 1, "postgres": 1}, map[string]bool{"sqlite": true, "postgres": true}},
		{"one write", 1, map[string]int{"sqlite": 2, "postgres": 1}, map[string]bool{"sqlite": true, "postgres": true}},
		{"writes on every try", 100, map[string]int{"sqlite": splitReadTries, "postgres": 1},
			map[string]bool{"sqlite": false, "postgres": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			t.Run("sqlite", func(t *testing.T) {
				testBeginPair(t, filepath.Join(t.TempDir(), "p.db"), tc.writes, tc.wantCalls["sqlite"], tc.wantPair["sqlite"])
			})
			t.Run("postgres", func(t *testing.T) {
				testBeginPair(t, pgtest.NewDB(t), tc.writes, tc.wantCalls["postgres"], tc.wantPair["postgres"])
			})
		})
	}
}

func testBeginPair(t *testing.T, dsn string, writes, wantCalls int, wantPair bool) {
	ctx := context.Background()
	w, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Enqueue(ctx, []string{"a.example"}, EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, dsn, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	calls := 0
	r.betweenBegins = func() {
		if calls++; calls <= writes {
			if _, err := w.Enqueue(ctx, []string{fmt.Sprintf("w%d.example", calls)}, EnqueueOptions{}); err != nil {
				t.Error(err)
			}
		}
	}
	a, b, end, err := r.beginPair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if calls != wantCalls {
		t.Errorf("%d begins of the second transaction, want %d", calls, wantCalls)
	}
	if (a != nil) != wantPair {
		t.Fatalf("a pair: %v, want %v", a != nil, wantPair)
	}
	if a == nil {
		return
	}
	defer end()
	var onA, onB int
	if err := a.QueryRowContext(ctx, `SELECT COUNT(*) FROM domains`).Scan(&onA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, `SELECT COUNT(*) FROM domains`).Scan(&onB); err != nil {
		t.Fatal(err)
	}
	if onA != onB {
		t.Errorf("the first transaction sees %d domains, the second %d", onA, onB)
	}
}

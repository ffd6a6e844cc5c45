package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openBatchTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "b.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Concurrent writers share commits, yet each one's outcome is its own: a
// failing write leaves nothing behind and does not take the others down,
// and every write reported done is there.
func TestSharedCommitsIsolateFailures(t *testing.T) {
	db := openBatchTest(t)
	ctx := context.Background()
	const writers = 64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	var calls atomic.Int32
	boom := errors.New("boom")
	for i := range writers {
		wg.Go(func() {
			errs[i] = db.write(func(tx *txw) error {
				calls.Add(1)
				if _, err := tx.exec(`INSERT INTO domains (domain, added_at, state) VALUES (?, ?, ?)`,
					fmt.Sprintf("d%d.example", i), db.Now(), StatePending); err != nil {
					return err
				}
				if i%10 == 3 {
					return boom // after its insert: the insert must not survive
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if want := i%10 == 3; errors.Is(err, boom) != want || (!want && err != nil) {
			t.Errorf("writer %d: err %v", i, err)
		}
	}
	rows, err := db.Domains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range rows {
		got[r.Domain] = true
	}
	for i := range writers {
		if name := fmt.Sprintf("d%d.example", i); got[name] == (i%10 == 3) {
			t.Errorf("%s stored: %v", name, got[name])
		}
	}
	if int(calls.Load()) < writers {
		t.Errorf("%d calls for %d writers", calls.Load(), writers)
	}
}

// A statement first met inside a transaction runs unprepared, and is
// prepared for the next commit.
func TestStatementsArePreparedOnce(t *testing.T) {
	db := openBatchTest(t)
	q := `SELECT COUNT(*) FROM domains WHERE state = ?`
	for range 2 {
		if err := db.write(func(tx *txw) error {
			var n int
			return tx.queryRow(q, StatePending).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
	}
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	if db.stmts.m[q] == nil {
		t.Errorf("statement not cached after two commits")
	}
}

// BenchmarkSaveDomainParallel saves small domain results (one catalog, two
// cards, two remotes, like a generated web's) from 64 writers at once.
func BenchmarkSaveDomainParallel(b *testing.B) {
	db := openBatchTest(b)
	ctx := context.Background()
	var n atomic.Int64
	b.SetParallelism(32) // × GOMAXPROCS writers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := fmt.Sprintf("site%d.example", n.Add(1))
			if _, err := db.Enqueue(ctx, []string{d}, EnqueueOptions{}); err != nil {
				b.Error(err)
				return
			}
			if err := db.SaveDomain(ctx, benchResult(d)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchResult(d string) DomainResult {
	cat := "https://" + d + "/.well-known/ai-catalog.json"
	r := DomainResult{Domain: d, Outcome: OutcomeCatalog, Definitive: true, CatalogURL: cat,
		NextFetchAfter: time.Now().Add(time.Hour),
		Catalogs:       []CatalogRecord{{URL: cat, SHA256: "x", EntryCount: 2}}}
	for i := range 2 {
		card := fmt.Sprintf("https://%s/mcp/%d/server-card", d, i)
		remote := fmt.Sprintf("https://%s/mcp/%d", d, i)
		r.Entries = append(r.Entries, EntryRecord{CatalogURL: cat, Identifier: card, URL: card, Raw: []byte(`{}`)})
		r.Cards = append(r.Cards, CardRecord{Key: card, SourceURL: card, SHA256: "y", JSON: []byte(`{}`)})
		r.Remotes = append(r.Remotes, RemoteRecord{URLNorm: remote, URL: remote, CardKey: card, JSON: []byte(`{}`)})
		r.Listings = append(r.Listings, ListingRecord{CatalogURL: cat, Identifier: card, CardKey: card, RemoteNorm: remote})
	}
	return r
}

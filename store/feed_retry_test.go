package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFeedUpkeepSurvivesARetriedBatch: when one write of a shared commit
// fails, the batch is rolled back and every other write runs again alone;
// the read model's upkeep, run inside each write, must then leave exactly
// what the same writes made one by one (records, tombstones and the change
// counter), with nothing carried over from the rolled-back attempt.
func TestFeedUpkeepSurvivesARetriedBatch(t *testing.T) {
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) }
	a, b := benchResult("a.example"), benchResult("b.example")
	a2 := benchResult("a.example") // a re-crawl that lists one server less
	a2.Listings, a2.Remotes = a2.Listings[:1], a2.Remotes[:1]
	writes := []DomainResult{a, b, a2}

	open := func(name string) *DB {
		db, err := Open(ctx, filepath.Join(t.TempDir(), name), Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if _, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, EnqueueOptions{}); err != nil {
			t.Fatal(err)
		}
		return db
	}
	state := func(db *DB) (recs []FeedServer, seq int64) {
		if err := db.EachFeedServer(ctx, FeedQuery{Since: "0"}, func(s *FeedServer) error {
			recs = append(recs, *s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.sql.QueryRow(`SELECT seq FROM feed_state`).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		return recs, seq
	}

	serial := open("serial.db")
	for _, r := range writes {
		if err := serial.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	batched := open("batched.db")
	save := func(r DomainResult) *batchReq {
		capped, _ := capsText(r.Capped)
		return &batchReq{fn: func(tx *txw) error { return saveDomain(tx, r, clock(), capped) }}
	}
	boom := errors.New("boom")
	batch := []*batchReq{save(a), save(b), {fn: func(*txw) error { return boom }}, save(a2)}
	batched.runBatch(batch)
	for i, r := range batch {
		if want := i == 2; errors.Is(r.err, boom) != want || (!want && r.err != nil) {
			t.Fatalf("write %d: %v", i, r.err)
		}
	}

	wantRecs, wantSeq := state(serial)
	gotRecs, gotSeq := state(batched)
	if diff := cmp.Diff(wantRecs, gotRecs, cmp.AllowUnexported(FeedServer{})); diff != "" {
		t.Errorf("read model after a retried batch (-one by one +batched):\n%s", diff)
	}
	if gotSeq != wantSeq {
		t.Errorf("change counter %d, want %d", gotSeq, wantSeq)
	}
	if len(gotRecs) != 4 || !gotRecs[1].Removed() {
		t.Errorf("want 4 records, the second a tombstone; got %+v", gotRecs)
	}
}

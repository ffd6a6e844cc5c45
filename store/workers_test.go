package store_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestLeases: due domains are leased once, a held lease keeps them from
// others, an expired one frees them, saving a result ends the lease, and
// a finished domain comes back when its next_fetch_after passes.
func TestLeases(t *testing.T) { eachDialect(t, testLeases) }

func testLeases(t *testing.T, dsn string) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db := open(t, dsn, c.now)
	all := []string{"a.example", "b.example", "c.example"}
	if n, err := db.AddDomains(ctx, all); err != nil || n != 3 {
		t.Fatalf("AddDomains = %d, %v", n, err)
	}
	if n, err := db.AddDomains(ctx, all[:1]); err != nil || n != 0 {
		t.Fatalf("AddDomains again = %d, %v; want 0 new", n, err)
	}
	for _, w := range []string{"w1", "w2", "w3", "w4"} {
		if err := db.RegisterWorker(ctx, store.Worker{ID: w, Lease: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := db.LeaseDomains(ctx, "w1", 2)
	if err != nil || len(a) != 2 {
		t.Fatalf("w1 leased %v, %v", a, err)
	}
	b, err := db.LeaseDomains(ctx, "w2", 5)
	if err != nil || len(b) != 1 || slices.Contains(a, b[0]) {
		t.Fatalf("w2 leased %v (w1 has %v), %v", b, a, err)
	}
	if held, _ := db.LeasesHeld(ctx, "w1"); held != 2 {
		t.Errorf("w1 holds %d leases, want 2", held)
	}
	// w1 dies: its leases expire, w2 takes them.
	c.add(2 * time.Minute)
	if err := db.Heartbeat(ctx, "w2", 0, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	again, err := db.LeaseDomains(ctx, "w2", 5)
	if err != nil || !cmp.Equal(sorted(again), sorted(a)) {
		t.Fatalf("after w1's leases expired w2 leased %v, want %v (%v)", again, a, err)
	}
	for _, d := range all {
		if err := db.SaveDomain(ctx, store.DomainResult{Domain: d, Outcome: store.OutcomeNoCatalog, Class: "http_404",
			NextFetchAfter: c.now().Add(time.Hour), Definitive: true}); err != nil {
			t.Fatal(err)
		}
	}
	if held, _ := db.LeasesHeld(ctx, "w2"); held != 0 {
		t.Errorf("after saving, w2 still holds %d leases", held)
	}
	if got, _ := db.LeaseDomains(ctx, "w3", 5); len(got) != 0 {
		t.Errorf("fresh domains were leased: %v", got)
	}
	st, err := db.Status(ctx, c.now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := store.Frontier{Domains: 3, Done: 3, NextDueAt: st.Frontier.NextDueAt}
	if diff := cmp.Diff(want, st.Frontier); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	c.add(time.Hour + time.Second)
	if err := db.Heartbeat(ctx, "w3", 0, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.LeaseDomains(ctx, "w3", 5); len(got) != 3 {
		t.Errorf("due again after an hour: leased %v, want all three", got)
	}
	if n, err := db.StopWorker(ctx, "w3", 7); err != nil || n != 3 {
		t.Errorf("StopWorker released %d, %v; want 3", n, err)
	}
	// The stopped worker shows what it crawled in all.
	if st, err := db.Status(ctx, c.now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	} else if i := slices.IndexFunc(st.Workers, func(w store.Worker) bool { return w.ID == "w3" }); i < 0 ||
		st.Workers[i].Crawled != 7 || st.Workers[i].StoppedAt == "" {
		t.Errorf("stopped worker in status: %+v", st.Workers)
	}
	if err := db.Heartbeat(ctx, "w4", 0, false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.LeaseDomains(ctx, "w4", 5); len(got) != 3 {
		t.Errorf("released leases were not free: %v", got)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestLeasesDisjointUnderContention: workers leasing at once never get the
// same domain.
func TestLeasesDisjointUnderContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.NewDB(t)
	db := open(t, dsn, nil)
	var names []string
	for i := range 300 {
		names = append(names, "d"+string(rune('a'+i%26))+time.Duration(i).String()+".example")
	}
	if _, err := db.AddDomains(ctx, names); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			other := open(t, dsn, nil)
			owner := "w" + string(rune('0'+w))
			if err := other.RegisterWorker(ctx, store.Worker{ID: owner, Lease: time.Hour}); err != nil {
				t.Error(err)
				return
			}
			for {
				got, err := other.LeaseDomains(ctx, owner, 7)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					if prev, dup := seen[d]; dup {
						t.Errorf("%s leased by %s and %s", d, prev, owner)
					}
					seen[d] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != len(names) {
		t.Errorf("leased %d domains, want %d", len(seen), len(names))
	}
}

// TestHostGate: one holder per host at a time, a Retry-After keeps
// everyone away until it passes, and a dead holder's lease expires.
func TestHostGate(t *testing.T) { eachDialect(t, testHostGate) }

func testHostGate(t *testing.T, dsn string) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db := open(t, dsn, c.now)
	g1, g2 := db.NewHostGate("w1", time.Minute), db.NewHostGate("w2", time.Minute)
	rel, err := g1.Acquire(ctx, "h.example")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	if _, err := g2.Acquire(short, "h.example"); err == nil {
		t.Error("a second worker took a busy host")
	}
	cancel()
	if rel2, err := g2.Acquire(ctx, "other.example"); err != nil {
		t.Errorf("another host: %v", err)
	} else {
		rel2(0)
	}
	rel(30 * time.Second) // the host said Retry-After: 30
	short, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	if _, err := g2.Acquire(short, "h.example"); err == nil {
		t.Error("a host resting after Retry-After was taken")
	}
	cancel()
	c.add(31 * time.Second)
	rel, err = g2.Acquire(ctx, "h.example")
	if err != nil {
		t.Fatalf("after the wait: %v", err)
	}
	// w2 dies holding it; after the TTL w1 gets it.
	_ = rel
	c.add(2 * time.Minute)
	if rel, err := g1.Acquire(ctx, "h.example"); err != nil {
		t.Fatalf("after a dead holder's TTL: %v", err)
	} else {
		rel(0)
	}
	if n, err := db.SweepHostLeases(ctx); err != nil || n != 0 {
		t.Errorf("sweep = %d, %v; released rows should be gone already", n, err)
	}
}

// TestLeaderAndSchedule: one leader at a time; a schedule runs once per
// period whoever claims it.
func TestLeaderAndSchedule(t *testing.T) { eachDialect(t, testLeaderAndSchedule) }

func testLeaderAndSchedule(t *testing.T, dsn string) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db := open(t, dsn, c.now)
	l, ok, err := db.TryLead(ctx, "sync")
	if err != nil || !ok {
		t.Fatalf("first TryLead = %v, %v", ok, err)
	}
	if db.Shared() {
		other := open(t, dsn, c.now)
		if _, ok, err := other.TryLead(ctx, "sync"); err != nil || ok {
			t.Errorf("second leader at once: %v, %v", ok, err)
		}
		l.Release()
		l2, ok, err := other.TryLead(ctx, "sync")
		if err != nil || !ok {
			t.Errorf("after release: %v, %v", ok, err)
		} else {
			l2.Release()
		}
	}
	for i, step := range []struct {
		after time.Duration
		want  bool
	}{{0, true}, {0, false}, {30 * time.Minute, false}, {31 * time.Minute, true}, {time.Second, false}} {
		c.add(step.after)
		got, err := db.ClaimSchedule(ctx, "registry", "w", time.Hour)
		if err != nil || got != step.want {
			t.Errorf("claim %d = %v, %v; want %v", i, got, err, step.want)
		}
	}
	if err := db.FinishSchedule(ctx, "registry", nil); err != nil {
		t.Fatal(err)
	}
	st, err := db.Status(ctx, c.now().Add(-time.Hour))
	if err != nil || len(st.Schedules) != 1 || st.Schedules[0].Runs != 2 {
		t.Errorf("schedules = %+v, %v", st.Schedules, err)
	}
}

// TestCopyToPostgres: a SQLite database's rows, history included, arrive
// in PostgreSQL, ids continue after the copied ones, and a second copy is
// refused.
func TestCopyToPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := open(t, filepath.Join(t.TempDir(), "x.db"), nil)
	runID, err := src.StartRun(ctx, store.RunStart{Host: "h", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: runID}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := src.AddObservations(ctx, store.Fetched{Observation: store.Observation{RunID: runID, Domain: "a.example", Kind: "catalog",
			URL: "https://a.example/.well-known/ai-catalog.json", FetchedAt: time.Now(), Status: 200,
			SHA256: "sha" + string(rune('0'+i)), Size: 2}, Body: []byte{0, 1, 0xff}}); err != nil {
			t.Fatal(err)
		}
	}
	dsn := pgtest.NewDB(t)
	dst := open(t, dsn, nil)
	stats, err := src.CopyTo(ctx, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats["observations"] != 3 || stats["documents"] != 3 || stats["runs"] != 1 || stats["domains"] != 1 {
		t.Errorf("copied %v", stats)
	}
	body, err := dst.Document(ctx, "sha1")
	if err != nil || !cmp.Equal(body, []byte{0, 1, 0xff}) {
		t.Errorf("document = %v, %v", body, err)
	}
	next, err := dst.StartRun(ctx, store.RunStart{})
	if err != nil || next <= runID {
		t.Errorf("next run id on the copy = %d, %v; want > %d", next, err, runID)
	}
	if _, err := src.CopyTo(ctx, dst, nil); err == nil {
		t.Error("a copy into a database holding data was not refused")
	}
}

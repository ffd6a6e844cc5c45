package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/store"
)

// scheduleNamed is the leader's schedule of that name in a status, zero
// when it never ran.
func scheduleNamed(s store.Status, name string) store.Schedule {
	for _, c := range s.Schedules {
		if c.Name == name {
			return c
		}
	}
	return store.Schedule{}
}

// TestWorkerRecomputes: a worker never ends, so the reconciliation that a
// crawl runs at its end runs on the leader's schedule instead. After a
// Registry sync into an empty database every entry is Registry-only; once
// a worker has crawled the demo's domains, diff pairs their cards with
// the entries, without another sync or a command run by hand.
func TestWorkerRecomputes(t *testing.T) {
	// On SQLite the one worker's crawl and its recomputation share the
	// one writer connection.
	t.Run("sqlite", func(t *testing.T) { testWorkerRecomputes(t, filepath.Join(t.TempDir(), "w.db")) })
	t.Run("postgres", func(t *testing.T) { testWorkerRecomputes(t, pgtest.NewDB(t)) })
}

func testWorkerRecomputes(t *testing.T, dsn string) {
	ctx := context.Background()
	w := newWorkerWeb(t, 0)
	sync := append([]string{"registry", "sync", "--db", dsn, "--url", simweb.DemoRegistryURL}, w.netArgs()...)
	if code, _, stderr := run(t, "", sync...); code != exitOK {
		t.Fatalf("registry sync: exit %d: %s", code, stderr)
	}
	st, status := w.seedFrontier(t, dsn)
	pairs := func() int {
		var n int
		if err := st.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM reconcile_results WHERE kind = 'pair'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := pairs(); n != 0 {
		t.Fatalf("%d pairs before any card was crawled", n)
	}
	worker := startProc(t, append([]string{"worker", "--db", dsn, "--idle", "100ms", "--recompute-every", "200ms",
		"--probe", "never"}, w.netArgs()...)...)
	waitFor(t, "the cards paired with the Registry's entries", 2*time.Minute, func() bool {
		c := scheduleNamed(status(), recomputeSchedule)
		return pairs() > 0 && c.LastDoneAt >= c.LastStartedAt && c.LastError == ""
	})
	if code := worker.stop(t); code != exitOK {
		t.Errorf("worker exit %d; stderr:\n%s", code, worker.stderr.String())
	}
	if c := scheduleNamed(status(), registrySchedule); c.Runs != 0 {
		t.Errorf("the Registry was synced without --registry-every: %+v", c)
	}
}

// TestWorkerRecomputesOnlyAfterChanges: the leader's recomputation runs
// when it is due and the feed changed since its last run, not otherwise.
func TestWorkerRecomputesOnlyAfterChanges(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "w.db"), store.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := &worker{st: st, log: slog.New(slog.NewTextHandler(io.Discard, nil)), id: "test:1:ab"}
	runs := func() int {
		s, err := st.Status(ctx, clock.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return scheduleNamed(s, recomputeSchedule).Runs
	}
	w.recompute(ctx, time.Minute)
	if n := runs(); n != 1 {
		t.Fatalf("first turn: %d runs, want 1", n)
	}
	clock = clock.Add(time.Hour)
	w.recompute(ctx, time.Minute)
	if n := runs(); n != 1 {
		t.Errorf("due, nothing changed: %d runs, want 1", n)
	}
	before, err := st.FeedVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	entry := store.RegistryEntry{Source: "https://registry.example", Name: "example.w/one", Version: "1.0.0", Status: "active",
		ReportedLatest: true, ServerJSON: `{"name":"example.w/one","version":"1.0.0","description":"w",` +
			`"remotes":[{"type":"streamable-http","url":"https://one.w.example/mcp"}]}`}
	if err := st.WriteRegistry(ctx, store.RegistryWrite{Source: entry.Source, Entries: []store.RegistryEntry{entry}}); err != nil {
		t.Fatal(err)
	}
	const u = "https://one.w.example/mcp"
	doc := store.RegistryEntryDoc{Source: entry.Source, Name: entry.Name, Version: entry.Version, ChangedAt: store.FormatTime(clock)}
	if err := st.ReplaceRegistryRemotes(ctx, doc, "sha", []store.RegistryRemote{{URLNorm: u, URL: u, Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	if after, _ := st.FeedVersion(ctx); after == before {
		t.Fatal("the Registry write did not change the feed version")
	}
	w.recompute(ctx, 2*time.Hour)
	if n := runs(); n != 1 {
		t.Errorf("changed, not due: %d runs, want 1", n)
	}
	clock = clock.Add(3 * time.Hour)
	w.recompute(ctx, 2*time.Hour)
	if n := runs(); n != 2 {
		t.Errorf("changed and due: %d runs, want 2", n)
	}
}

package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestCrawlsTakeTurns: a crawl neither leases its domains nor passes the
// workers' host gate, so a second crawler on the same database would crawl
// the same domains and hosts at the same moment. While a crawl runs, a
// crawl, a worker, a bulk probe and the namespaces' checks are refused with exit 3 and one line
// naming it, before anything is written; while a worker runs (a real
// process), a crawl is refused too; once they end, the next one runs.
func TestCrawlsTakeTurns(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testCrawlsTakeTurns(t, filepath.Join(t.TempDir(), "c.db")) })
	t.Run("postgres", func(t *testing.T) { testCrawlsTakeTurns(t, pgtest.NewDB(t)) })
}

func testCrawlsTakeTurns(t *testing.T, dsn string) {
	ctx := context.Background()
	runs := func() int {
		st, err := store.Open(ctx, dsn, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var n int
		if err := st.SQL().QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Another process's crawl, as the database sees it (opening it
	// creates the database).
	other, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, err := other.LockCrawl(ctx, store.CrawlAlone, "crawl, pid 1 on elsewhere since 2026-12-02T10:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"crawl", "--db", dsn, "--domains", "/dev/null"}, // no domains: a broken lock must not reach out
		{"crawl", "--db", dsn, "--revalidate"},
		{"worker", "--db", dsn},
		{"probe", "--registry", "--db", dsn},
		{"namespaces", "--check", "--db", dsn},
	} {
		code, stdout, stderr := run(t, "", args...)
		if code != exitBusy || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "another cardcrawl process is crawling this database (crawl, pid 1 on elsewhere since 2026-12-02T10:00Z)") {
			t.Errorf("%s while a crawl runs: exit %d, stdout %q, stderr %q; want exit %d and one line naming it", args[0], code, stdout, stderr, exitBusy)
		}
	}
	if code, stdout, stderr := run(t, "", "status", "--db", dsn); code != exitOK ||
		!strings.Contains(stdout, "\ncrawling now: crawl, pid 1 on elsewhere since 2026-12-02T10:00Z\n") {
		t.Errorf("status while a crawl runs: exit %d, stdout:\n%s%s", code, stdout, stderr)
	}
	if n := runs(); n != 0 {
		t.Errorf("%d runs recorded by refused commands, want none", n)
	}
	held.Release()

	w := startProc(t, "worker", "--db", dsn)
	waitFor(t, "the worker to start", time.Minute, func() bool {
		s := readStatus(t, dsn)
		return len(s.Workers) == 1 && s.Workers[0].Alive
	})
	code, _, stderr := run(t, "", "crawl", "--db", dsn, "--domains", "/dev/null")
	if code != exitBusy || !strings.Contains(stderr, "(workers: see 'cardcrawl status')") ||
		!strings.Contains(stderr, "cardcrawl domains add") {
		t.Errorf("crawl beside a worker: exit %d, stderr %q; want exit %d naming the workers", code, stderr, exitBusy)
	}
	if code := w.stop(t); code != exitOK {
		t.Fatalf("worker exit %d: %s", code, w.stderr.String())
	}
	if code, _, stderr := run(t, "", "crawl", "--db", dsn, "--domains", "/dev/null"); code != exitOK {
		t.Errorf("crawl once alone: exit %d: %s", code, stderr)
	}
}

// TestCrawlWaits: with --wait a crawl that finds the database held says
// once on stderr what it waits for and runs when the holder ends; one
// whose wait runs out is refused as without it.
func TestCrawlWaits(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "c.db")
	other, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	held, err := other.LockCrawl(ctx, store.CrawlAlone, "crawl, pid 1 on elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "crawl", "--db", dsn, "--domains", "/dev/null", "--wait", "300ms"); code != exitBusy ||
		!strings.Contains(stderr, "waiting up to 300ms for the database, held by crawl, pid 1 on elsewhere") ||
		!strings.Contains(stderr, "another cardcrawl process is crawling this database") {
		t.Errorf("a wait that runs out: exit %d, stderr %q", code, stderr)
	}

	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		e := &env{stdout: io.Discard, stderr: &stderr, stdin: strings.NewReader("")}
		done <- runMain(ctx, e, []string{"crawl", "--db", dsn, "--domains", "/dev/null", "--wait", "1m"})
	}()
	waitFor(t, "the crawl to wait", time.Minute, func() bool { return strings.Contains(stderr.String(), "waiting up to 1m0s") })
	held.Release()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("the waiting crawl: exit %d: %s", code, stderr.String())
		}
	case <-time.After(time.Minute): // a guard against a crawl that never notices, not a wait
		t.Fatal("the waiting crawl did not run once the database was free")
	}
}

package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestCrawlLock: a crawl keeps every other crawler out and says who it is;
// workers share the database with each other and keep crawls out; a lock
// given back (or whose process died: the same descriptor or connection
// closing) lets the next one in. Each handle stands for a process: flock
// and advisory locks conflict between open files and sessions, not only
// between processes.
func TestCrawlLock(t *testing.T) { eachDialect(t, testCrawlLock) }

func testCrawlLock(t *testing.T, dsn string) {
	ctx := context.Background()
	a, b, c := open(t, dsn, nil), open(t, dsn, nil), open(t, dsn, nil)

	busy := func(t *testing.T, db *store.DB, mode store.CrawlMode, wantHolder string) {
		t.Helper()
		l, err := db.LockCrawl(ctx, mode, "other")
		var be *store.CrawlBusyError
		if !errors.As(err, &be) || !errors.Is(err, store.ErrCrawlBusy) {
			l.Release()
			t.Fatalf("LockCrawl(%v) = %v, want busy", mode, err)
		}
		if be.Holder != wantHolder {
			t.Errorf("holder = %q, want %q", be.Holder, wantHolder)
		}
	}
	take := func(t *testing.T, db *store.DB, mode store.CrawlMode, holder string) *store.CrawlLock {
		t.Helper()
		l, err := db.LockCrawl(ctx, mode, holder)
		if err != nil {
			t.Fatalf("LockCrawl(%v, %q): %v", mode, holder, err)
		}
		return l
	}

	// status reads the lock from a read-only handle, as `cardcrawl status` does.
	reader, err := store.Open(ctx, dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	now := func(t *testing.T, want store.CrawlNow) {
		t.Helper()
		s, err := reader.Status(ctx, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if s.Crawl != want {
			t.Errorf("status says %+v, want %+v", s.Crawl, want)
		}
	}
	now(t, store.CrawlNow{})

	crawl := take(t, a, store.CrawlAlone, "crawl, pid 1 on h")
	now(t, store.CrawlNow{Running: true, Holder: "crawl, pid 1 on h"})
	busy(t, b, store.CrawlAlone, "crawl, pid 1 on h")
	busy(t, b, store.CrawlShared, "crawl, pid 1 on h")
	crawl.Release()
	crawl.Release() // twice is harmless

	w1 := take(t, b, store.CrawlShared, "")
	w2 := take(t, c, store.CrawlShared, "")
	busy(t, a, store.CrawlAlone, "") // workers do not say who they are
	now(t, store.CrawlNow{})         // workers are status's own table
	w1.Release()
	busy(t, a, store.CrawlAlone, "")
	w2.Release()

	again := take(t, a, store.CrawlAlone, "crawl, pid 2 on h")
	busy(t, c, store.CrawlShared, "crawl, pid 2 on h")
	again.Release()
	now(t, store.CrawlNow{})

	// A file lock is held while its file is open: its check never fails.
	if !strings.HasPrefix(dsn, "postgres") {
		held := take(t, a, store.CrawlAlone, "crawl, pid 5 on h")
		if err := held.Check(ctx); err != nil {
			t.Errorf("check of a file lock: %v", err)
		}
		held.Release()
		return
	}
	// A PostgreSQL lock lives as long as its session. One that ended under
	// a crawl going on is taken again on a new session when nobody took
	// it meanwhile, and reported lost when somebody did.
	terminate := func(holder string) {
		t.Helper()
		var n int
		if err := b.SQL().QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
			WHERE application_name = ?`, holder).Scan(&n); err != nil || n != 1 {
			t.Fatalf("terminated %d sessions of %q, %v", n, holder, err)
		}
	}
	held := take(t, a, store.CrawlAlone, "crawl, pid 5 on h")
	if err := held.Check(ctx); err != nil {
		t.Fatalf("check of a held lock: %v", err)
	}
	terminate("crawl, pid 5 on h")
	if err := held.Check(ctx); err != nil {
		t.Fatalf("check after the session ended, nobody else waiting: %v", err)
	}
	now(t, store.CrawlNow{Running: true, Holder: "crawl, pid 5 on h"})
	busy(t, b, store.CrawlAlone, "crawl, pid 5 on h")
	terminate("crawl, pid 5 on h")
	other := take(t, b, store.CrawlAlone, "crawl, pid 6 on h")
	if err := held.Check(ctx); !errors.Is(err, store.ErrCrawlLockLost) || errors.Is(err, store.ErrCrawlBusy) ||
		!strings.Contains(err.Error(), "crawl, pid 6 on h") {
		t.Errorf("check after another crawl took the lock: %v, want lost (not busy: it did crawl) to crawl, pid 6", err)
	}
	held.Release()
	now(t, store.CrawlNow{Running: true, Holder: "crawl, pid 6 on h"})
	other.Release()

	// A process that dies holding the lock loses it: on PostgreSQL its
	// session ends (on SQLite its descriptor closes; cmd/cardcrawl's
	// TestKilledCrawlResumes restarts a crawl killed with SIGKILL).
	dead := take(t, c, store.CrawlAlone, "crawl, pid 3 on h")
	defer dead.Release()
	var n int
	if err := b.SQL().QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid, 10000)) FROM pg_stat_activity
		WHERE application_name = 'crawl, pid 3 on h'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminated %d sessions, %v", n, err)
	}
	take(t, b, store.CrawlAlone, "crawl, pid 4 on h").Release()
}

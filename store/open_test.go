package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestConcurrentFirstOpen: several processes (here: separate handles)
// opening one fresh file at the same moment all succeed; migrations ran
// once ("table runs already exists" was the failure).
func TestConcurrentFirstOpen(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "fresh.db")
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				<-start
				db, err := store.Open(context.Background(), path, store.Options{})
				if err == nil {
					err = db.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, opener %d: %v", round, i, err)
			}
		}
		db := open(t, path, nil)
		var n, distinct int
		if err := db.SQL().QueryRow(`SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n != distinct || n == 0 {
			t.Fatalf("round %d: %d migration rows, %d distinct", round, n, distinct)
		}
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestReadOnlyOpen: a read-only open reads a database it may not write
// (chmod 0444), and writes nothing: not the file, not through the handle.
func TestReadOnlyOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, path)
	ro, err := store.Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a 0444 file: %v", err)
	}
	rows, err := ro.Domains(ctx)
	if err != nil || len(rows) != 1 || rows[0].Domain != "a.example" {
		t.Errorf("domains = %+v, %v", rows, err)
	}
	if _, err := ro.Enqueue(ctx, []string{"b.example"}, store.EnqueueOptions{}); err == nil {
		t.Error("a write through a read-only handle succeeded")
	}
	ro.Close()
	if fileHash(t, path) != before {
		t.Error("the read-only open changed the database file")
	}
}

// TestForeignFileRefused: a SQLite file that is not cardcrawl's, or a file
// that is not SQLite at all, is refused for reading and for writing, and
// left exactly as it was (no tables added, journal mode not switched).
func TestForeignFileRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.db")
	other, err := sql.Open("sqlite", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')`); err != nil {
		t.Fatal(err)
	}
	other.Close()
	text := filepath.Join(dir, "readme.db")
	if err := os.WriteFile(text, []byte("hello, this is not a database at all, just some text padding it out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{foreign, text} {
		before := fileHash(t, path)
		for _, ro := range []bool{false, true} {
			db, err := store.Open(ctx, path, store.Options{ReadOnly: ro})
			if err == nil {
				db.Close()
			}
			if !errors.Is(err, store.ErrNotCardcrawl) {
				t.Errorf("Open(%s, read-only %v) = %v, want ErrNotCardcrawl", filepath.Base(path), ro, err)
			}
		}
		if fileHash(t, path) != before {
			t.Errorf("%s changed", filepath.Base(path))
		}
	}
	check, err := sql.Open("sqlite", "file:"+foreign+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	var mode string
	var tables int
	if err := check.QueryRow(`SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'), 1`).Scan(&tables, new(int)); err != nil {
		t.Fatal(err)
	}
	if err := check.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if tables != 1 || mode != "delete" {
		t.Errorf("foreign file now has %d tables and journal mode %q, want 1 and delete", tables, mode)
	}
}

// TestReadOnlyNeedsCurrentSchema: a read-only open does not migrate; it
// says a write command must upgrade the file first, and refuses a file a
// newer cardcrawl migrated.
func TestReadOnlyNeedsCurrentSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db := open(t, path, nil)
	if _, err := db.SQL().Exec(`DELETE FROM schema_migrations WHERE version = (SELECT MAX(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(ctx, path, store.Options{ReadOnly: true}); !errors.Is(err, store.ErrNeedsMigration) {
		t.Errorf("read-only open with a pending migration = %v, want ErrNeedsMigration", err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_future', 'x')`); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		if _, err := store.Open(ctx, path, store.Options{ReadOnly: ro}); !errors.Is(err, store.ErrNewerSchema) {
			t.Errorf("open (read-only %v) of a newer schema = %v, want ErrNewerSchema", ro, err)
		}
	}
}

// TestPostgresSessionSettings: the store's PostgreSQL sessions run without
// JIT compilation, which cost a site page 135 ms of its 214 ms on a small
// database, and without parallel workers, which cost a list page 100 ms of
// its 120; a URL that names either keeps its choice.
func TestPostgresSessionSettings(t *testing.T) {
	dsn := pgtest.NewDB(t)
	for _, tc := range []struct{ setting, store, other string }{
		{"jit", "off", "on"},
		{"max_parallel_workers_per_gather", "0", "2"},
	} {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set(tc.setting, tc.other)
		u.RawQuery = q.Encode()
		for _, c := range []struct{ dsn, want string }{
			{dsn, tc.store},
			{u.String(), tc.other},
		} {
			db := open(t, c.dsn, nil)
			var got string
			if err := db.SQL().QueryRow(`SHOW ` + tc.setting).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: %s = %q, want %q", c.dsn, tc.setting, got, c.want)
			}
		}
	}
}

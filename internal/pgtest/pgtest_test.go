package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// The harness hands out a database on a real server, which runs queries.
func TestNewDB(t *testing.T) {
	u := NewDB(t)
	conn := connect(t, u)
	ctx := context.Background()
	var db string
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_database(), current_setting('server_version_num')::int").Scan(&db, &version); err != nil {
		t.Fatal(err)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if "/"+db != parsed.Path || !strings.Contains(db, "testnewdb") {
		t.Errorf("connected to database %q through %s", db, u)
	}
	if version < 130000 {
		t.Errorf("server version %d: DROP DATABASE … WITH (FORCE) needs 13 or newer", version)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id bigint PRIMARY KEY, name text NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t VALUES (1, 'one'), (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	var names []string
	rows, _ := conn.Query(ctx, "SELECT name FROM t ORDER BY id")
	names, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one", "two"}, names); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// Each test's database is its own, and is dropped when the test ends even
// while a connection to it is still open.
func TestDatabasesAreSeparateAndDropped(t *testing.T) {
	ctx := context.Background()
	var inner string
	// A connection the inner test leaves open: closed only after the drop.
	var leftOpen *pgx.Conn
	t.Cleanup(func() {
		if leftOpen != nil {
			leftOpen.Close(ctx)
		}
	})
	t.Run("inner", func(t *testing.T) {
		var err error
		if leftOpen, err = pgx.Connect(ctx, NewDB(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := leftOpen.Exec(ctx, "CREATE TABLE only_here (x int)"); err != nil {
			t.Fatal(err)
		}
		if err := leftOpen.QueryRow(ctx, "SELECT current_database()").Scan(&inner); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() || inner == "" {
		t.FailNow()
	}
	conn := connect(t, NewDB(t))
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", inner).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test ended", inner)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("another test's table is visible here")
	}
}

// Parallel tests get databases of their own at once.
func TestParallelDatabases(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			conn := connect(t, NewDB(t))
			if _, err := conn.Exec(context.Background(), "CREATE TABLE same_name (x int)"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDBName(t *testing.T) {
	for _, tc := range []struct {
		test string
		want string
	}{
		{"TestStore/Insert_twice", "t42_7_teststore_insert_twice"},
		{"TestÜber/a-b", "t42_7_test_ber_a_b"},
		{strings.Repeat("TestLong", 20), "t42_7_" + strings.Repeat("testlong", 20)[:57]},
		{"Test_/_", "t42_7_test"},
	} {
		if got := dbName(tc.test, 42, 7); got != tc.want || len(got) > 63 {
			t.Errorf("dbName(%q) = %q, want %q", tc.test, got, tc.want)
		}
	}
}

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = fmt.Sprintf(format, a...) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }

func TestSkipOrFail(t *testing.T) {
	missing := fmt.Errorf("%w: initdb, pg_ctl, postgres not found together in PATH", errUnavailable)
	broken := errors.New("CARDCRAWL_TEST_POSTGRES names a server that does not answer")
	for _, tc := range []struct {
		name       string
		err        error
		require    string
		skip, fail string // substrings of the message, "" when that did not happen
	}{
		{"missing: skip", missing, "", "initdb, pg_ctl, postgres not found", ""},
		{"missing, required: fail", missing, "1", "", "CARDCRAWL_REQUIRE_POSTGRES=1"},
		{"missing, other value: skip", missing, "0", "install Debian's postgresql package", ""},
		{"broken: fail", broken, "", "", "does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			skipOrFail(r, tc.err, tc.require)
			if (tc.skip == "") != (r.skipped == "") || !strings.Contains(r.skipped, tc.skip) {
				t.Errorf("skipped with %q, want a skip containing %q", r.skipped, tc.skip)
			}
			if (tc.fail == "") != (r.failed == "") || !strings.Contains(r.failed, tc.fail) {
				t.Errorf("failed with %q, want a failure containing %q", r.failed, tc.fail)
			}
		})
	}
}

func TestFindPrograms(t *testing.T) {
	root := t.TempDir()
	install := func(dir string, progs ...string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	onPath := install(filepath.Join(root, "path"), "initdb", "pg_ctl", "postgres")
	partial := install(filepath.Join(root, "partial"), "initdb", "pg_ctl")
	install(filepath.Join(root, "lib", "9.6", "bin"), "initdb", "pg_ctl", "postgres")
	v15 := install(filepath.Join(root, "lib", "15", "bin"), "initdb", "pg_ctl", "postgres")
	install(filepath.Join(root, "lib", "16", "bin"), "initdb", "postgres") // incomplete
	// Not executable: not a program.
	noexec := install(filepath.Join(root, "noexec"), "initdb", "pg_ctl")
	if err := os.WriteFile(filepath.Join(noexec, "postgres"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	glob := []string{filepath.Join(root, "lib", "*", "bin")}

	for _, tc := range []struct {
		name, path string
		globs      []string
		want       string
	}{
		{"PATH first", partial + string(filepath.ListSeparator) + onPath, glob, onPath},
		{"newest complete version", partial + string(filepath.ListSeparator) + noexec, glob, v15},
		{"nothing", partial, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findPrograms(tc.path, tc.globs)
			if tc.want == "" {
				if !errors.Is(err, errUnavailable) || !strings.Contains(err.Error(), "initdb, pg_ctl, postgres not found together in PATH") {
					t.Errorf("findPrograms = %q, %v; want errUnavailable naming the programs", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("findPrograms = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// BenchmarkNewDB times what every test using the harness pays: a database
// created and dropped.
func BenchmarkNewDB(b *testing.B) {
	NewDB(b) // start the server outside the timing
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		name := dbName(b.Name(), os.Getpid(), int64(1e6+i))
		if err := admin(ctx, started.adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+started.createWith); err != nil {
			b.Fatal(err)
		}
		if err := admin(ctx, started.adminURL, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			b.Fatal(err)
		}
	}
}

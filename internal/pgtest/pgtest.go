// Package pgtest gives tests a real PostgreSQL server and a fresh database per
// test.
//
// With CARDCRAWL_TEST_POSTGRES set to a postgres:// URL (a role allowed to
// create databases), tests use that server. Otherwise the first test that asks
// starts a throwaway cluster for the whole test binary: the PostgreSQL server
// programs are looked up on PATH, then in /usr/lib/postgresql/*/bin (Debian's
// packages), initdb writes a cluster with trust authentication into a
// temporary directory, and the server listens on a Unix socket in that
// directory and on a free port on 127.0.0.1. Main stops it and removes the
// directory when the tests are done. PostgreSQL refuses to run as root, so a
// root process runs the server as the postgres system user.
//
// When no server can be had, tests skip with a message saying what is
// missing, unless CARDCRAWL_REQUIRE_POSTGRES=1 (as in CI), when they fail.
//
// A package using it calls Main from its TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDB(t) // postgres://…/t123_1_testsomething
//		…
//	}
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The environment variables the harness reads.
const (
	// EnvURL names a server to use instead of a throwaway cluster.
	EnvURL = "CARDCRAWL_TEST_POSTGRES"
	// EnvRequire=1 turns "no server, skip" into a failure.
	EnvRequire = "CARDCRAWL_REQUIRE_POSTGRES"
)

// opTimeout bounds one harness operation on the server (connect, create or
// drop a database); a server that takes longer is broken, not slow.
const opTimeout = 30 * time.Second

// The server is one per test binary, so its state is too.
var (
	mainCalled atomic.Bool
	dbSeq      atomic.Int64

	startOnce sync.Once
	started   *server // nil until started, or when starting failed
	startErr  error
	reported  atomic.Bool // whether the start time was logged
)

// server is where the databases are made.
type server struct {
	adminURL string   // a database to connect to for CREATE/DROP DATABASE
	cluster  *cluster // nil when EnvURL named the server
	took     time.Duration
	// createWith ends CREATE DATABASE: copying the template's files is
	// faster for a small database than the WAL-logged copy that is
	// PostgreSQL 15's default, and leaves nothing in shared buffers for the
	// drop to write out.
	createWith string
}

// Main runs the tests, then stops the throwaway cluster if one was started and
// removes its directory. Call it from TestMain.
func Main(m *testing.M) {
	mainCalled.Store(true)
	code := m.Run()
	if started != nil && started.cluster != nil {
		if err := started.cluster.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// NewDB creates an empty database for this test and returns a URL to it. The
// database is dropped when the test ends, even with connections still open.
func NewDB(t testing.TB) string {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("pgtest: the package's TestMain must call pgtest.Main(m), which stops the server after the tests")
	}
	startOnce.Do(func() { started, startErr = start() })
	if startErr != nil {
		skipOrFail(t, startErr, os.Getenv(EnvRequire))
	}
	if started.cluster != nil && reported.CompareAndSwap(false, true) {
		t.Logf("pgtest: started a throwaway PostgreSQL cluster (%s) in %v", started.cluster.bin, started.took.Round(time.Millisecond))
	}

	name := dbName(t.Name(), os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := admin(ctx, started.adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+started.createWith); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		if err := admin(ctx, started.adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u, err := withDatabase(started.adminURL, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// errUnavailable marks why no server can be had (as opposed to a server that
// misbehaves): the reason to skip.
var errUnavailable = errors.New("no PostgreSQL server for the tests")

// skipOrFail ends a test that cannot have a server: a skip naming what is
// missing, or a failure when require is "1" or the cause is not a missing
// server.
func skipOrFail(t testing.TB, err error, require string) {
	t.Helper()
	switch {
	case !errors.Is(err, errUnavailable):
		t.Fatalf("pgtest: %v", err)
	case require == "1":
		t.Fatalf("pgtest: %v (%s=1: a skip would hide these tests)", err, EnvRequire)
	default:
		t.Skipf("pgtest: %v; install Debian's postgresql package, or set %s=postgres://… (%s=1 makes this a failure)",
			err, EnvURL, EnvRequire)
	}
}

// start finds or starts the server for this test binary.
func start() (*server, error) {
	var s *server
	if raw := os.Getenv(EnvURL); raw != "" {
		if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
			return nil, fmt.Errorf("%s=%q: want a postgres:// URL", EnvURL, raw)
		}
		s = &server{adminURL: raw}
	} else {
		begun := time.Now()
		c, err := startCluster(context.Background(), clusterOptions{})
		if err != nil {
			return nil, err
		}
		s = &server{adminURL: c.url("postgres"), cluster: c, took: time.Since(begun)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var version int
	err := withConn(ctx, s.adminURL, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version)
	})
	switch {
	case err != nil && s.cluster == nil:
		err = fmt.Errorf("%s names a server that does not answer: %w", EnvURL, err)
	case err != nil:
		err = fmt.Errorf("the test cluster does not answer: %w", err)
	case version < 130000:
		// DROP DATABASE … WITH (FORCE) came in 13.
		err = fmt.Errorf("%w: PostgreSQL %d is older than 13", errUnavailable, version)
	case version >= 150000:
		s.createWith = " STRATEGY FILE_COPY"
	}
	if err != nil {
		if s.cluster != nil {
			s.cluster.stop()
		}
		return nil, err
	}
	return s, nil
}

// admin runs one statement on its own connection (CREATE DATABASE cannot run
// in a transaction, and tests create databases in parallel).
func admin(ctx context.Context, connURL, sql string) error {
	return withConn(ctx, connURL, func(conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, sql)
		return err
	})
}

func withConn(ctx context.Context, connURL string, f func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return f(conn)
}

// withDatabase returns connURL pointing at another database.
func withDatabase(connURL, name string) (string, error) {
	u, err := url.Parse(connURL)
	if err != nil {
		return "", fmt.Errorf("parse server URL: %w", err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

var notIdent = regexp.MustCompile(`[^a-z0-9]+`)

// dbName makes a database name from the test's, unique across the test
// binaries that may share one server: t<pid>_<seq>_<test name>, at most 63
// bytes (PostgreSQL's limit).
func dbName(test string, pid int, seq int64) string {
	name := fmt.Sprintf("t%d_%d_%s", pid, seq, strings.Trim(notIdent.ReplaceAllString(strings.ToLower(test), "_"), "_"))
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "_")
}

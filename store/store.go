// Package store keeps everything cardcrawl learns in one SQL database: what
// was fetched and when, the documents themselves (by content hash), and the
// catalogs, entries, cards, remotes and probes derived from them.
//
// The store knows SQL, not HTTP. SQLite (modernc.org/sqlite, no cgo) is the
// embedded default; PostgreSQL (pgx) is the shared store for many workers.
// All SQL stays inside this package and is the same for both: statements use
// constructs both databases have (INSERT … ON CONFLICT … DO UPDATE,
// RETURNING, row values, no SQLite-only functions) and `?` placeholders,
// which the PostgreSQL connection rebinds (see dialect.go). Migrations live
// side by side in migrations/sqlite and migrations/postgres under the same
// version names.
//
// Its users do not name *DB: each declares the methods it calls
// (discover.Store, registry.Store, reconcile.Store, namespace.Store,
// revalidate.Documents and Entries, gathered in pipeline.Store), using the
// row types defined here, and store/storetest is the contract both backends
// pass. Booleans are bound as Go bools; timestamps are text in one
// fixed-width UTC format that sorts as text (timeLayout); findings are taken
// and returned as finding.List.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// DB is an open cardcrawl database.
type DB struct {
	sql      *sql.DB
	dialect  *dialect
	name     string // the file path, or the URL without its password
	log      *slog.Logger
	now      func() time.Time
	readOnly bool
	stmts    stmtCache                   // prepared statements of the hot paths (batch.go)
	batch    batcher                     // shared commits of concurrent writers (batch.go)
	written  atomic.Int64                // rows written, for refreshing statistics as they grow (growth.go)
	search   atomic.Pointer[SearchIndex] // the site search's index, when one is attached (searchindex.go)
	// siteWindow, when not 0, is the first window of a filtered site page
	// whatever the dialect (tests: SetSiteWindow).
	siteWindow int
	// facetChunk and facetMost, when not 0, are the first number of
	// candidates a faceted site page reads and the most a whole facet may
	// have (sitefacet.go); tests lower them.
	facetChunk, facetMost int
	// feedPage, when not 0, is how many records a walk of the feed reads
	// at a time (feedReadPage); tests make it small.
	feedPage int
	// split is the one slot of a split read (readFeedSplit); nil when the
	// handle has a single connection.
	split chan struct{}
	// betweenBegins, when not nil, runs between a split read's two
	// begins (tests write there).
	betweenBegins func()
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// Now is the clock; tests inject one. Defaults to time.Now.
	Now func() time.Time
	// ReadOnly opens the file for reading only (SQLite's mode=ro): no
	// migrations, no journal-mode switch, no writes, so read commands work
	// on a file they may not write and never change one. The database must
	// exist and be up to date. On PostgreSQL every transaction is read-only.
	ReadOnly bool
	// MaxConns bounds the connections to PostgreSQL (default 16; one
	// leaves a walk of the whole feed on one connection). A SQLite file
	// opened for writing has one, read-only ReadConns.
	MaxConns int
	// ReadConns is how many connections a ReadOnly open of a SQLite file
	// may read on at once (default and least 2: a whole walk of the feed
	// reads on two); a server answering requests side by side wants more.
	ReadConns int
}

// Errors Open returns for a file it will not use; callers tell the user
// what to do rather than fail as if the run broke.
var (
	// ErrNotCardcrawl: the file is not a SQLite database, or is one that
	// holds someone else's tables. Open changes nothing in it.
	ErrNotCardcrawl = errors.New("not a cardcrawl database")
	// ErrNeedsMigration: a read-only open found migrations not yet applied;
	// a write command applies them.
	ErrNeedsMigration = errors.New("database needs upgrading")
	// ErrNewerSchema: the database was migrated by a newer cardcrawl.
	ErrNewerSchema = errors.New("database is from a newer cardcrawl")
)

// Open opens the database named by dsn: a postgres:// or postgresql:// URL
// (see IsPostgresURL), or else the path of a SQLite file, created unless
// ReadOnly. Pending migrations are applied. A database that is not
// cardcrawl's is refused (ErrNotCardcrawl) before anything is written to it.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if IsPostgresURL(dsn) {
		return openPostgresDB(ctx, dsn, opts)
	}
	return openSQLite(ctx, dsn, opts)
}

// defaultMaxConns is Options.MaxConns' default.
const defaultMaxConns = 16

func openPostgresDB(ctx context.Context, dsn string, opts Options) (*DB, error) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	sdb, err := openPostgres(dsn, opts.ReadOnly, opts.MaxConns)
	if err != nil {
		return nil, err
	}
	name := redactDSN(dsn)
	db := &DB{sql: sdb, dialect: postgresDialect, name: name, log: opts.Logger, now: opts.Now, readOnly: opts.ReadOnly}
	if opts.MaxConns >= 2 {
		db.split = make(chan struct{}, 1)
	}
	if err := db.prepare(ctx, name); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// openSQLite opens the file at path. WAL mode and a busy timeout make
// concurrent readers and a crash at any moment safe: every write is its own
// short transaction.
func openSQLite(ctx context.Context, path string, opts Options) (*DB, error) {
	// The journal mode is not in the DSN: it would be switched on the
	// first connection, before Open has looked at whose file this is.
	//
	// The WAL is checkpointed every 4,000 pages (16 MB at 4 KB pages)
	// rather than SQLite's 1,000: a crawl rewrites the same pages (table
	// ends, index roots, the feed's change counter) in commit after commit,
	// and a checkpoint copies each page once however often it was written,
	// and syncs the files; a quarter of the checkpoints cost less CPU. The
	// WAL file may grow to that size while a writer is open.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)" +
		"&_pragma=wal_autocheckpoint(4000)&_txlock=immediate"
	if opts.ReadOnly {
		dsn = "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	}
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One writer at a time is SQLite's model; a single connection also keeps
	// the busy-retry logic out of the hot path. Readers share it, which is fine
	// at the scale of a crawl.
	sdb.SetMaxOpenConns(1)
	var split chan struct{}
	if opts.ReadOnly {
		// Readers of a WAL database do not wait for each other or for the
		// writer; each connection reads its own snapshot. Two at least: a
		// whole walk of the feed reads on two (readFeedSplit).
		conns := max(opts.ReadConns, 2)
		sdb.SetMaxOpenConns(conns)
		sdb.SetMaxIdleConns(conns)
		split = make(chan struct{}, 1)
	}
	db := &DB{sql: sdb, dialect: sqliteDialect, name: path, log: opts.Logger, now: opts.Now, readOnly: opts.ReadOnly,
		split: split}
	if err := db.prepare(ctx, path); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// prepare checks the database is cardcrawl's and, unless read-only,
// switches a SQLite file to WAL and migrates it.
func (db *DB) prepare(ctx context.Context, path string) error {
	owned, err := db.owned(ctx, db.sql)
	if err != nil {
		if isNotADatabase(err) {
			return fmt.Errorf("%s: %w (not an SQLite file)", path, ErrNotCardcrawl)
		}
		return fmt.Errorf("open database %s: %w", path, err)
	}
	if !owned {
		return fmt.Errorf("%s: %w (it holds other tables; cardcrawl leaves it untouched)", path, ErrNotCardcrawl)
	}
	if db.readOnly {
		return db.checkCurrent(ctx, path)
	}
	if db.dialect == sqliteDialect {
		if err := db.setWAL(ctx); err != nil {
			return fmt.Errorf("open database %s: set WAL mode: %w", path, err)
		}
	}
	return db.migrate(ctx, path)
}

// setWAL switches the file to WAL once. The switch needs the file to
// itself, and SQLite reports a collision (another process opening the same
// fresh file) as SQLITE_BUSY at once, without waiting out busy_timeout, so
// it is retried here for as long as busy_timeout would have waited.
func (db *DB) setWAL(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	wait := 5 * time.Millisecond
	for {
		var mode string
		err := db.sql.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			err = db.sql.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode)
		}
		if err == nil && strings.EqualFold(mode, "wal") {
			return nil
		}
		if err == nil {
			return fmt.Errorf("journal mode stays %s", mode)
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

func isBusy(err error) bool {
	s := err.Error()
	return strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked")
}

// querier is what owned needs: the handle, or a transaction on it.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// owned reports whether the database is empty or holds cardcrawl's schema
// (schema_migrations). It only reads.
func (db *DB) owned(ctx context.Context, q querier) (bool, error) {
	tables, ours, err := db.dialect.tables(ctx, q)
	if err != nil {
		return false, err
	}
	return tables == 0 || ours, nil
}

// isNotADatabase recognises SQLite's answer for a file that is not one
// (SQLITE_NOTADB), which the driver reports only as text.
func isNotADatabase(err error) bool {
	return strings.Contains(err.Error(), "file is not a database")
}

// migrationVersions lists the dialect's embedded migrations in the order
// they apply.
func (d *dialect) migrationVersions() ([]string, error) {
	dir := "migrations/" + d.name + "/"
	names, err := fs.Glob(migrations, dir+"*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(n, dir), ".sql")
	}
	return out, nil
}

// appliedVersions reads schema_migrations; a database without the table
// has none applied.
func (d *dialect) appliedVersions(ctx context.Context, q execer) (map[string]bool, error) {
	if _, ours, err := d.tables(ctx, q); err != nil {
		return nil, err
	} else if !ours {
		return map[string]bool{}, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

// pending compares what is applied with what this build knows: migrations
// still to apply, or ErrNewerSchema when the file has one this build lacks.
func (d *dialect) pending(applied map[string]bool, path string) ([]string, error) {
	known, err := d.migrationVersions()
	if err != nil {
		return nil, err
	}
	var todo []string
	for _, v := range known {
		if !applied[v] {
			todo = append(todo, v)
		}
	}
	for v := range applied {
		if !slices.Contains(known, v) {
			return nil, fmt.Errorf("%s: %w (migration %s is unknown to this build; upgrade cardcrawl)", path, ErrNewerSchema, v)
		}
	}
	return todo, nil
}

// checkCurrent is the read-only open's check: every migration applied.
func (db *DB) checkCurrent(ctx context.Context, path string) error {
	applied, err := db.dialect.appliedVersions(ctx, db.sql)
	if err != nil {
		return fmt.Errorf("open database %s: %w", path, err)
	}
	todo, err := db.dialect.pending(applied, path)
	if err != nil {
		return err
	}
	if len(todo) > 0 {
		return fmt.Errorf("%s: %w (%d migration(s) pending; run a write command such as 'cardcrawl crawl' on it first)",
			path, ErrNeedsMigration, len(todo))
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// SQL exposes the raw handle. Only tests use it, to set up or inspect rows
// the API has no call for; production code goes through methods.
func (db *DB) SQL() *sql.DB { return db.sql }

// Now returns the store's clock reading, in UTC, formatted the way every
// timestamp column holds it.
func (db *DB) Now() string { return ts(db.now()) }

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction, so stored
// times sort correctly as text: RFC3339Nano drops trailing zeros, which
// puts "…:00Z" after "…:00.5Z".
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

// normTime rewrites an RFC 3339 timestamp a caller passes as text (the
// Registry's, for one) into the stored format; "" and text that is not a
// timestamp are kept as they are.
func normTime(s string) string {
	if s == "" {
		return s
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return ts(t)
}

// migrate applies every embedded migration not yet recorded, in file-name
// order, all in one transaction that takes the write lock first (SQLite's
// BEGIN IMMEDIATE, PostgreSQL's pg_advisory_xact_lock) and reads the
// applied set after it, so two processes opening a fresh database at once
// serialise here, and the second finds nothing left to do.
func (db *DB) migrate(ctx context.Context, path string) error {
	tx, err := db.sql.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock in the DSN)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	}
	defer tx.Rollback()
	if db.dialect.lockMigrations != "" {
		if _, err := tx.ExecContext(ctx, db.dialect.lockMigrations); err != nil {
			return fmt.Errorf("migrate %s: lock: %w", path, err)
		}
	}
	// Checked again under the lock: another process may have created
	// tables since prepare looked.
	if owned, err := db.owned(ctx, tx); err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	} else if !owned {
		return fmt.Errorf("%s: %w (it holds other tables; cardcrawl leaves it untouched)", path, ErrNotCardcrawl)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY,
		applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied, err := db.dialect.appliedVersions(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	}
	todo, err := db.dialect.pending(applied, path)
	if err != nil {
		return err
	}
	if len(todo) == 0 {
		return nil // the read transaction ends with the rollback
	}
	for _, version := range todo {
		body, err := migrations.ReadFile("migrations/" + db.dialect.name + "/" + version + ".sql")
		if err != nil {
			return fmt.Errorf("read migration %s: %w", version, err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("apply migration %s: %w", version, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, version, db.Now()); err != nil {
			return fmt.Errorf("record migration %s: %w", version, err)
		}
		db.log.Debug("applying migration", "version", version)
	}
	// The Go steps run on the latest schema, as the code they share with
	// the crawl is written for it.
	for _, version := range todo {
		if step := afterMigration[version]; step != nil {
			if err := step(ctx, db, tx, db.Now()); err != nil {
				return fmt.Errorf("apply migration %s: %w", version, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migrations: %w", err)
	}
	return nil
}

// Package store keeps everything cardcrawl learns in one SQL database: what
// was fetched and when, the documents themselves (by content hash), and the
// catalogs, entries, cards, remotes and probes derived from them.
//
// The store knows SQL, not HTTP. SQLite (modernc.org/sqlite, no cgo) is the
// embedded default, and all SQL stays inside this package so a PostgreSQL
// store for distributed crawls can replace it without touching callers. The
// statements use constructs both databases have (INSERT … ON CONFLICT …
// DO UPDATE, RETURNING, no SQLite-only functions), but a PostgreSQL dialect
// will still need $n placeholders, identity columns for the INTEGER PRIMARY
// KEY ids, bytea for BLOB, and real booleans.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// DB is an open cardcrawl database.
type DB struct {
	sql *sql.DB
	log *slog.Logger
	now func() time.Time
}

// Options configure Open.
type Options struct {
	Logger *slog.Logger
	// Now is the clock; tests inject one. Defaults to time.Now.
	Now func() time.Time
}

// Open opens (creating if needed) the SQLite database at path and applies any
// pending migrations. WAL mode and a busy timeout make concurrent readers and
// a crash at any moment safe: every write is its own short transaction.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One writer at a time is SQLite's model; a single connection also keeps
	// the busy-retry logic out of the hot path. Readers share it, which is fine
	// at the scale of a crawl.
	sdb.SetMaxOpenConns(1)
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db := &DB{sql: sdb, log: opts.Logger, now: opts.Now}
	if err := db.migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
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

// migrate applies every embedded migration not yet recorded, in file-name
// order, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY,
		applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		version := strings.TrimSuffix(strings.TrimPrefix(name, "migrations/"), ".sql")
		var one int
		err := db.sql.QueryRowContext(ctx, `SELECT 1 FROM schema_migrations WHERE version = ?`, version).Scan(&one)
		if err == nil {
			continue
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("check migration %s: %w", version, err)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", version, err)
		}
		tx, err := db.sql.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", version, err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("apply migration %s: %w", version, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, version, db.Now()); err != nil {
			tx.Rollback()
			return fmt.Errorf("record migration %s: %w", version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit migration %s: %w", version, err)
		}
		db.log.Debug("applied migration", "version", version)
	}
	return nil
}

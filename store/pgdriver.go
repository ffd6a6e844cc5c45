package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// openPostgres opens a database/sql handle on PostgreSQL through pgx's
// stdlib driver, wrapped so that every statement the store (or a test
// through SQL()) sends is rebound from `?` to $n, and booleans are bound as
// the integers the schema stores them as. The store's Go code and SQL are
// then the same for both dialects.
func openPostgres(dsn string, readOnly bool, maxConns int) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", redactDSN(dsn), err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	// Stored timestamps are text, but anything PostgreSQL itself prints
	// (status, logs) reads best in UTC.
	cfg.RuntimeParams["timezone"] = "UTC"
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "cardcrawl"
	}
	// The store's statements are keyset pages and one-key reads. On a small
	// or freshly migrated database the planner's guesses for their
	// correlated subqueries pass jit_above_cost, and compiling the plan
	// took 135 ms of a 214 ms site page that runs in 4 ms without it. A URL
	// that sets jit keeps its choice.
	if _, ok := cfg.RuntimeParams["jit"]; !ok {
		cfg.RuntimeParams["jit"] = "off"
	}
	// For the same statements parallel workers cost more than they save:
	// where the planner guessed that few rows pass a filter (a common
	// category), a list page of 2 ms started two workers and took 100-130
	// ms, and a whole export ran 6.7 s against 5.4 s without them
	// (100,000 servers, BENCHMARKS.md). A URL that sets it keeps its choice.
	if _, ok := cfg.RuntimeParams["max_parallel_workers_per_gather"]; !ok {
		cfg.RuntimeParams["max_parallel_workers_per_gather"] = "0"
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	sdb := sql.OpenDB(&rebindConnector{inner: stdlib.GetConnector(*cfg), r: &rebinder{cache: map[string]string{}}})
	sdb.SetMaxOpenConns(maxConns)
	sdb.SetMaxIdleConns(maxConns)
	sdb.SetConnMaxIdleTime(5 * time.Minute)
	return sdb, nil
}

// redactDSN drops a password from a URL for messages.
func redactDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "the PostgreSQL URL"
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

type rebindConnector struct {
	inner driver.Connector
	r     *rebinder
}

func (c *rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{Conn: conn.(*stdlib.Conn), r: c.r}, nil
}

func (c *rebindConnector) Driver() driver.Driver { return c.inner.Driver() }

// rebindConn is pgx's connection with statements rebound on the way in.
// The optional interfaces database/sql looks for are all forwarded.
type rebindConn struct {
	*stdlib.Conn
	r *rebinder
}

func (c *rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(c.r.rebind(query))
}

func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, c.r.rebind(query))
}

func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, c.r.rebind(query), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, c.r.rebind(query), args)
}

// CheckNamedValue binds a bool as 0 or 1: the schema keeps flags in
// integer columns on both databases, and SQLite's driver does the same.
func (c *rebindConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return c.Conn.CheckNamedValue(nv)
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// dialect is what differs between the two databases the store runs on. The
// statements themselves are shared: both take INSERT … ON CONFLICT … DO
// UPDATE, RETURNING, row-value comparisons and the same functions, and
// every text column of the PostgreSQL schema is COLLATE "C", so ORDER BY
// and keyset pagination follow SQLite's byte order on both. Booleans are
// integers and timestamps fixed-width UTC text on both.
type dialect struct {
	name string // "sqlite" or "postgres", also the migrations folder
	// tablesQuery returns (tables, 1 if schema_migrations is one of them):
	// whether a database is empty, cardcrawl's, or someone else's.
	tablesQuery string
	// lockMigrations, run first in the migration transaction, keeps two
	// processes from migrating at once. SQLite's BEGIN IMMEDIATE already
	// does (the DSN asks for it).
	lockMigrations string
	// skipLocked ends a SELECT that picks rows to lease: rows another
	// transaction is leasing right now are passed over instead of waited
	// for. SQLite has one writer at a time, so nothing to skip.
	skipLocked string
	// shared says several processes may use the database at once (leases,
	// host gates and the leader lock matter); SQLite's worker is one
	// process.
	shared bool
	// analyze refreshes the planner's statistics of the tables a crawl
	// grows (growth.go); "" where the planner keeps no plans built from
	// them (SQLite, whose store never runs ANALYZE).
	analyze string
	// strpos names the function giving where a substring first starts in
	// a string (from 1; 0 when absent): same arguments, another name.
	strpos string
	// limitArms orders and limits each arm of a site page's UNION ALL on
	// its own. PostgreSQL does not push the outer ORDER BY and LIMIT into
	// arms made of joins: it computed every server's row, then sorted
	// (107 ms for the first page at 5,858 servers; 8–16 ms with limited
	// arms). SQLite already walks each arm in index order and stops, and
	// limited arms cost it a third more on a search.
	limitArms bool
	// windowPages reads a filtered site page in windows of driving keys
	// (siteWalk): PostgreSQL computed every server's row for a filter on a
	// computed column (0.15–0.39 s a page at 100,000 servers). SQLite
	// walks in index order and stops once the page is full.
	windowPages bool
}

// migrationLockKey is the advisory lock key under which PostgreSQL
// migrations run (an arbitrary constant: "cardcrawl" in ASCII, truncated).
const migrationLockKey = 0x63617264637261

var (
	sqliteDialect = &dialect{
		name:   "sqlite",
		strpos: "instr",
		tablesQuery: `SELECT
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'),
		(SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations')`,
	}
	postgresDialect = &dialect{
		name: "postgres",
		tablesQuery: `SELECT
		(SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()),
		(SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'schema_migrations')`,
		lockMigrations: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, migrationLockKey),
		skipLocked:     ` FOR UPDATE SKIP LOCKED`,
		shared:         true,
		strpos:         "strpos",
		limitArms:      true,
		windowPages:    true,
		// Named, not the whole database: it may hold other applications'
		// tables, which are not this crawl's to sample. documents is
		// read by its key only, and sampling it reads bodies.
		analyze: `ANALYZE domains, observations, catalogs, domain_catalogs, entries, cards, remotes,
		  listings, probes, probe_decisions, probe_meaning, endpoint_tools, feed_servers, server_categories,
		  reconcile_results, namespaces, registry_entries, registry_remotes, registry_gone`,
	}
)

// IsPostgresURL says whether a --db value names a PostgreSQL database
// rather than a SQLite file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Dialect names the database behind db: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect.name }

// Shared says several processes may work on the database at once
// (PostgreSQL): workers then coordinate through leases and locks.
func (db *DB) Shared() bool { return db.dialect.shared }

// rebinder turns the store's `?` placeholders into PostgreSQL's $1, $2, …
// once per distinct statement text; the statements are constants (or a
// bounded family of IN lists), so the cache stays small.
type rebinder struct {
	mu    sync.RWMutex
	cache map[string]string
}

// maxRebindCache bounds the cache should a caller ever build unbounded
// statement texts; past it, statements are rebound every time.
const maxRebindCache = 4096

func (r *rebinder) rebind(q string) string {
	r.mu.RLock()
	out, ok := r.cache[q]
	r.mu.RUnlock()
	if ok {
		return out
	}
	out = rebind(q)
	r.mu.Lock()
	if len(r.cache) < maxRebindCache {
		r.cache[q] = out
	}
	r.mu.Unlock()
	return out
}

// rebind replaces each `?` outside string literals, quoted identifiers and
// comments with $n, and the literals TRUE and FALSE with 1 and 0: the
// statements are written with SQL booleans, and PostgreSQL's schema keeps
// flags as integers, as SQLite's does (bound Go bools are sent as 0/1 by
// the driver wrapper).
func rebind(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
		case isWordByte(c) && (i == 0 || !isWordByte(q[i-1])):
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			switch w := q[i:j]; {
			case strings.EqualFold(w, "TRUE"):
				b.WriteByte('1')
			case strings.EqualFold(w, "FALSE"):
				b.WriteByte('0')
			default:
				b.WriteString(w)
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tables reports whether a database holds any table, and cardcrawl's
// schema_migrations among them. It only reads.
func (d *dialect) tables(ctx context.Context, q querier) (tables int, ours bool, err error) {
	var n int
	if err := q.QueryRowContext(ctx, d.tablesQuery).Scan(&tables, &n); err != nil {
		return 0, false, err
	}
	return tables, n == 1, nil
}

// execer is a handle or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Name is the database as messages name it: the file path, or the URL
// without its password.
func (db *DB) Name() string { return db.name }

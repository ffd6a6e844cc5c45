package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
)

// splitReadTries is how many times a split read tries for two
// transactions at one snapshot before it reads on one: a try fails only
// when a write commits between the two begins, a window of microseconds.
const splitReadTries = 3

// pgSnapshotID is what pg_export_snapshot returns; the id is spliced into
// SET TRANSACTION SNAPSHOT, which takes no parameter.
var pgSnapshotID = regexp.MustCompile(`^[0-9A-Fa-f-]+$`)

// readFeedSplit runs fn with two read-only transactions that see one
// snapshot of the database: a whole walk reads its records on a and their
// listings and facts on b, each connection's work on a core of its own
// (readAheadThrough). A JSONL export of 100,000 servers spent 2.1 s of
// CPU reading records and 1.5 s reading what it attaches to them, one
// after the other on one connection.
//
// b is nil, and fn reads everything on a, for a walk that is not whole
// (a page or a few: the second begin would cost more than it saves); when
// the handle has no second connection to give (a SQLite file opened for
// writing has one); when another split read holds the handle's one slot
// (two walks each holding one connection and waiting for a second could
// wait for ever); when writes kept committing between the two begins; or
// when the two could not be begun.
func (db *DB) readFeedSplit(ctx context.Context, whole bool, fn func(a, b *sql.Tx) error) error {
	onOne := func() error { return db.readFeed(ctx, func(tx *sql.Tx) error { return fn(tx, nil) }) }
	if !whole {
		return onOne()
	}
	select {
	case db.split <- struct{}{}:
		defer func() { <-db.split }()
	default:
		return onOne()
	}
	a, b, end, err := db.beginPair(ctx)
	if err != nil {
		// A server that exports no snapshot (a PostgreSQL standby of some
		// versions) still reads on one connection; any other trouble will
		// meet that read too.
		db.log.Debug("read the feed on one connection", "err", err)
	}
	if a == nil {
		return onOne()
	}
	// Deferred: serve recovers a panic in a walk, and the two
	// connections must go back to the pool then too.
	defer db.stmts.prepareMissing(ctx, db.sql)
	defer end()
	return fn(a, b)
}

// splitReaders are a split read's readers (readFeedSplit): records are
// read on a, and what attaches to them on b, or on a too when b is nil.
func (db *DB) splitReaders(a, b *sql.Tx) (records, attach *readTx) {
	records = db.reader(a)
	if b == nil {
		return records, records
	}
	return records, db.reader(b)
}

// beginPair begins two read-only transactions at one snapshot, or returns
// none after splitReadTries. end rolls both back and gives their
// connections back.
func (db *DB) beginPair(ctx context.Context) (a, b *sql.Tx, end func(), err error) {
	if db.dialect == postgresDialect {
		return db.beginPairPostgres(ctx)
	}
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for range splitReadTries {
		a, b, err := db.tryPairSQLite(ctx, conn)
		if err != nil {
			conn.Close()
			return nil, nil, nil, err
		}
		if a != nil {
			return a, b, func() {
				a.Rollback()
				b.Rollback()
				conn.Close()
			}, nil
		}
	}
	conn.Close()
	return nil, nil, nil, nil
}

// tryPairSQLite begins a on a connection of the pool and b on conn, and
// keeps them when they see one snapshot; none when a write landed between.
//
// SQLite shares no snapshot between connections, but says whether another
// has committed: a connection's data_version moves when a write landed
// since its last read. b's connection reads it, a begins and reads, b
// begins and reads it again: the same number says no write landed from
// b's first read to its snapshot, so a's snapshot, taken in between, is
// the same. A snapshot begins at a transaction's first read, not at BEGIN.
func (db *DB) tryPairSQLite(ctx context.Context, conn *sql.Conn) (a, b *sql.Tx, err error) {
	ro := &sql.TxOptions{ReadOnly: true}
	var before, after, seq int64
	if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&before); err != nil {
		return nil, nil, err
	}
	if a, err = db.sql.BeginTx(ctx, ro); err != nil {
		return nil, nil, err
	}
	if err = a.QueryRowContext(ctx, `SELECT seq FROM feed_state WHERE id = 1`).Scan(&seq); err == nil {
		if db.betweenBegins != nil {
			db.betweenBegins()
		}
		if b, err = conn.BeginTx(ctx, ro); err == nil {
			if err = b.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&after); err == nil && before == after {
				return a, b, nil
			}
			b.Rollback()
		}
	}
	a.Rollback()
	return nil, nil, err
}

// beginPairPostgres begins a repeatable-read transaction, exports its
// snapshot and begins the second in it: PostgreSQL's own way for two
// sessions to read one state (pg_dump's parallel jobs read so).
func (db *DB) beginPairPostgres(ctx context.Context) (a, b *sql.Tx, end func(), err error) {
	opts := &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	if a, err = db.sql.BeginTx(ctx, opts); err != nil {
		return nil, nil, nil, err
	}
	var id string
	if err = a.QueryRowContext(ctx, `SELECT pg_export_snapshot()`).Scan(&id); err == nil && !pgSnapshotID.MatchString(id) {
		err = fmt.Errorf("snapshot id %q", id)
	}
	if err == nil {
		b, err = db.sql.BeginTx(ctx, opts)
	}
	if err != nil {
		a.Rollback()
		return nil, nil, nil, err
	}
	if db.betweenBegins != nil {
		db.betweenBegins()
	}
	if _, err := b.ExecContext(ctx, `SET TRANSACTION SNAPSHOT '`+id+`'`); err != nil {
		a.Rollback()
		b.Rollback()
		return nil, nil, nil, err
	}
	return a, b, func() {
		a.Rollback()
		b.Rollback()
	}, nil
}

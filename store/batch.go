package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// A crawl writes a little for every fetch and every domain, from dozens of
// workers at once. Two things made that cost more CPU than the fetching
// itself: every statement was parsed again on every call, and every write
// was its own commit (SQLite writes each changed page to the WAL once per
// commit, however little changed). Statements are therefore prepared once
// and kept, and concurrent writers share commits: whoever finds no commit
// under way becomes the leader, runs every write queued so far in one
// transaction, and hands the lead to the first writer that queued while it
// worked. Each caller still returns only once its write is committed, so a
// result that was reported saved is on disk as before; a crash loses at
// most writes whose callers were still waiting.

// maxBatch bounds the writes one shared commit takes, so one transaction
// (and the wait of the writers in it) stays short.
const maxBatch = 128

// leaderYields is how many times a commit's leader lets other goroutines
// run before taking the queue. Eight instead of one cut a CPU-bound crawl's
// CPU by ~2 % at 64 in flight (fewer, larger commits: 1,929 → ~1,700 that
// wrote, for 10,000 domains), made no difference above noise at 512, and
// left a crawl waiting on 100 ms round trips as fast (BENCHMARKS.md,
// session 14).
const leaderYields = 8

// errLead tells a queued writer that it leads the next commit.
var errLead = errors.New("lead the next commit")

type batchReq struct {
	fn   func(tx *txw) error
	done chan error
	err  error
}

// batcher is the shared-commit queue; its zero value is ready.
type batcher struct {
	mu    sync.Mutex
	queue []*batchReq
	busy  bool
}

// write runs fn in a transaction shared with other concurrent writes and
// returns once that transaction committed (or fn's own error). fn may run
// twice: when another write of the same batch fails, the batch is rolled
// back and each write is retried alone, so fn must only touch the database.
func (db *DB) write(fn func(tx *txw) error) error {
	b := &db.batch
	r := &batchReq{fn: fn, done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, r)
	if b.busy {
		b.mu.Unlock()
		if err := <-r.done; !errors.Is(err, errLead) {
			return err
		}
		b.mu.Lock()
	}
	b.busy = true
	// Let writers that are about to queue do so: a bigger batch is fewer
	// commits, and a commit costs about the same for one write as for
	// dozens. Yielding, rather than sleeping, waits only while other
	// goroutines have work to do: when the CPU is busy (a crawl that is
	// CPU-bound) writes pile up meanwhile, and when it is idle (a crawl
	// waiting on the network) each yield returns at once and nobody waits.
	for i := 0; i < leaderYields && len(b.queue) < maxBatch; i++ {
		b.mu.Unlock()
		runtime.Gosched()
		b.mu.Lock()
	}
	n := min(len(b.queue), maxBatch)
	batch := b.queue[:n:n]
	b.queue = append([]*batchReq(nil), b.queue[n:]...)
	b.mu.Unlock()

	db.runBatch(batch)

	b.mu.Lock()
	if len(b.queue) > 0 {
		b.queue[0].done <- errLead
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	for _, q := range batch {
		if q != r {
			q.done <- q.err
		}
	}
	return r.err
}

// runBatch commits the batch's writes together, or, when one of them
// fails, each alone, so one write's error is its caller's only.
func (db *DB) runBatch(batch []*batchReq) {
	ctx := context.Background() // callers' writes outlive Ctrl-C: they are complete results
	err := db.inTx(ctx, func(tx *txw) error {
		for _, r := range batch {
			if err := r.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || len(batch) == 1 {
		for _, r := range batch {
			r.err = err
		}
		return
	}
	for _, r := range batch {
		r.err = db.inTx(ctx, r.fn)
	}
}

// inTx runs fn in one transaction whose statements come from the prepared
// cache. The statements met unprepared since the last transaction are
// prepared first, on the handle, while no transaction holds it.
func (db *DB) inTx(ctx context.Context, fn func(tx *txw) error) error {
	db.stmts.prepareMissing(ctx, db.sql)
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(&txw{ctx: ctx, tx: tx, stmts: &db.stmts}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// txw is a transaction whose statements come from the prepared cache.
type txw struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts *stmtCache
	// bound are the cached statements bound to tx so far: a shared commit
	// runs the same few statements many times, and binding one to the
	// transaction allocates and takes locks each time.
	bound map[string]*sql.Stmt
}

// stmt returns query's prepared statement bound to the transaction, or nil
// when it is not prepared yet.
func (t *txw) stmt(query string) *sql.Stmt {
	if t.stmts == nil {
		return nil // a transaction whose statements vary (IN lists): run unprepared
	}
	if st := t.bound[query]; st != nil {
		return st
	}
	st := t.stmts.get(query)
	if st == nil {
		return nil
	}
	if t.bound == nil {
		t.bound = map[string]*sql.Stmt{}
	}
	st = t.tx.StmtContext(t.ctx, st)
	t.bound[query] = st
	return st
}

func (t *txw) exec(query string, args ...any) (sql.Result, error) {
	if st := t.stmt(query); st != nil {
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

func (t *txw) queryRow(query string, args ...any) *sql.Row {
	if st := t.stmt(query); st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}

func (t *txw) query(query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(query); st != nil {
		return st.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

// stmtCache keeps prepared statements for the life of the handle. A
// statement first met inside a transaction runs unprepared there
// (preparing on the handle would wait for the one connection the
// transaction holds) and is prepared on the handle before the next shared
// commit.
type stmtCache struct {
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	missing map[string]bool
}

// get returns query's prepared statement, or nil (and notes it is wanted).
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[query]
	if s == nil {
		if c.missing == nil {
			c.missing = map[string]bool{}
		}
		c.missing[query] = true
	}
	return s
}

// prepareMissing prepares on the handle the statements met since the last
// call. It must not be called while the caller holds a transaction. A
// statement that fails to prepare is left to fail where it is used.
func (c *stmtCache) prepareMissing(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	var todo []string
	for q := range c.missing {
		todo = append(todo, q)
	}
	c.missing = nil
	c.mu.Unlock()
	for _, q := range todo {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if c.m[q] == nil {
			c.m[q] = st
			st = nil
		}
		c.mu.Unlock()
		if st != nil {
			st.Close()
		}
	}
}

// readRow runs a one-row query during a crawl. On SQLite the shared
// commits hold the one connection nearly all the time, so a read outside
// them waits for the commit under way anyway, then pays for a read
// transaction of its own (file locks, the WAL index) for one row; it is
// queued with the writes instead and runs in their transaction, where it
// also sees what they wrote. scan gets sql.ErrNoRows as any Row's Scan
// does and must only read. On PostgreSQL, whose readers do not wait for
// the writer's connection, it runs on its own.
func (db *DB) readRow(ctx context.Context, scan func(*sql.Row) error, query string, args ...any) error {
	if db.dialect != sqliteDialect {
		return scan(db.queryRow(ctx, query, args...))
	}
	var err error
	if werr := db.write(func(tx *txw) error {
		err = scan(tx.queryRow(query, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return nil // an answer, not a failed write
		}
		return err
	}); werr != nil {
		return werr
	}
	return err
}

// queryRow runs a one-row query outside any transaction with a prepared
// statement.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	c := &db.stmts
	c.mu.Lock()
	s := c.m[query]
	c.mu.Unlock()
	if s == nil {
		st, err := db.sql.PrepareContext(ctx, query)
		if err != nil {
			return db.sql.QueryRowContext(ctx, query, args...)
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if c.m[query] == nil {
			c.m[query] = st
		} else {
			st.Close()
		}
		s = c.m[query]
		c.mu.Unlock()
	}
	return s.QueryRowContext(ctx, args...)
}

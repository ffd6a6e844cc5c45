package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"
)

// Worker is one `cardcrawl worker` process as the database knows it.
type Worker struct {
	ID          string `json:"id"`
	Host        string `json:"host"`
	PID         int    `json:"pid"`
	RunID       int64  `json:"runId"`
	StartedAt   string `json:"startedAt"`
	HeartbeatAt string `json:"heartbeatAt"`
	StoppedAt   string `json:"stoppedAt,omitempty"`
	Leader      bool   `json:"leader"`
	Crawled     int    `json:"crawled"`
	// Lease is how long its domain leases last without a heartbeat.
	Lease time.Duration `json:"-"`
	// AliveUntil is the last heartbeat plus the lease: the worker's
	// leases hold until then. Alive says whether that is still ahead.
	AliveUntil string `json:"aliveUntil"`
	Alive      bool   `json:"alive"`
}

// RegisterWorker records a worker as it starts.
func (db *DB) RegisterWorker(ctx context.Context, w Worker) error {
	now := db.Now()
	var run any
	if w.RunID != 0 {
		run = w.RunID
	}
	if _, err := db.sql.ExecContext(ctx, `INSERT INTO workers (id, host, pid, run_id, started_at, heartbeat_at, alive_until)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, w.ID, w.Host, w.PID, run, now, now, ts(db.now().Add(w.Lease))); err != nil {
		return fmt.Errorf("register worker %s: %w", w.ID, err)
	}
	return nil
}

// Heartbeat says the worker is alive, which keeps every domain lease it
// holds for lease from now, and records its progress and whether it leads.
// It writes the worker's own row only.
func (db *DB) Heartbeat(ctx context.Context, id string, crawled int, leader bool, lease time.Duration) error {
	return db.heartbeat(ctx, db.sql, id, crawled, leader, lease)
}

func (db *DB) heartbeat(ctx context.Context, q execer, id string, crawled int, leader bool, lease time.Duration) error {
	now := db.now()
	if _, err := q.ExecContext(ctx, `UPDATE workers SET heartbeat_at = ?, alive_until = ?, crawled = ?, leader = ?
		WHERE id = ?`, ts(now), ts(now.Add(lease)), crawled, leader, id); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	return nil
}

// Heartbeater beats for one worker on a PostgreSQL connection of its own,
// so a busy pool (every domain saving, every request taking its host) can
// never delay the heartbeat past the lease and hand a live worker's domains
// to another. On SQLite, one process, it uses the handle.
type Heartbeater struct {
	db   *DB
	id   string
	conn *sql.Conn
}

// NewHeartbeater returns the heartbeat of worker id; Close it when done.
func (db *DB) NewHeartbeater(id string) *Heartbeater { return &Heartbeater{db: db, id: id} }

// Beat is Heartbeat on the heartbeater's own connection (made again after
// an error).
func (h *Heartbeater) Beat(ctx context.Context, crawled int, leader bool, lease time.Duration) error {
	if !h.db.dialect.shared {
		return h.db.Heartbeat(ctx, h.id, crawled, leader, lease)
	}
	if h.conn == nil {
		c, err := h.db.sql.Conn(ctx)
		if err != nil {
			return fmt.Errorf("heartbeat: %w", err)
		}
		h.conn = c
	}
	err := h.db.heartbeat(ctx, h.conn, h.id, crawled, leader, lease)
	if err != nil {
		h.Close()
	}
	return err
}

// Close gives the connection back.
func (h *Heartbeater) Close() {
	if h.conn != nil {
		h.conn.Close()
		h.conn = nil
	}
}

// StopWorker releases every domain lease the worker still holds (those
// domains are due again at once, for any worker) and records that it
// stopped, with the domains it crawled in all (a run shorter than a
// heartbeat's period would show none otherwise).
func (db *DB) StopWorker(ctx context.Context, id string, crawled int) (released int, err error) {
	res, err := db.sql.ExecContext(ctx, `UPDATE domains SET lease_owner = '' WHERE lease_owner = ?`, id)
	if err != nil {
		return 0, fmt.Errorf("release leases of %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	if _, err := db.sql.ExecContext(ctx, `UPDATE workers SET stopped_at = ?, alive_until = '', leader = 0, crawled = ? WHERE id = ?`,
		db.Now(), crawled, id); err != nil {
		return int(n), fmt.Errorf("stop worker %s: %w", id, err)
	}
	return int(n), nil
}

// unleased is the SQL condition "domains' row is free to lease": nobody
// owns it, or its owner's heartbeat lapsed (killed, hung, cut off). The
// owner's row must be seen to have lapsed, not merely be missing: on
// PostgreSQL a lease statement that meets a row another worker leased
// meanwhile re-checks this condition on the new row but reads workers as
// its statement began, which may be before that worker registered; "no
// live worker owns it" would then hand the domain out twice. Every owner
// registers before it leases (RegisterWorker), and workers rows are never
// deleted (StopWorker ends the heartbeat instead).
const unleased = `(domains.lease_owner = '' OR EXISTS (SELECT 1 FROM workers w
  WHERE w.id = domains.lease_owner AND w.alive_until < ?))`

// Two statements, one per kind of due domain, so each is an index range:
// never-finished ones (pending), then finished ones whose next_fetch_after
// has passed, oldest first. Taking a lease makes the domain pending and
// forgets which run last queued it, so the crawl loop takes it on again.
const (
	leasePending = `UPDATE domains SET lease_owner = ?, queued_run_id = NULL
WHERE domain IN (SELECT domain FROM domains WHERE state = 'pending' AND ` + unleased + `
  LIMIT ?%s)
RETURNING domain`
	leaseDue = `UPDATE domains SET lease_owner = ?, state = 'pending', queued_run_id = NULL
WHERE domain IN (SELECT domain FROM domains WHERE state = 'done' AND next_fetch_after <= ? AND ` + unleased + `
  ORDER BY next_fetch_after LIMIT ?%s)
RETURNING domain`
)

// LeaseDomains leases up to n due domains to owner, a registered worker
// whose heartbeat keeps the leases. On PostgreSQL, rows another worker is
// leasing at this very moment are skipped (FOR UPDATE SKIP LOCKED), so
// workers never wait on each other here and never get the same domain.
func (db *DB) LeaseDomains(ctx context.Context, owner string, n int) ([]string, error) {
	now := ts(db.now())
	out, err := collect(ctx, db.sql, scanString, fmt.Sprintf(leasePending, db.dialect.skipLocked), owner, now, n)
	if err != nil {
		return nil, fmt.Errorf("lease domains: %w", err)
	}
	if len(out) < n {
		more, err := collect(ctx, db.sql, scanString, fmt.Sprintf(leaseDue, db.dialect.skipLocked),
			owner, now, now, n-len(out))
		if err != nil {
			return out, fmt.Errorf("lease domains: %w", err)
		}
		out = append(out, more...)
	}
	return out, nil
}

// LeasesHeld counts the domains owner holds a lease on (leased and not yet
// finished).
func (db *DB) LeasesHeld(ctx context.Context, owner string) (int, error) {
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM domains WHERE lease_owner = ?`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("count leases of %s: %w", owner, err)
	}
	return n, nil
}

// NextDue is when the earliest finished domain becomes due again; ok is
// false when no domain has been finished.
func (db *DB) NextDue(ctx context.Context) (at time.Time, ok bool, err error) {
	var next sql.NullString
	if err := db.sql.QueryRowContext(ctx, `SELECT MIN(next_fetch_after) FROM domains WHERE state = 'done'`).Scan(&next); err != nil {
		return time.Time{}, false, fmt.Errorf("next due domain: %w", err)
	}
	if !next.Valid || next.String == "" {
		return time.Time{}, false, nil
	}
	at, err = time.Parse(time.RFC3339Nano, next.String)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next due domain: %w", err)
	}
	return at, true, nil
}

// AddDomains puts names (already normalised) on the frontier as pending;
// names it already holds are left as they are. It reports how many were
// new. Callers hand over a long list in batches, one transaction each.
func (db *DB) AddDomains(ctx context.Context, names []string) (added int, err error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("add domains: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO domains (domain, added_at, state) VALUES (?, ?, ?)
		ON CONFLICT (domain) DO NOTHING`)
	if err != nil {
		return 0, fmt.Errorf("add domains: %w", err)
	}
	defer stmt.Close()
	now := db.Now()
	for _, d := range names {
		res, err := stmt.ExecContext(ctx, d, now, StatePending)
		if err != nil {
			return 0, fmt.Errorf("add domain %s: %w", d, err)
		}
		n, _ := res.RowsAffected()
		added += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("add domains: %w", err)
	}
	return added, nil
}

// Leadership is the right to run the periodic jobs (the Registry sync):
// one worker at a time holds it. On PostgreSQL it is a session advisory
// lock on a connection of its own, so it ends when that connection does
// (the worker died, the network failed); SQLite has one worker process,
// which always leads.
type Leadership struct {
	conn *sql.Conn // nil on SQLite
	key  int64
}

// TryLead takes the leadership of name if nobody holds it; ok is false
// when another process does.
func (db *DB) TryLead(ctx context.Context, name string) (l *Leadership, ok bool, err error) {
	if !db.dialect.shared {
		return &Leadership{}, true, nil
	}
	h := fnv.New64a()
	h.Write([]byte("cardcrawl.leader." + name))
	key := int64(h.Sum64())
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("leader lock: %w", err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, key).Scan(&ok); err != nil {
		conn.Close()
		return nil, false, fmt.Errorf("leader lock: %w", err)
	}
	if !ok {
		conn.Close()
		return nil, false, nil
	}
	return &Leadership{conn: conn, key: key}, true, nil
}

// Held checks the leadership is still ours: the lock's connection is alive.
func (l *Leadership) Held(ctx context.Context) bool {
	if l.conn == nil {
		return true
	}
	return l.conn.PingContext(ctx) == nil
}

// Release gives the leadership up.
func (l *Leadership) Release() {
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.conn.ExecContext(ctx, `SELECT pg_advisory_unlock(?)`, l.key)
	l.conn.Close()
}

// Schedule is the state of one periodic job.
type Schedule struct {
	Name          string `json:"name"`
	LastStartedAt string `json:"lastStartedAt,omitempty"`
	LastDoneAt    string `json:"lastDoneAt,omitempty"`
	LastWorker    string `json:"lastWorker,omitempty"`
	LastError     string `json:"lastError,omitempty"`
	Runs          int    `json:"runs"`
}

// ClaimSchedule starts a run of the periodic job name for worker when the
// last run started at least every ago, and reports whether the caller
// should run it. The claim is one conditional write, so even two processes
// that both believe they lead cannot start two runs in one period.
func (db *DB) ClaimSchedule(ctx context.Context, name, worker string, every time.Duration) (bool, error) {
	now := db.now()
	var got string
	err := db.sql.QueryRowContext(ctx, `INSERT INTO schedules (name, last_started_at, last_worker, runs) VALUES (?, ?, ?, 1)
		ON CONFLICT (name) DO UPDATE SET last_started_at = excluded.last_started_at, last_worker = excluded.last_worker,
		  runs = schedules.runs + 1
		WHERE schedules.last_started_at <= ?
		RETURNING name`, name, ts(now), worker, ts(now.Add(-every))).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim schedule %s: %w", name, err)
	}
	return true, nil
}

// FinishSchedule records how a run of name ended.
func (db *DB) FinishSchedule(ctx context.Context, name string, runErr error) error {
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE schedules SET last_done_at = ?, last_error = ? WHERE name = ?`,
		db.Now(), msg, name); err != nil {
		return fmt.Errorf("finish schedule %s: %w", name, err)
	}
	return nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Frontier counts the domains by where they stand, as `cardcrawl status`
// shows them. Due and Leased do not overlap; Done are finished and fresh;
// Failing counts those whose last crawl failed (among any of the others).
type Frontier struct {
	Domains      int    `json:"domains"`
	Due          int    `json:"due"`
	Leased       int    `json:"leased"`
	Done         int    `json:"done"`
	Failing      int    `json:"failing"`
	NeverCrawled int    `json:"neverCrawled"`
	NextDueAt    string `json:"nextDueAt,omitempty"`
	// HostsBusy counts hosts with a request in flight or resting after a
	// Retry-After, across all workers.
	HostsBusy int `json:"hostsBusy"`
}

// Status is the frontier, the workers seen since since, and the periodic
// jobs.
type Status struct {
	Frontier Frontier `json:"frontier"`
	// Crawl says whether a crawl holds the database now (LockCrawl).
	Crawl     CrawlNow   `json:"crawl"`
	Workers   []Worker   `json:"workers"`
	Schedules []Schedule `json:"schedules"`
}

// Status reads the state of the frontier and its workers. It counts with
// one pass over the domains table: status is for people and scripts that
// poll, not for the hot path.
func (db *DB) Status(ctx context.Context, since time.Time) (Status, error) {
	var s Status
	now := db.Now()
	f := &s.Frontier
	// free is 1 when the domain is not leased (see unleased).
	err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*),
		COUNT(CASE WHEN free = 1 AND (state = 'pending' OR next_fetch_after <= ?) THEN 1 END),
		COUNT(CASE WHEN free = 0 THEN 1 END),
		COUNT(CASE WHEN free = 1 AND state = 'done' AND next_fetch_after > ? THEN 1 END),
		COUNT(CASE WHEN outcome = 'failed' THEN 1 END),
		COUNT(CASE WHEN last_crawled_at IS NULL THEN 1 END)
		FROM (SELECT state, next_fetch_after, outcome, last_crawled_at,
		  CASE WHEN `+unleased+` THEN 1 ELSE 0 END AS free FROM domains) d`, now, now, now).
		Scan(&f.Domains, &f.Due, &f.Leased, &f.Done, &f.Failing, &f.NeverCrawled)
	if err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	var next sql.NullString
	if err := db.sql.QueryRowContext(ctx, `SELECT MIN(next_fetch_after) FROM domains WHERE state = 'done' AND next_fetch_after > ?`, now).
		Scan(&next); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	f.NextDueAt = next.String
	if s.Crawl, err = db.crawlNow(ctx); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM host_leases WHERE lease_until >= ? OR not_before > ?`, now, now).
		Scan(&f.HostsBusy); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	s.Workers, err = collect(ctx, db.sql, func(rows *sql.Rows) (Worker, error) {
		var w Worker
		var run sql.NullInt64
		err := rows.Scan(&w.ID, &w.Host, &w.PID, &run, &w.StartedAt, &w.HeartbeatAt, &w.StoppedAt, &w.Leader, &w.Crawled, &w.AliveUntil)
		w.RunID = run.Int64
		w.Alive = w.StoppedAt == "" && w.AliveUntil >= now
		return w, err
	}, `SELECT id, host, pid, run_id, started_at, heartbeat_at, stopped_at, leader, crawled, alive_until FROM workers
		WHERE heartbeat_at >= ? ORDER BY started_at, id`, ts(since))
	if err != nil {
		return s, fmt.Errorf("status: workers: %w", err)
	}
	s.Schedules, err = collect(ctx, db.sql, func(rows *sql.Rows) (Schedule, error) {
		var c Schedule
		err := rows.Scan(&c.Name, &c.LastStartedAt, &c.LastDoneAt, &c.LastWorker, &c.LastError, &c.Runs)
		return c, err
	}, `SELECT name, last_started_at, last_done_at, last_worker, last_error, runs FROM schedules ORDER BY name`)
	if err != nil {
		return s, fmt.Errorf("status: schedules: %w", err)
	}
	return s, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
)

// HostGate admits one request at a time per host across every process
// that shares the database, and keeps every process away from a host that
// asked to be left alone (Retry-After). It is a row per busy host in
// host_leases: taking it is one conditional upsert, giving it back one
// delete (or, after a Retry-After, an update that leaves not_before
// behind). A worker that dies holding a host loses it when its lease
// expires (TTL, longer than any request may take).
type HostGate struct {
	db    *DB
	owner string
	ttl   time.Duration
	seq   atomic.Int64
	log   *slog.Logger
}

// maxHostWait caps how long one Retry-After keeps every worker away from a
// host: a hostile value must not park a host for a year.
const maxHostWait = 10 * time.Minute

// Polling bounds while a host is busy: short at first (a typical request
// over loopback or a fast network ends within milliseconds), then at most
// a few times a second per waiting request.
const (
	hostPollMin = 5 * time.Millisecond
	hostPollMax = 250 * time.Millisecond
)

// NewHostGate returns the gate for one worker (owner names it in the
// leases); ttl bounds how long a dead worker can hold a host.
func (db *DB) NewHostGate(owner string, ttl time.Duration) *HostGate {
	return &HostGate{db: db, owner: owner, ttl: ttl, log: db.log}
}

const acquireHost = `INSERT INTO host_leases (host, owner, lease_until, not_before) VALUES (?, ?, ?, '')
ON CONFLICT (host) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
WHERE host_leases.lease_until < ? AND host_leases.not_before <= ?
RETURNING owner`

// Acquire waits until host is free and not resting, takes it, and returns
// the function that gives it back, told how long the host asked to be left
// alone (0 for no wait).
func (g *HostGate) Acquire(ctx context.Context, host string) (release func(wait time.Duration), err error) {
	token := g.owner + "/" + strconv.FormatInt(g.seq.Add(1), 10)
	poll := hostPollMin
	for {
		now := g.db.now()
		var got string
		err := g.db.sql.QueryRowContext(ctx, acquireHost, host, token, ts(now.Add(g.ttl)), ts(now), ts(now)).Scan(&got)
		if err == nil {
			return func(wait time.Duration) { g.release(host, token, wait) }, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("host lease for %s: %w", host, err)
		}
		pause := poll
		var notBefore string
		if err := g.db.sql.QueryRowContext(ctx, `SELECT not_before FROM host_leases WHERE host = ?`, host).Scan(&notBefore); err == nil {
			if t, err := time.Parse(time.RFC3339Nano, notBefore); err == nil && t.After(now) {
				pause = max(pause, t.Sub(now))
			}
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("waiting for %s: %w", host, ctx.Err())
		case <-timer.C:
		}
		poll = min(2*poll, hostPollMax)
	}
}

func (g *HostGate) release(host, token string, wait time.Duration) {
	// The request is over whatever its context says; the row must go.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if wait > 0 {
		_, err = g.db.sql.ExecContext(ctx, `UPDATE host_leases SET owner = '', lease_until = '', not_before = ?
			WHERE host = ? AND owner = ?`, ts(g.db.now().Add(min(wait, maxHostWait))), host, token)
	} else {
		_, err = g.db.sql.ExecContext(ctx, `DELETE FROM host_leases WHERE host = ? AND owner = ?`, host, token)
	}
	if err != nil {
		// The lease expires on its own; other workers wait at most the TTL.
		g.log.Warn("releasing a host lease failed", "host", host, "err", err)
	}
}

// SweepHostLeases deletes host rows that neither hold a request nor ask for
// a wait any more (left by Retry-After, or by workers that died), so the
// table holds only busy and resting hosts.
func (db *DB) SweepHostLeases(ctx context.Context) (int, error) {
	now := db.Now()
	res, err := db.sql.ExecContext(ctx, `DELETE FROM host_leases WHERE lease_until < ? AND not_before < ?`, now, now)
	if err != nil {
		return 0, fmt.Errorf("sweep host leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// A server only the Registry declares has no feed_servers row: when its
// latest probe's meaning changed is kept per endpoint in probe_meaning
// (migration 0012), written with the probe, so its record's updatedAt
// moves on a new outcome as a card record's does (feedMeaning), and a
// re-probe that finds the same does not move it.

// probeMeaning is what a record's meaning holds of its latest probe (the
// probe fields of feedMeaning), as one string to compare.
func probeMeaning(outcome, transport, protocol, serverName, serverVersion string, tools sql.NullInt64, partial bool) string {
	n := ""
	if tools.Valid {
		n = strconv.FormatInt(tools.Int64, 10)
	}
	return strings.Join([]string{outcome, transport, protocol, serverName, serverVersion, n,
		strconv.FormatBool(partial)}, "\x1f")
}

// afterProbeMeaning keeps probe_meaning for a probe just stored, and takes
// a change number when the probe changes what a Registry-only record
// shows: its endpoint is declared by a Registry entry and no listed card
// (a card's record took one in feedAfterProbe when it changed).
func afterProbeMeaning(tx *txw, now string, p ProbeRow, tools sql.NullInt64) error {
	if p.RemoteNorm == "" {
		return nil
	}
	meaning := probeMeaning(p.Outcome, p.Transport, p.Protocol, p.ServerName, p.ServerVersion, tools, partialResult(p.Result))
	if _, err := tx.exec(`INSERT INTO probe_meaning (remote_norm, meaning, changed_at) VALUES (?, ?, ?)
		ON CONFLICT (remote_norm) DO UPDATE SET meaning = excluded.meaning,
		  changed_at = CASE WHEN probe_meaning.meaning = excluded.meaning THEN probe_meaning.changed_at
		                    ELSE excluded.changed_at END`, p.RemoteNorm, meaning, now); err != nil {
		return fmt.Errorf("probe meaning of %s: %w", p.URL, err)
	}
	var registryOnly bool
	if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = ?)
		AND NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0 AND f.key = ? AND f.removed_at IS NULL)`,
		p.RemoteNorm, p.RemoteNorm).Scan(&registryOnly); err != nil {
		return fmt.Errorf("probe meaning of %s: %w", p.URL, err)
	}
	if !registryOnly {
		return nil
	}
	// Its probedAt is shown even when its meaning is the same: the feed's
	// documents changed, so their ETags must.
	var seq int64
	return takeFeedSeq(tx, &seq)
}

// fillProbeMeaning gives a database from before 0012 its probe_meaning:
// each endpoint's probes in order, a page at a time, the meaning of the
// latest and the time of the first probe of its latest run of equal
// meanings (when it last changed, as far as the history tells).
func fillProbeMeaning(ctx context.Context, _ *DB, tx *sql.Tx, _ string) error {
	type probe struct {
		id                int64
		norm, meaning, at string
	}
	type key struct {
		norm string
		id   int64
	}
	var cur probe // the endpoint being walked: its latest meaning, since when
	flush := func() error {
		if cur.norm == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO probe_meaning (remote_norm, meaning, changed_at) VALUES (?, ?, ?)`,
			cur.norm, cur.meaning, cur.at)
		return err
	}
	err := eachPage(feedPage, func(after key) ([]probe, error) {
		return collect(ctx, tx, func(rows *sql.Rows) (probe, error) {
			var p probe
			var outcome, transport, protocol, name, version, result string
			var tools sql.NullInt64
			err := rows.Scan(&p.id, &p.norm, &p.at, &outcome, &transport, &protocol, &name, &version, &tools, &result)
			p.meaning = probeMeaning(outcome, transport, protocol, name, version, tools, partialResult(result))
			return p, err
		}, `SELECT id, remote_norm, probed_at, outcome, transport, protocol, server_name, server_version, tool_count, result
			FROM probes WHERE remote_norm <> '' AND (remote_norm, id) > (?, ?) ORDER BY remote_norm, id LIMIT ?`,
			after.norm, after.id, feedPage)
	}, func(p probe) key { return key{p.norm, p.id} }, func(p probe) error {
		switch {
		case p.norm != cur.norm:
			if err := flush(); err != nil {
				return err
			}
			cur = p
		case p.meaning != cur.meaning:
			cur = p
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("fill probe meanings: %w", err)
	}
	return nil
}

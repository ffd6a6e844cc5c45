package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// A crawl keeps every fetch, probe decision and probe it makes, and every
// version of every document it fetched: a directory re-crawled daily grows
// by its whole frontier's worth of rows every day, though what reads them
// wants mostly the latest. Prune drops the history older than a cutoff
// that nothing reads as current: it keeps, whatever their age, each URL's
// latest fetch and latest fetch with a body (conditional GETs and the 304
// path read them), each endpoint's latest decision, its latest probe, its
// latest ok probe and the probe of its latest decision's run (what is
// pending reads it), and every document a kept fetch, a card or a catalog
// names. Probe counts in the feed (probe_outcomes) keep counting the probes
// pruned. Runs, Registry versions and listings are not touched.

// PruneOptions says what Prune drops.
type PruneOptions struct {
	// Before: history recorded earlier than this may go.
	Before time.Time
	// DryRun counts what would go and changes nothing.
	DryRun bool
	// Progress, when set, hears each step's count as it is done.
	Progress func(step string, rows int64)
}

// PruneResult counts what Prune dropped (or, dry, would drop).
type PruneResult struct {
	Observations  int64 `json:"observations"`
	Decisions     int64 `json:"decisions"`
	Probes        int64 `json:"probes"`
	Documents     int64 `json:"documents"`
	DocumentBytes int64 `json:"documentBytes"` // the bodies' size
}

// pruneRange is how many ids one transaction of a step covers, so a
// prune of years of history holds the database in short writes.
const pruneRange = 5000

// The rows of each table that may go, given the cutoff (?): older, and
// not one that is kept (see above). Each names its table, which the
// statements use unaliased.
const (
	prunableObservation = `observations.fetched_at < ? AND EXISTS (SELECT 1 FROM observations n
		WHERE n.url = observations.url AND n.id > observations.id AND (observations.sha256 = '' OR n.sha256 <> ''))`
	prunableDecision = `probe_decisions.decided_at < ? AND EXISTS (SELECT 1 FROM probe_decisions n
		WHERE n.remote_norm = probe_decisions.remote_norm AND n.id > probe_decisions.id)`
	prunableProbe = `probes.probed_at < ? AND EXISTS (SELECT 1 FROM probes n
		WHERE n.remote_norm = probes.remote_norm AND n.id > probes.id AND (probes.outcome <> 'ok' OR n.outcome = 'ok'))
		AND NOT EXISTS (SELECT 1 FROM probe_decisions d WHERE d.remote_norm = probes.remote_norm
		  AND d.run_id = probes.run_id AND d.id = (SELECT MAX(d2.id) FROM probe_decisions d2 WHERE d2.remote_norm = probes.remote_norm))`
)

// Prune drops (or counts) history older than opts.Before, as said above.
// It writes in short transactions, so an interrupted prune leaves what it
// dropped dropped and can be run again.
func (db *DB) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	var res PruneResult
	cutoff := ts(opts.Before)
	for _, step := range []struct {
		name, table, where string
		n                  *int64
	}{
		{"observations", "observations", prunableObservation, &res.Observations},
		{"decisions", "probe_decisions", prunableDecision, &res.Decisions},
		{"probes", "probes", prunableProbe, &res.Probes},
	} {
		n, err := db.pruneByID(ctx, step.table, step.where, cutoff, opts.DryRun)
		if err != nil {
			return res, fmt.Errorf("prune %s: %w", step.name, err)
		}
		*step.n = n
		if opts.Progress != nil {
			opts.Progress(step.name, n)
		}
	}
	var err error
	if res.Documents, res.DocumentBytes, err = db.pruneDocuments(ctx, cutoff, opts.DryRun); err != nil {
		return res, fmt.Errorf("prune documents: %w", err)
	}
	if opts.Progress != nil {
		opts.Progress("documents", res.Documents)
	}
	if !opts.DryRun && res != (PruneResult{}) {
		// A server's page lists its past probes and fetches, and what serves
		// it is current until the change counter moves.
		if _, err := db.sql.ExecContext(ctx, bumpFeedSeq); err != nil {
			return res, fmt.Errorf("prune: %w", err)
		}
	}
	return res, nil
}

// pruneByID deletes (or counts) the rows of table that where selects, a
// range of ids at a time.
func (db *DB) pruneByID(ctx context.Context, table, where, cutoff string, dry bool) (int64, error) {
	var last sql.NullInt64
	if err := db.sql.QueryRowContext(ctx, `SELECT MAX(id) FROM `+table).Scan(&last); err != nil {
		return 0, err
	}
	var total int64
	for lo := int64(0); lo < last.Int64; lo += pruneRange {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		cond := table + `.id > ? AND ` + table + `.id <= ? AND ` + where
		if dry {
			var n int64
			if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table+` WHERE `+cond, lo, lo+pruneRange, cutoff).
				Scan(&n); err != nil {
				return total, err
			}
			total += n
			continue
		}
		res, err := db.sql.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+cond, lo, lo+pruneRange, cutoff)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// pruneDocuments deletes (or counts) the documents nothing kept names: the
// hashes of the fetches that stay, the cards and the catalogs are gathered
// into a temporary table first, in one transaction, since no index of
// theirs finds a document's readers by hash.
func (db *DB) pruneDocuments(ctx context.Context, cutoff string, dry bool) (n, size int64, err error) {
	create := `CREATE TEMP TABLE prune_kept (sha256 TEXT PRIMARY KEY)`
	if db.dialect != sqliteDialect {
		create = `CREATE TEMP TABLE prune_kept (sha256 TEXT COLLATE "C" PRIMARY KEY) ON COMMIT DROP`
	}
	err = db.inSQLTx(ctx, "documents", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, create); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO prune_kept (sha256)
			SELECT sha256 FROM observations WHERE sha256 <> '' AND NOT (`+prunableObservation+`)
			UNION SELECT sha256 FROM cards UNION SELECT sha256 FROM catalogs`, cutoff); err != nil {
			return err
		}
		const orphan = `NOT EXISTS (SELECT 1 FROM prune_kept k WHERE k.sha256 = documents.sha256)`
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM documents WHERE `+orphan).
			Scan(&n, &size); err != nil {
			return err
		}
		if !dry && n > 0 {
			return deleteOrphanDocuments(ctx, tx, orphan)
		}
		return nil
	})
	if err == nil && db.dialect == sqliteDialect {
		_, err = db.sql.ExecContext(ctx, `DROP TABLE IF EXISTS temp.prune_kept`)
	}
	return n, size, err
}

// deleteOrphanDocuments deletes the documents orphan selects, a range of
// pruneRange hashes at a time: one DELETE of them all gathered every row
// it was to delete first (1 million documents: 60 MB, 3 million: 109 MB).
func deleteOrphanDocuments(ctx context.Context, tx *sql.Tx, orphan string) error {
	for lo := ""; ; {
		var hi sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT MAX(sha256) FROM (SELECT sha256 FROM documents WHERE sha256 > ?
			ORDER BY sha256 LIMIT ?) r`, lo, pruneRange).Scan(&hi); err != nil {
			return err
		}
		if !hi.Valid {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE sha256 > ? AND sha256 <= ? AND `+orphan,
			lo, hi.String); err != nil {
			return err
		}
		lo = hi.String
	}
}

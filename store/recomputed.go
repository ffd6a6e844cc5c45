package store

import (
	"context"
	"fmt"
)

// recomputeInputs moves with every write the recomputation (reconciliation,
// namespaces, categories) may read: the feed's change number with every
// card, listing, endpoint, probe or namespace method a record shows and
// every probe of a Registry remote (afterProbeMeaning), registryFingerprint
// with every Registry write. Each part is one row's read or an index's end.
const recomputeInputs = `SELECT f.db_id || '/' || f.seq || '/' || (` + registryFingerprint + `), f.recomputed
	FROM feed_state f WHERE f.id = 1`

// RecomputeState returns the recomputation's inputs as they are now, as an
// opaque key that moves with every write the recomputation may read, and
// the key MarkRecomputed last recorded.
func (db *DB) RecomputeState(ctx context.Context) (now, marked string, err error) {
	if err := db.sql.QueryRowContext(ctx, recomputeInputs).Scan(&now, &marked); err != nil {
		return "", "", fmt.Errorf("recomputation state: %w", err)
	}
	return now, marked, nil
}

// MarkRecomputed records key (RecomputeState's, with whatever the caller
// adds) as inputs a recomputation found nothing to change in.
func (db *DB) MarkRecomputed(ctx context.Context, key string) error {
	if _, err := db.sql.ExecContext(ctx, `UPDATE feed_state SET recomputed = ? WHERE id = 1`, key); err != nil {
		return fmt.Errorf("mark the recomputation: %w", err)
	}
	return nil
}

// ReconcileKinds counts the stored reconciliation's rows by kind.
func (db *DB) ReconcileKinds(ctx context.Context) (map[string]int, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT kind, COUNT(*) FROM reconcile_results GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("count the reconciliation: %w", err)
	}
	out := map[string]int{}
	err = scanEach(rows, func() error {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return err
		}
		out[kind] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count the reconciliation: %w", err)
	}
	return out, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrNotEmpty: CopyTo's destination already holds data.
var ErrNotEmpty = errors.New("destination database is not empty")

// copyOrder lists tables parents first, for schemas that declare foreign
// keys; tables it does not name are copied after, by name.
var copyOrder = []string{"runs", "domains", "documents", "observations", "catalogs", "entries", "cards", "remotes",
	"listings", "probe_decisions", "probes", "registry_entries", "registry_sync", "reconcile_results", "namespaces"}

// CopyStats is what CopyTo copied, by table.
type CopyStats map[string]int

// CopyTo copies every row of every table of db (history included:
// observations, probes, decisions, runs, all Registry versions) into dst,
// an empty cardcrawl database at the same schema version, typically a
// SQLite file into PostgreSQL. Rows stream from one query per table into
// multi-row inserts, so memory holds one batch; the whole copy is one
// transaction on dst, so an interrupted copy leaves dst empty and can
// simply be run again. progress, when set, hears each batch.
func (db *DB) CopyTo(ctx context.Context, dst *DB, progress func(table string, rows int)) (CopyStats, error) {
	if err := sameSchema(ctx, db, dst); err != nil {
		return nil, err
	}
	tables, err := db.tableNames(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := dst.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	defer tx.Rollback()
	for _, t := range tables {
		if t == "feed_state" {
			continue // every database is born with its identity row; the source's replaces it
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("copy: %s: %w", t, err)
		}
		if n > 0 {
			return nil, fmt.Errorf("%w (%s has %d rows)", ErrNotEmpty, t, n)
		}
	}
	// The copy keeps the source's identity and change counter, so a mirror's
	// ETags stay valid across the move.
	if _, err := tx.ExecContext(ctx, `DELETE FROM feed_state`); err != nil {
		return nil, fmt.Errorf("copy: feed_state: %w", err)
	}
	stats := CopyStats{}
	for _, t := range tables {
		n, err := copyTable(ctx, db, tx, t, progress)
		if err != nil {
			return stats, fmt.Errorf("copy %s: %w", t, err)
		}
		stats[t] = n
		if dst.dialect == postgresDialect {
			if err := resetIdentity(ctx, tx, t); err != nil {
				return stats, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return stats, fmt.Errorf("copy: commit: %w", err)
	}
	return stats, nil
}

func sameSchema(ctx context.Context, a, b *DB) error {
	va, err := a.dialect.appliedVersions(ctx, a.sql)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	vb, err := b.dialect.appliedVersions(ctx, b.sql)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if !maps.Equal(va, vb) {
		return fmt.Errorf("copy: the databases are at different schema versions (%v and %v); open both with this cardcrawl first",
			slices.Sorted(maps.Keys(va)), slices.Sorted(maps.Keys(vb)))
	}
	return nil
}

// tableNames lists cardcrawl's tables (schema_migrations aside: dst has
// its own), parents first.
func (db *DB) tableNames(ctx context.Context) ([]string, error) {
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!'`
	if db.dialect == postgresDialect {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	names, err := collect(ctx, db.sql, scanString, q)
	if err != nil {
		return nil, fmt.Errorf("copy: list tables: %w", err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "schema_migrations" })
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(copyOrder, a), slices.Index(copyOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names, nil
}

// copyBatchParams bounds one insert's parameters (PostgreSQL takes 65535).
const copyBatchParams = 30000

func copyTable(ctx context.Context, src *DB, tx *sql.Tx, table string, progress func(string, int)) (int, error) {
	rows, err := src.sql.QueryContext(ctx, `SELECT * FROM `+table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	kinds, err := columnKinds(ctx, tx, table, cols)
	if err != nil {
		return 0, err
	}
	per := max(1, min(500, copyBatchParams/len(cols)))
	head := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES `
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var batch []any
	total, inBatch := 0, 0
	flush := func() error {
		if inBatch == 0 {
			return nil
		}
		q := head + valueRows(len(cols), inBatch)
		if _, err := tx.ExecContext(ctx, q, batch...); err != nil {
			return err
		}
		total += inBatch
		if progress != nil {
			progress(table, total)
		}
		batch, inBatch = batch[:0], 0
		return nil
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return total, err
		}
		for i, v := range vals {
			batch = append(batch, convertFor(kinds[i], v))
		}
		if inBatch++; inBatch == per {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return total, err
	}
	return total, flush()
}

// valueRows is the VALUES list of a multi-row INSERT of n rows of cols
// columns. On PostgreSQL one statement a row is a round trip a row; rows
// at a time keep within both databases' limits on parameters (under
// copyBatchParams a statement).
func valueRows(cols, n int) string {
	one := `(?` + strings.Repeat(", ?", cols-1) + `)`
	return one + strings.Repeat(", "+one, n-1)
}

// columnKinds reads how dst declares each column ("TEXT", "BYTEA", "INT8",
// …, as the driver names them), so values SQLite stored loosely (text as a
// blob) are bound as what the destination column holds.
func columnKinds(ctx context.Context, tx *sql.Tx, table string, cols []string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+table+` WHERE 1 = 0`)
	if err != nil {
		return nil, fmt.Errorf("the destination's %s differs: %w", table, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = strings.ToUpper(t.DatabaseTypeName())
	}
	return out, nil
}

func convertFor(kind string, v any) any {
	switch x := v.(type) {
	case []byte:
		if kind != "BYTEA" && kind != "BLOB" {
			return string(x)
		}
		return slices.Clone(x)
	case string:
		if kind == "BYTEA" || kind == "BLOB" {
			return []byte(x)
		}
	}
	return v
}

// resetIdentity moves an identity column's sequence past the copied ids,
// so the next insert does not collide with them.
func resetIdentity(ctx context.Context, tx *sql.Tx, table string) error {
	var col sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? AND is_identity = 'YES'`, table).Scan(&col)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy %s: identity: %w", table, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT setval(pg_get_serial_sequence('%s', '%s'), COALESCE(MAX(%s), 1), MAX(%s) IS NOT NULL) FROM %s`,
		table, col.String, col.String, col.String, table)); err != nil {
		return fmt.Errorf("copy %s: identity: %w", table, err)
	}
	return nil
}

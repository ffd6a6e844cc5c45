package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A category pass over every server read 100,000 of them to find the few a
// crawl changed (1.8 s on SQLite). What a listed server's category reads
// is in its feed record (the describing card's text), in its endpoint's
// tool set, in the tool sets counted as common and in the rules. A record
// is rewritten, with the change number of its transaction, whenever its
// text changes, it comes to life or it becomes a tombstone, and a tool set
// is stored with the change number of its time. So while the rules and the
// common sets stay, a pass need read only the records written since the
// last pass began, the endpoints whose tool set was stored since, and the
// Registry's entries (which have no record). The change numbers commit in
// order (every transaction that takes one holds feed_state's row until it
// commits), so a record written after a number was read carries a larger
// one; a tool set stored after it, that number or a larger one.

// CategoryMark returns the mark the last pass that read every change
// recorded (SwapCategoryMark; "" when none) and the change number now.
func (db *DB) CategoryMark(ctx context.Context) (mark string, seq int64, err error) {
	if err := db.sql.QueryRowContext(ctx, `SELECT categorized, seq FROM feed_state WHERE id = 1`).Scan(&mark, &seq); err != nil {
		return "", 0, fmt.Errorf("category mark: %w", err)
	}
	return mark, seq, nil
}

// SwapCategoryMark records mark if the stored one is still old, and says
// whether it did: a pass that another pass overtook leaves its mark out,
// and the next pass reads everything.
func (db *DB) SwapCategoryMark(ctx context.Context, old, mark string) (bool, error) {
	res, err := db.sql.ExecContext(ctx, `UPDATE feed_state SET categorized = ? WHERE id = 1 AND categorized = ?`, mark, old)
	if err != nil {
		return false, fmt.Errorf("category mark: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("category mark: %w", err)
	}
	return n == 1, nil
}

// categorySinceKey is a cursor over the records written since a change
// number, in the order of their index (feed_servers_seq).
type categorySinceKey struct {
	seq  int64
	kind int
	key  string
}

// EachCategorySubjectSince calls fn, as EachCategorySubject does, for the
// listed servers whose feed record was written after change number seq
// (in the order they were written), then for the listed endpoints whose
// tool set was stored at or after it and whose record was not, then for
// every latest Registry entry.
func (db *DB) EachCategorySubjectSince(ctx context.Context, seq int64, fn func(CategorySubject) error) error {
	type since struct {
		s    CategorySubject
		at   categorySinceKey
		live bool
	}
	scan := func(rows *sql.Rows) (since, error) {
		var x since
		var t subjectTools
		err := rows.Scan(append([]any{&x.at.seq, &x.at.kind, &x.at.key, &x.live, &x.s.Name, &x.s.Title, &x.s.Description},
			t.dest()...)...)
		x.s.Kind, x.s.Subject = KindCard, x.at.key
		if x.at.kind == kindEndpoint {
			x.s.Kind = KindEndpoint
		}
		t.into(&x.s)
		return x, err
	}
	err := eachPage(categoryPage, func(after categorySinceKey) ([]since, error) {
		page, err := collect(ctx, db.sql, scan, `SELECT f.seq, f.kind, f.key, f.removed_at IS NULL, f.name, f.title,
			  f.description, t.tool_names, t.tool_count, t.fingerprint,
			  `+storedInputs(`CASE WHEN f.kind = 0 THEN '`+KindEndpoint+`' ELSE '`+KindCard+`' END`, "''", "f.key")+`
			FROM feed_servers f LEFT JOIN endpoint_tools t ON f.kind = 0 AND t.remote_norm = f.key
			WHERE f.seq > ? AND (f.seq, f.kind, f.key) > (?, ?, ?)
			ORDER BY f.seq, f.kind, f.key LIMIT ?`, seq, after.seq, after.kind, after.key, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("category inputs since %d: %w", seq, err)
		}
		return page, nil
	}, func(x since) categorySinceKey { return x.at }, func(x since) error {
		if !x.live {
			return nil // a tombstone: PruneCategoriesSince removes its row
		}
		return fn(x.s)
	})
	if err != nil {
		return err
	}
	err = eachPage(categoryPage, func(after categorySinceKey) ([]since, error) {
		page, err := collect(ctx, db.sql, scan, `SELECT t.seq, 0, t.remote_norm, TRUE, f.name, f.title, f.description,
			  t.tool_names, t.tool_count, t.fingerprint,
			  `+storedInputs(`'`+KindEndpoint+`'`, "''", "t.remote_norm")+`
			FROM endpoint_tools t JOIN feed_servers f ON f.kind = 0 AND f.key = t.remote_norm
			WHERE t.seq >= ? AND (t.seq, t.remote_norm) > (?, ?) AND f.removed_at IS NULL AND f.seq <= ?
			ORDER BY t.seq, t.remote_norm LIMIT ?`, seq, after.seq, after.key, seq, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("category inputs of tool sets since %d: %w", seq, err)
		}
		return page, nil
	}, func(x since) categorySinceKey { return x.at }, func(x since) error { return fn(x.s) })
	if err != nil {
		return err
	}
	return db.eachRegistrySubject(ctx, fn)
}

// PruneCategoriesSince removes the categories of servers whose records
// became tombstones after change number seq, and of Registry entries no
// longer latest: what PruneCategories finds when the rows of every
// tombstone up to seq are gone already.
func (db *DB) PruneCategoriesSince(ctx context.Context, seq int64) (int64, error) {
	var n int64
	for _, q := range []string{
		`DELETE FROM server_categories WHERE kind = '` + KindEndpoint + `' AND registry = '' AND subject IN
		  (SELECT f.key FROM feed_servers f WHERE f.seq > ? AND f.kind = 0 AND f.removed_at IS NOT NULL)`,
		`DELETE FROM server_categories WHERE kind = '` + KindCard + `' AND registry = '' AND subject IN
		  (SELECT f.key FROM feed_servers f WHERE f.seq > ? AND f.kind = 1 AND f.removed_at IS NOT NULL)`,
		pruneRegistryCategories,
	} {
		args := []any{seq}
		if q == pruneRegistryCategories {
			args = nil
		}
		res, err := db.sql.ExecContext(ctx, q, args...)
		if err != nil {
			return n, fmt.Errorf("prune categories since %d: %w", seq, err)
		}
		m, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("prune categories since %d: %w", seq, err)
		}
		n += m
	}
	return n, nil
}

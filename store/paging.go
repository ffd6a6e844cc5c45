package store

import (
	"context"
	"database/sql"
)

// eachPage walks a keyset-paged read: page returns up to size rows after
// a key (the zero key first), fn sees each row once the page's query is
// closed (so fn may use the database: there is one connection), and key
// names a row's place for the next page. Memory holds one page.
func eachPage[T, K any](size int, page func(after K) ([]T, error), key func(T) K, fn func(T) error) error {
	var after K
	for {
		rows, err := page(after)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < size {
			return nil
		}
		after = key(rows[len(rows)-1])
	}
}

// collect runs a query on the handle or a transaction and scans every row
// with scan.
func collect[T any](ctx context.Context, db interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanString(rows *sql.Rows) (string, error) {
	var s string
	err := rows.Scan(&s)
	return s, err
}

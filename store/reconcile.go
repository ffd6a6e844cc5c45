package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ReconcileCard is a stored Server Card as reconciliation sees it: its key,
// its parsed JSON (a marshalled servercard.Card) and the domains that list it.
type ReconcileCard struct {
	Key     string
	JSON    string
	Domains []string // sorted
}

// ReconcileCards reads every card some domain lists now, with the domains
// listing it. A card whose every listing is retired (the domain stopped
// publishing it) is history, not a server, as in Servers.
func (db *DB) ReconcileCards(ctx context.Context) ([]ReconcileCard, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT c.key, c.json FROM cards c
		WHERE EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = 1) ORDER BY c.key`)
	if err != nil {
		return nil, fmt.Errorf("read cards: %w", err)
	}
	var cards []ReconcileCard
	index := map[string]int{}
	for rows.Next() {
		var c ReconcileCard
		if err := rows.Scan(&c.Key, &c.JSON); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read cards: %w", err)
		}
		index[c.Key] = len(cards)
		cards = append(cards, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read cards: %w", err)
	}
	rows, err = db.sql.QueryContext(ctx, `SELECT DISTINCT card_key, domain FROM listings WHERE active = 1 ORDER BY card_key, domain`)
	if err != nil {
		return nil, fmt.Errorf("read listings: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key, domain string
		if err := rows.Scan(&key, &domain); err != nil {
			return nil, fmt.Errorf("read listings: %w", err)
		}
		if i, ok := index[key]; ok {
			cards[i].Domains = append(cards[i].Domains, domain)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read listings: %w", err)
	}
	return cards, nil
}

// ReconcileRow is one reconciliation result: a matched pair (Kind "pair"),
// a card no Registry entry matched ("card_only"), or a latest Registry
// entry no card matched ("registry_only"). Diffs is a JSON array.
type ReconcileRow struct {
	Kind       string
	CardKey    string
	CardName   string
	Source     string
	Name       string
	Version    string
	Status     string
	Basis      string
	Detail     string
	Diffs      string
	ComputedAt string
}

// ReplaceReconcile swaps the whole result set in one transaction, so readers
// see either the old or the new reconciliation, never a mix.
func (db *DB) ReplaceReconcile(ctx context.Context, rows []ReconcileRow) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM reconcile_results`); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO reconcile_results (kind, card_key, card_name, source, name,
  version, status, basis, detail, diffs, computed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	defer stmt.Close()
	now := db.Now()
	for _, r := range rows {
		if r.Diffs == "" {
			r.Diffs = "[]"
		}
		if _, err := stmt.ExecContext(ctx, r.Kind, r.CardKey, r.CardName, r.Source, r.Name, r.Version, r.Status, r.Basis,
			r.Detail, r.Diffs, now); err != nil {
			return fmt.Errorf("save reconciliation: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	return nil
}

// ReconcileResults returns the stored reconciliation in insertion order.
func (db *DB) ReconcileResults(ctx context.Context) ([]ReconcileRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT kind, card_key, card_name, source, name, version, status, basis, detail,
  diffs, computed_at FROM reconcile_results ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read reconciliation: %w", err)
	}
	defer rows.Close()
	var out []ReconcileRow
	for rows.Next() {
		var r ReconcileRow
		if err := rows.Scan(&r.Kind, &r.CardKey, &r.CardName, &r.Source, &r.Name, &r.Version, &r.Status, &r.Basis, &r.Detail,
			&r.Diffs, &r.ComputedAt); err != nil {
			return nil, fmt.Errorf("read reconciliation: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read reconciliation: %w", err)
	}
	return out, nil
}

// NamespaceRow is what is known about one namespace. Result is JSON; Method
// and CheckedAt are "" until a check ran.
type NamespaceRow struct {
	Namespace string
	Kind      string
	Domain    string
	Method    string
	Result    string
	CheckedAt string
}

// SaveNamespaces upserts namespace rows. A row with CheckedAt "" (only
// classified, not checked) never overwrites an earlier check's outcome.
func (db *DB) SaveNamespaces(ctx context.Context, rows []NamespaceRow) error {
	return db.saveNamespaces(ctx, rows, false)
}

// ReplaceNamespaces saves rows as SaveNamespaces does and, in the same
// transaction, removes every other namespace: one no card a domain lists
// and no Registry entry names any more is not a namespace to show.
func (db *DB) ReplaceNamespaces(ctx context.Context, rows []NamespaceRow) error {
	return db.saveNamespaces(ctx, rows, true)
}

func (db *DB) saveNamespaces(ctx context.Context, rows []NamespaceRow, replace bool) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	defer tx.Rollback()
	if replace {
		if err := deleteOtherNamespaces(ctx, tx, rows); err != nil {
			return fmt.Errorf("save namespaces: %w", err)
		}
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO namespaces (namespace, kind, domain, method, result, checked_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (namespace) DO UPDATE SET kind = excluded.kind, domain = excluded.domain,
  method = CASE WHEN excluded.checked_at = '' THEN namespaces.method ELSE excluded.method END,
  result = CASE WHEN excluded.checked_at = '' THEN namespaces.result ELSE excluded.result END,
  checked_at = CASE WHEN excluded.checked_at = '' THEN namespaces.checked_at ELSE excluded.checked_at END`)
	if err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	defer stmt.Close()
	for _, r := range rows {
		if r.Result == "" {
			r.Result = "{}"
		}
		if _, err := stmt.ExecContext(ctx, r.Namespace, r.Kind, r.Domain, r.Method, r.Result, r.CheckedAt); err != nil {
			return fmt.Errorf("save namespace %s: %w", r.Namespace, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	return nil
}

// deleteOtherNamespaces removes the stored namespaces rows does not name.
// Usually few go at a time, so they are found in Go and deleted one by one.
func deleteOtherNamespaces(ctx context.Context, tx *sql.Tx, rows []NamespaceRow) error {
	keep := make(map[string]bool, len(rows))
	for _, r := range rows {
		keep[r.Namespace] = true
	}
	stored, err := tx.QueryContext(ctx, `SELECT namespace FROM namespaces`)
	if err != nil {
		return err
	}
	var gone []string
	for stored.Next() {
		var ns string
		if err := stored.Scan(&ns); err != nil {
			stored.Close()
			return err
		}
		if !keep[ns] {
			gone = append(gone, ns)
		}
	}
	stored.Close()
	if err := stored.Err(); err != nil {
		return err
	}
	for _, ns := range gone {
		if _, err := tx.ExecContext(ctx, `DELETE FROM namespaces WHERE namespace = ?`, ns); err != nil {
			return err
		}
	}
	return nil
}

// Namespaces returns every stored namespace row, by name.
func (db *DB) Namespaces(ctx context.Context) ([]NamespaceRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT namespace, kind, domain, method, result, checked_at FROM namespaces ORDER BY namespace`)
	if err != nil {
		return nil, fmt.Errorf("read namespaces: %w", err)
	}
	defer rows.Close()
	var out []NamespaceRow
	for rows.Next() {
		var r NamespaceRow
		if err := rows.Scan(&r.Namespace, &r.Kind, &r.Domain, &r.Method, &r.Result, &r.CheckedAt); err != nil {
			return nil, fmt.Errorf("read namespaces: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read namespaces: %w", err)
	}
	return out, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// RegistryEntry is one stored server version from a registry. Timestamps are
// RFC 3339 text ("" when absent), stored in the store's fixed-width UTC
// format whatever precision the Registry sent; JSON columns are text.
type RegistryEntry struct {
	Source          string
	Name            string
	Version         string
	Status          string
	StatusMessage   string
	StatusChangedAt string
	PublishedAt     string
	UpdatedAt       string
	ReportedLatest  bool // the Registry's isLatest as last received
	IsLatest        bool // recomputed locally across all stored versions
	Schema          string
	ServerJSON      string
	Meta            string
	Findings        finding.List
	// JudgedBy is the version of the validator that produced Findings
	// (registry.RulesVersion).
	JudgedBy  string
	FirstSeen string
	LastSeen  string
	ChangedAt string
}

// RegistryVersion is what the local "latest" election looks at: the
// Registry's choice depends on when versions were published and when their
// status last changed.
type RegistryVersion struct {
	Version         string
	Status          string
	PublishedAt     string
	StatusChangedAt string
	UpdatedAt       string
	ReportedLatest  bool
}

// RegistrySyncState is the progress of syncing one registry.
type RegistrySyncState struct {
	Source         string
	Watermark      string // updated_since for the next delta; "" forces a full sweep
	SweepKind      string // "full" or "delta" while a sweep is in progress, else ""
	SweepSince     string
	SweepStartedAt string
	Cursor         string
	Pages          int
	Entries        int
	LastFullAt     string
	LastDoneAt     string
	LastError      string
}

// RegistryWrite is one batch of entries, written in one transaction together
// with the sync progress it represents, so an interruption can never leave
// the cursor ahead of (or behind) the stored entries.
type RegistryWrite struct {
	Source  string
	Entries []RegistryEntry
	// State, when non-nil, is saved in the same transaction.
	State *RegistrySyncState
	// PickLatest elects the latest version of one name from all its stored
	// versions; nil keeps the Registry's reported flags.
	PickLatest func(versions []RegistryVersion) string
}

const upsertRegistryEntry = `INSERT INTO registry_entries (source, name, version, status, status_message,
  status_changed_at, published_at, updated_at, reported_latest, is_latest, schema, server_json, meta,
  findings, first_seen, last_seen, changed_at, judged_by)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source, name, version) DO UPDATE SET
  changed_at = CASE WHEN registry_entries.server_json <> excluded.server_json
      OR registry_entries.status <> excluded.status
      OR registry_entries.status_message <> excluded.status_message
      OR registry_entries.updated_at <> excluded.updated_at
      OR registry_entries.reported_latest <> excluded.reported_latest
    THEN excluded.changed_at ELSE registry_entries.changed_at END,
  status = excluded.status,
  status_message = excluded.status_message,
  status_changed_at = excluded.status_changed_at,
  published_at = excluded.published_at,
  updated_at = excluded.updated_at,
  reported_latest = excluded.reported_latest,
  schema = excluded.schema,
  server_json = excluded.server_json,
  meta = excluded.meta,
  findings = excluded.findings,
  judged_by = excluded.judged_by,
  last_seen = excluded.last_seen`

// WriteRegistry upserts a batch of entries on (source, name, version),
// re-elects the latest version of every name the batch touches, and saves
// the sync state, all in one transaction.
func (db *DB) WriteRegistry(ctx context.Context, w RegistryWrite) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write registry entries: %w", err)
	}
	defer tx.Rollback()
	now := db.Now()
	if len(w.Entries) > 0 {
		stmt, err := tx.PrepareContext(ctx, upsertRegistryEntry)
		if err != nil {
			return fmt.Errorf("write registry entries: %w", err)
		}
		for _, e := range w.Entries {
			if e.Meta == "" {
				e.Meta = "{}"
			}
			findings, err := findingsText(e.Findings)
			if err != nil {
				stmt.Close()
				return err
			}
			if _, err := stmt.ExecContext(ctx, w.Source, e.Name, e.Version, e.Status, e.StatusMessage,
				normTime(e.StatusChangedAt), normTime(e.PublishedAt), normTime(e.UpdatedAt), e.ReportedLatest,
				e.ReportedLatest, e.Schema, e.ServerJSON, e.Meta, findings, now, now, now, e.JudgedBy); err != nil {
				stmt.Close()
				return fmt.Errorf("write registry entry %s %s: %w", e.Name, e.Version, err)
			}
		}
		stmt.Close()
		if w.PickLatest != nil {
			if err := electLatest(ctx, tx, w.Source, w.Entries, w.PickLatest); err != nil {
				return err
			}
		}
	}
	if w.State != nil {
		if err := saveSyncState(ctx, tx, *w.State, now); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write registry entries: %w", err)
	}
	db.grew(ctx, len(w.Entries))
	return nil
}

// electLatest loads all stored versions of the touched names in chunks (one
// query per chunk, not per name) and flips is_latest where the election
// disagrees with what is stored.
func electLatest(ctx context.Context, tx *sql.Tx, source string, entries []RegistryEntry, pick func([]RegistryVersion) string) error {
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		if !seen[e.Name] {
			seen[e.Name] = true
			names = append(names, e.Name)
		}
	}
	type row struct {
		RegistryVersion
		isLatest bool
	}
	const chunk = 200
	upd, err := tx.PrepareContext(ctx, `UPDATE registry_entries SET is_latest = ? WHERE source = ? AND name = ? AND version = ?`)
	if err != nil {
		return fmt.Errorf("elect latest: %w", err)
	}
	defer upd.Close()
	for start := 0; start < len(names); start += chunk {
		part := names[start:min(start+chunk, len(names))]
		args := make([]any, 0, len(part)+1)
		args = append(args, source)
		for _, n := range part {
			args = append(args, n)
		}
		q := `SELECT name, version, status, published_at, status_changed_at, updated_at, reported_latest, is_latest FROM registry_entries
			WHERE source = ? AND name IN (?` + strings.Repeat(", ?", len(part)-1) + `)`
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("elect latest: %w", err)
		}
		byName := map[string][]row{}
		for rows.Next() {
			var name string
			var r row
			if err := rows.Scan(&name, &r.Version, &r.Status, &r.PublishedAt, &r.StatusChangedAt, &r.UpdatedAt, &r.ReportedLatest, &r.isLatest); err != nil {
				rows.Close()
				return fmt.Errorf("elect latest: %w", err)
			}
			byName[name] = append(byName[name], r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("elect latest: %w", err)
		}
		for _, name := range part {
			rs := byName[name]
			vs := make([]RegistryVersion, len(rs))
			for i, r := range rs {
				vs[i] = r.RegistryVersion
			}
			winner := pick(vs)
			for _, r := range rs {
				want := r.Version == winner
				if want == r.isLatest {
					continue
				}
				if _, err := upd.ExecContext(ctx, want, source, name, r.Version); err != nil {
					return fmt.Errorf("elect latest for %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

func saveSyncState(ctx context.Context, tx *sql.Tx, s RegistrySyncState, now string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO registry_sync (source, watermark, sweep_kind, sweep_since,
  sweep_started_at, cursor, pages, entries, last_full_at, last_done_at, last_error, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (source) DO UPDATE SET watermark = excluded.watermark, sweep_kind = excluded.sweep_kind,
  sweep_since = excluded.sweep_since, sweep_started_at = excluded.sweep_started_at, cursor = excluded.cursor,
  pages = excluded.pages, entries = excluded.entries, last_full_at = excluded.last_full_at,
  last_done_at = excluded.last_done_at, last_error = excluded.last_error, updated_at = excluded.updated_at`,
		s.Source, normTime(s.Watermark), s.SweepKind, normTime(s.SweepSince), normTime(s.SweepStartedAt), s.Cursor,
		s.Pages, s.Entries, normTime(s.LastFullAt), normTime(s.LastDoneAt), s.LastError, now)
	if err != nil {
		return fmt.Errorf("save sync state for %s: %w", s.Source, err)
	}
	return nil
}

// SaveRegistrySyncState records sync progress on its own (for example the
// error that stopped a sweep).
func (db *DB) SaveRegistrySyncState(ctx context.Context, s RegistrySyncState) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save sync state: %w", err)
	}
	defer tx.Rollback()
	if err := saveSyncState(ctx, tx, s, db.Now()); err != nil {
		return err
	}
	return tx.Commit()
}

// RegistrySyncState returns the stored progress for source; a registry never
// synced yields a zero state with only Source set.
func (db *DB) RegistrySyncState(ctx context.Context, source string) (RegistrySyncState, error) {
	s := RegistrySyncState{Source: source}
	err := db.sql.QueryRowContext(ctx, `SELECT watermark, sweep_kind, sweep_since, sweep_started_at, cursor,
  pages, entries, last_full_at, last_done_at, last_error FROM registry_sync WHERE source = ?`, source).Scan(
		&s.Watermark, &s.SweepKind, &s.SweepSince, &s.SweepStartedAt, &s.Cursor, &s.Pages, &s.Entries,
		&s.LastFullAt, &s.LastDoneAt, &s.LastError)
	if errors.Is(err, sql.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read sync state for %s: %w", source, err)
	}
	return s, nil
}

// RegistryFilter selects stored entries; zero values select everything.
type RegistryFilter struct {
	Source     string
	Name       string
	LatestOnly bool
}

const registryColumns = `source, name, version, status, status_message, status_changed_at, published_at, updated_at,
  reported_latest, is_latest, schema, server_json, meta, findings, judged_by, first_seen, last_seen, changed_at`

func scanRegistryEntry(rows *sql.Rows) (RegistryEntry, error) {
	var e RegistryEntry
	err := rows.Scan(&e.Source, &e.Name, &e.Version, &e.Status, &e.StatusMessage, &e.StatusChangedAt,
		&e.PublishedAt, &e.UpdatedAt, &e.ReportedLatest, &e.IsLatest, &e.Schema, &e.ServerJSON, &e.Meta,
		findingsScan{&e.Findings}, &e.JudgedBy, &e.FirstSeen, &e.LastSeen, &e.ChangedAt)
	return e, err
}

// RegistryEntries returns stored entries ordered by source, name, version
// (tests and small tools; a listing streams with EachRegistryEntry).
func (db *DB) RegistryEntries(ctx context.Context, f RegistryFilter) ([]RegistryEntry, error) {
	var out []RegistryEntry
	err := db.EachRegistryEntry(ctx, f, func(e RegistryEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// registryWhere is the condition f sets on registry_entries, and its
// arguments.
func registryWhere(f RegistryFilter) (string, []any) {
	q := `1 = 1`
	var args []any
	if f.Source != "" {
		q += ` AND source = ?`
		args = append(args, f.Source)
	}
	if f.Name != "" {
		q += ` AND name = ?`
		args = append(args, f.Name)
	}
	if f.LatestOnly {
		q += ` AND is_latest = TRUE`
	}
	return q, args
}

// EachRegistryEntry calls fn with the stored entries f selects, ordered by
// source, name and version, a page at a time (keyset on the primary key):
// a listing holds one page of server.json documents whatever the size of
// the Registry.
func (db *DB) EachRegistryEntry(ctx context.Context, f RegistryFilter, fn func(RegistryEntry) error) error {
	cond, args := registryWhere(f)
	type key struct{ source, name, version string } // "" sorts before every stored source
	return eachPage(registryPage, func(after key) ([]RegistryEntry, error) {
		page, err := collect(ctx, db.sql, scanRegistryEntry, `SELECT `+registryColumns+` FROM registry_entries
			WHERE `+cond+` AND (source, name, version) > (?, ?, ?) ORDER BY source, name, version LIMIT ?`,
			slices.Concat(args, []any{after.source, after.name, after.version, registryPage})...)
		if err != nil {
			return nil, fmt.Errorf("list registry entries: %w", err)
		}
		return page, nil
	}, func(e RegistryEntry) key { return key{e.Source, e.Name, e.Version} }, fn)
}

// CountRegistrySources counts the registries some entry f selects comes
// from.
func (db *DB) CountRegistrySources(ctx context.Context, f RegistryFilter) (int, error) {
	cond, args := registryWhere(f)
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT COUNT(DISTINCT source) FROM registry_entries WHERE `+cond, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count registries: %w", err)
	}
	return n, nil
}

// registryPage is how many entries EachLatestRegistryEntry reads per query.
const registryPage = 200

// EachLatestRegistryEntry calls fn for the latest version of every server
// of every registry, ordered by source and name, a page at a time, so no
// caller needs every entry's JSON at once.
func (db *DB) EachLatestRegistryEntry(ctx context.Context, fn func(RegistryEntry) error) error {
	return db.EachRegistryEntry(ctx, RegistryFilter{LatestOnly: true}, fn)
}

// CountRegistryEntries counts stored versions for source ("" for all).
func (db *DB) CountRegistryEntries(ctx context.Context, source string) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM registry_entries WHERE source = ? OR ? = ''`, source, source).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count registry entries: %w", err)
	}
	return n, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
)

// RegistryEntryDoc is a latest, listed Registry entry as the remote pass
// reads it. ServerJSON is empty when its registry_remotes rows are current
// (made from the entry as it is now).
type RegistryEntryDoc struct {
	Source, Name, Version string
	Status                string // active or deprecated
	ChangedAt             string
	ServerJSON            string
}

// listedEntry is the condition "Registry entry e is one the Registry's
// own list gives": its latest version, unless deleted. A deprecated
// server stays listed there, and so its endpoints stay in the feed.
const listedEntry = "e.is_latest = 1 AND e.status <> 'deleted'"

// EachListedEntry calls fn for every latest Registry entry that is not
// deleted, in (source, name) order, a page at a time.
func (db *DB) EachListedEntry(ctx context.Context, fn func(RegistryEntryDoc) error) error {
	return eachPage(categoryPage, func(after subjectKey) ([]RegistryEntryDoc, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (RegistryEntryDoc, error) {
			var e RegistryEntryDoc
			err := rows.Scan(&e.Source, &e.Name, &e.Version, &e.Status, &e.ChangedAt, &e.ServerJSON)
			return e, err
		}, `SELECT e.source, e.name, e.version, e.status, e.changed_at,
			CASE WHEN EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.source = e.source AND rr.name = e.name
			     AND rr.version = e.version AND rr.entry_changed_at = e.changed_at) THEN '' ELSE e.server_json END
			FROM registry_entries e
			WHERE `+listedEntry+` AND (e.source, e.name) > (?, ?)
			ORDER BY e.source, e.name LIMIT ?`, after.registry, after.subject, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("listed registry entries: %w", err)
		}
		return page, nil
	}, func(e RegistryEntryDoc) subjectKey { return subjectKey{e.Source, e.Name} }, fn)
}

// RegistryRemote is one remote a Registry entry declares.
type RegistryRemote struct {
	URLNorm, URL, Type string
}

// ReplaceRegistryRemotes records the remotes entry declares now (none
// removes its rows), with the hash of its server.json.
func (db *DB) ReplaceRegistryRemotes(ctx context.Context, e RegistryEntryDoc, entrySHA string, remotes []RegistryRemote) error {
	return db.inSQLTx(ctx, "registry remotes of "+e.Name, func(tx *sql.Tx) error {
		old, err := collect(ctx, tx, scanDeclared, `SELECT url_norm, url, source, name, version FROM registry_remotes
			WHERE source = ? AND name = ?`, e.Source, e.Name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_remotes WHERE source = ? AND name = ?`, e.Source, e.Name); err != nil {
			return err
		}
		var now []string
		for _, r := range remotes {
			if _, err := tx.ExecContext(ctx, `INSERT INTO registry_remotes (source, name, version, url_norm, url, type,
				entry_sha256, entry_changed_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
				e.Source, e.Name, e.Version, r.URLNorm, r.URL, r.Type, entrySHA, e.ChangedAt, e.Status); err != nil {
				return err
			}
			now = append(now, r.URLNorm)
		}
		return db.afterRegistryRemotes(ctx, tx, old, now)
	})
}

// scanDeclared scans url_norm, url, source, name, version.
func scanDeclared(rows *sql.Rows) (DeclaredRemote, error) {
	var d DeclaredRemote
	err := rows.Scan(&d.URLNorm, &d.URL, &d.Source, &d.Name, &d.Version)
	return d, err
}

// Why an endpoint left the Registry (registry_gone.reason, a tombstone's
// removedReason).
const (
	RemovedRegistryDeleted     = "registry_deleted"
	RemovedRegistryNotDeclared = "registry_not_declared"
)

// afterRegistryRemotes follows a change of registry_remotes: the endpoints
// no entry declares any more are recorded as gone (why: the status of the
// entry that last declared them), those declared again are not, and the
// feed records of all of them changed.
func (db *DB) afterRegistryRemotes(ctx context.Context, tx *sql.Tx, old []DeclaredRemote, now []string) error {
	changed := now
	stamp := db.Now()
	for _, d := range old {
		changed = append(changed, d.URLNorm)
		var still bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM registry_remotes WHERE url_norm = ?)`,
			d.URLNorm).Scan(&still); err != nil {
			return err
		}
		if still {
			continue
		}
		var status string
		err := tx.QueryRowContext(ctx, `SELECT status FROM registry_entries WHERE source = ? AND name = ? AND is_latest = 1`,
			d.Source, d.Name).Scan(&status)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		reason := RemovedRegistryNotDeclared
		if status == "deleted" {
			reason = RemovedRegistryDeleted
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO registry_gone (url_norm, url, source, name, version, reason, removed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (url_norm) DO UPDATE SET url = excluded.url, source = excluded.source,
			name = excluded.name, version = excluded.version, reason = excluded.reason, removed_at = excluded.removed_at`,
			d.URLNorm, d.URL, d.Source, d.Name, d.Version, reason, stamp); err != nil {
			return err
		}
	}
	for _, n := range now {
		if _, err := tx.ExecContext(ctx, `DELETE FROM registry_gone WHERE url_norm = ?`, n); err != nil {
			return err
		}
	}
	return db.feedAfterRegistryRemotes(ctx, tx, changed)
}

// feedAfterRegistryRemotes moves updatedAt (and the change counter) of the
// live card records of these endpoints: what the Registry says of them is
// part of their meaning, so the delta feed and ETags see it change. When
// none has a card record, they are servers only the Registry declares (or
// declared): the change counter moves for them alone.
func (db *DB) feedAfterRegistryRemotes(ctx context.Context, tx *sql.Tx, norms []string) error {
	if len(norms) == 0 {
		return nil
	}
	var seq int64
	now := db.Now()
	t := &txw{ctx: ctx, tx: tx} // IN lists of every length: unprepared
	for len(norms) > 0 {
		chunk := norms[:min(len(norms), feedReadPage)]
		norms = norms[len(chunk):]
		args := make([]any, len(chunk))
		for i, n := range chunk {
			args[i] = n
		}
		if err := touchFeedRecords(t, now, &seq, `kind = 0 AND key IN (`+placeholders(len(chunk))+`)`, args...); err != nil {
			return err
		}
	}
	return takeFeedSeq(t, &seq)
}

// PruneRegistryRemotes removes the remotes of entries that are no longer
// the latest version, or are deleted.
func (db *DB) PruneRegistryRemotes(ctx context.Context) (n int64, err error) {
	const stale = `FROM registry_remotes WHERE NOT EXISTS (SELECT 1 FROM registry_entries e
		WHERE e.source = registry_remotes.source AND e.name = registry_remotes.name AND e.version = registry_remotes.version
		AND ` + listedEntry + `)`
	err = db.inSQLTx(ctx, "prune registry remotes", func(tx *sql.Tx) error {
		old, err := collect(ctx, tx, scanDeclared, `SELECT url_norm, url, source, name, version `+stale)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE `+stale)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		return db.afterRegistryRemotes(ctx, tx, old, nil)
	})
	return n, err
}

// DeclaredRemote is one endpoint a latest, listed Registry entry declares.
type DeclaredRemote struct {
	URLNorm, URL, Type    string
	Source, Name, Version string
	EntrySHA256           string
}

// EachActiveRegistryRemote calls fn for every endpoint latest, active
// Registry entries declare (the ones a probe may reach: a deprecated
// entry's are listed, not probed), ordered by normalised URL and then by
// declaring entry (one row per declaration: a URL's rows are adjacent), a
// page at a time.
func (db *DB) EachActiveRegistryRemote(ctx context.Context, fn func(DeclaredRemote) error) error {
	type key struct{ norm, source, name, version string }
	return eachPage(categoryPage, func(after key) ([]DeclaredRemote, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (DeclaredRemote, error) {
			var d DeclaredRemote
			err := rows.Scan(&d.URLNorm, &d.URL, &d.Type, &d.Source, &d.Name, &d.Version, &d.EntrySHA256)
			return d, err
		}, `SELECT url_norm, url, type, source, name, version, entry_sha256 FROM registry_remotes
			WHERE status = 'active' AND (url_norm, source, name, version) > (?, ?, ?, ?)
			ORDER BY url_norm, source, name, version LIMIT ?`, after.norm, after.source, after.name, after.version, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("registry remotes: %w", err)
		}
		return page, nil
	}, func(d DeclaredRemote) key { return key{d.URLNorm, d.Source, d.Name, d.Version} }, fn)
}

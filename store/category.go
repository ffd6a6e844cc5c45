package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Server kinds of the directory's tables (server_categories.kind).
const (
	KindEndpoint = "endpoint" // a remote endpoint: subject is its normalised URL
	KindCard     = "card"     // a card that declares no remote: subject is its key
	KindRegistry = "registry" // a latest Registry entry: subject is its name
)

// categoryPage is how many rows one page of a category pass reads.
const categoryPage = 500

// ProbeTools is an endpoint's latest ok probe, as the tool-set pass reads
// it. Result is empty when endpoint_tools already holds this probe.
type ProbeTools struct {
	RemoteNorm string
	ProbeID    int64
	Result     string
}

// latestOKProbesPage reads a page of endpoints' latest ok probes from
// their brief history (probe_outcomes_outcome), a row an endpoint.
const latestOKProbesPage = `SELECT last.remote_norm, last.id,
	  CASE WHEN (SELECT t.probe_id FROM endpoint_tools t WHERE t.remote_norm = last.remote_norm) = last.id
	  THEN '' ELSE (SELECT p.result FROM probes p WHERE p.id = last.id) END
	FROM (SELECT remote_norm, last_id AS id FROM probe_outcomes WHERE outcome = 'ok' AND remote_norm > ?
	      ORDER BY remote_norm LIMIT ?) last
	ORDER BY last.remote_norm`

// EachLatestOKProbe calls fn for every endpoint with an ok probe, in URL
// order, a page at a time, with the probe's record only when its tool set is
// not yet in endpoint_tools. The probe and the tool set are looked up by
// key for each of the page's endpoints: as joins, PostgreSQL hashed the
// whole of both tables for every page (26-85 ms a page at 43,000 probes,
// 3 ms this way), and the record is not read when the tools are stored.
func (db *DB) EachLatestOKProbe(ctx context.Context, fn func(ProbeTools) error) error {
	return eachPage(categoryPage, func(after string) ([]ProbeTools, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (ProbeTools, error) {
			var p ProbeTools
			err := rows.Scan(&p.RemoteNorm, &p.ProbeID, &p.Result)
			return p, err
		}, latestOKProbesPage, after, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("latest ok probes: %w", err)
		}
		return page, nil
	}, func(p ProbeTools) string { return p.RemoteNorm }, func(p ProbeTools) error {
		if p.Result == "" {
			return nil
		}
		return fn(p)
	})
}

// EndpointTools is the tool set of an endpoint's latest ok probe.
type EndpointTools struct {
	RemoteNorm  string
	ProbeID     int64
	Fingerprint string
	ToolNames   []string
	ToolCount   int
}

// SaveEndpointTools upserts tool sets in one transaction.
func (db *DB) SaveEndpointTools(ctx context.Context, rows []EndpointTools) error {
	return db.inSQLTx(ctx, "save tool sets", func(tx *sql.Tx) error {
		for _, r := range rows {
			names, _ := json.Marshal(nonNil(r.ToolNames))
			// seq: the change number now, which a category pass that began
			// before this write read no later (EachCategorySubjectSince).
			if _, err := tx.ExecContext(ctx, `INSERT INTO endpoint_tools (remote_norm, probe_id, fingerprint, tool_names, tool_count, seq)
				VALUES (?, ?, ?, ?, ?, (SELECT seq FROM feed_state WHERE id = 1)) ON CONFLICT (remote_norm) DO UPDATE SET
				probe_id = excluded.probe_id, fingerprint = excluded.fingerprint, tool_names = excluded.tool_names,
				tool_count = excluded.tool_count, seq = excluded.seq`,
				r.RemoteNorm, r.ProbeID, r.Fingerprint, string(names), r.ToolCount); err != nil {
				return err
			}
		}
		return nil
	})
}

// CommonToolSets returns the fingerprints of the tool sets at least
// minServers endpoints list identically (gateways, templates). There are
// few of them, whatever the number of servers.
func (db *DB) CommonToolSets(ctx context.Context, minServers int) ([]string, error) {
	out, err := collect(ctx, db.sql, scanString, `SELECT fingerprint FROM endpoint_tools WHERE fingerprint <> ''
		GROUP BY fingerprint HAVING COUNT(*) >= ? ORDER BY fingerprint`, minServers)
	if err != nil {
		return nil, fmt.Errorf("common tool sets: %w", err)
	}
	return out, nil
}

// CategorySubject is what the category rules read about one server, and
// the hash of what they read last time.
type CategorySubject struct {
	Kind, Registry, Subject  string
	Name, Title, Description string
	// ServerJSON is the Registry entry's server.json (kind registry only:
	// its title and description are in it).
	ServerJSON  string
	ToolNames   []string
	ToolCount   int
	Fingerprint string
	// StoredInputs is the inputs hash of the stored category ("" if none).
	StoredInputs string
}

type subjectKey struct{ registry, subject string }

// EachCategorySubject calls fn for every server some domain lists now or
// the Registry lists as latest, kind by kind, a page at a time: endpoints
// (described by their feed record's card, with the tools of their latest
// ok probe), cards that declare no remote, and latest Registry
// entries (with the tools of the first of their remotes an ok probe listed).
func (db *DB) EachCategorySubject(ctx context.Context, fn func(CategorySubject) error) error {
	// Each query's cursor is (registry, subject); the cards' and their
	// endpoints' registry is '', so their keyset is "registry is '' and
	// the key is past the subject": written as a row comparison with ''
	// first, PostgreSQL filtered every key before the cursor instead of
	// seeking to it (~20 ms a page at 50,000 endpoints, growing with them).
	queries := []string{
		// A listed endpoint's and a listed card's feed record already holds
		// the describing card's text (the best grade, ties to the smallest
		// key: the feed's rule), kept in step by every write that changes
		// it. Choosing that card here again, per endpoint, was two thirds
		// of a pass (2.4 s at 100,000 servers).
		`SELECT 'endpoint', '', f.key, f.name, f.title, f.description, '', t.tool_names, t.tool_count, t.fingerprint,
		  ` + storedInputs(`'`+KindEndpoint+`'`, "''", "f.key") + `
		FROM feed_servers f LEFT JOIN endpoint_tools t ON t.remote_norm = f.key
		WHERE ? = '' AND f.kind = 0 AND f.key > ? AND f.removed_at IS NULL
		ORDER BY f.key LIMIT ?`,
		`SELECT 'card', '', f.key, f.name, f.title, f.description, '', NULL, NULL, NULL,
		  ` + storedInputs(`'`+KindCard+`'`, "''", "f.key") + `
		FROM feed_servers f
		WHERE ? = '' AND f.kind = 1 AND f.key > ? AND f.removed_at IS NULL
		ORDER BY f.key LIMIT ?`,
	}
	for _, q := range queries {
		if err := eachSubjectPage(ctx, db.sql, q, fn); err != nil {
			return err
		}
	}
	return db.eachRegistrySubject(ctx, fn)
}

// eachSubjectPage pages q, whose cursor is (registry, subject), to fn.
func eachSubjectPage(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, fn func(CategorySubject) error) error {
	return eachPage(categoryPage, func(after subjectKey) ([]CategorySubject, error) {
		page, err := collect(ctx, q, scanCategorySubject, query, after.registry, after.subject, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("category inputs: %w", err)
		}
		return page, nil
	}, func(s CategorySubject) subjectKey { return subjectKey{s.Registry, s.Subject} }, fn)
}

// eachRegistrySubject calls fn for every latest Registry entry, with the
// tools of the first of its remotes an ok probe listed.
func (db *DB) eachRegistrySubject(ctx context.Context, fn func(CategorySubject) error) error {
	return eachSubjectPage(ctx, db.sql, registrySubjects, fn)
}

// registrySubjects is a page of latest Registry entries as category
// subjects, after the cursor (source, name).
var registrySubjects = `SELECT 'registry', x.registry, x.subject, e.name, '', '', e.server_json,
		  t.tool_names, t.tool_count, t.fingerprint,
		  ` + storedInputs(`'`+KindRegistry+`'`, "x.registry", "x.subject") + `
		FROM (SELECT source AS registry, name AS subject, version FROM registry_entries
		      WHERE is_latest = 1 AND (source, name) > (?, ?) ORDER BY source, name LIMIT ?) x
		JOIN registry_entries e ON e.source = x.registry AND e.name = x.subject AND e.version = x.version
		LEFT JOIN endpoint_tools t ON t.remote_norm = (SELECT rr.url_norm FROM registry_remotes rr
		      JOIN endpoint_tools t2 ON t2.remote_norm = rr.url_norm
		      WHERE rr.source = x.registry AND rr.name = x.subject AND rr.version = x.version
		      ORDER BY rr.url_norm LIMIT 1)
		ORDER BY x.registry, x.subject`

// scanCategorySubject scans a row of EachCategorySubject's queries: kind,
// registry, subject, name, title, description, server.json, then the tool
// set's names, count and fingerprint, and the stored inputs.
func scanCategorySubject(rows *sql.Rows) (CategorySubject, error) {
	var s CategorySubject
	var t subjectTools
	err := rows.Scan(append([]any{&s.Kind, &s.Registry, &s.Subject, &s.Name, &s.Title, &s.Description, &s.ServerJSON},
		t.dest()...)...)
	t.into(&s)
	return s, err
}

// subjectTools scans what every category query ends with: the tool set's
// names, count and fingerprint (NULL without one), and the stored inputs.
type subjectTools struct {
	names, fp, stored sql.NullString
	count             sql.NullInt64
}

func (t *subjectTools) dest() []any { return []any{&t.names, &t.count, &t.fp, &t.stored} }

// into sets them on s; the names as SaveEndpointTools wrote them.
func (t *subjectTools) into(s *CategorySubject) {
	if t.names.Valid {
		_ = json.Unmarshal([]byte(t.names.String), &s.ToolNames)
	}
	s.ToolCount, s.Fingerprint, s.StoredInputs = int(t.count.Int64), t.fp.String, t.stored.String
}

// storedInputs is the inputs hash of the stored category of the subject
// (kind, registry, subject: SQL expressions), NULL when it has none.
func storedInputs(kind, registry, subject string) string {
	return `(SELECT sc.inputs FROM server_categories sc WHERE sc.kind = ` + kind + ` AND sc.registry = ` + registry +
		` AND sc.subject = ` + subject + `)`
}

// CategoryRow is one server's stored category.
type CategoryRow struct {
	Kind, Registry, Subject string
	Category                string // "" when no rule matched
	Source                  string // name, description, tools
	Reason                  string // why none
	Evidence                []string
	Inputs                  string
	ComputedAt              string
}

// SaveCategories upserts categories in one transaction. The feed prints
// a server's category with where it came from and why, so a row that says
// something new moves the feed's change counter (its ETags); a recompute
// that finds what was there already does not.
func (db *DB) SaveCategories(ctx context.Context, rows []CategoryRow) error {
	now := db.Now()
	err := db.inTx(ctx, func(tx *txw) error {
		changed := false
		for _, r := range rows {
			ev, _ := json.Marshal(nonNil(r.Evidence))
			// The change counter (the feed's ETags) moves only for what
			// readers see: the recompute hands over every row whose inputs
			// changed, most of them to the same verdict.
			if !changed {
				var same bool
				if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM server_categories
					WHERE kind = ? AND registry = ? AND subject = ? AND category = ? AND source = ? AND reason = ?
					  AND evidence = ?)`,
					r.Kind, r.Registry, r.Subject, r.Category, r.Source, r.Reason, string(ev)).Scan(&same); err != nil {
					return err
				}
				changed = !same
			}
			if _, err := tx.exec(`INSERT INTO server_categories (kind, registry, subject, category, source, reason,
				evidence, inputs, computed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (kind, registry, subject) DO UPDATE SET category = excluded.category, source = excluded.source,
				reason = excluded.reason, evidence = excluded.evidence, inputs = excluded.inputs, computed_at = excluded.computed_at`,
				r.Kind, r.Registry, r.Subject, r.Category, r.Source, r.Reason, string(ev), r.Inputs, now); err != nil {
				return err
			}
		}
		if changed {
			var seq int64
			return takeFeedSeq(tx, &seq)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save categories: %w", err)
	}
	return nil
}

// PruneCategories removes the categories of servers no longer listed.
func (db *DB) PruneCategories(ctx context.Context) (int64, error) {
	res, err := db.sql.ExecContext(ctx, `DELETE FROM server_categories WHERE
		(kind = 'endpoint' AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = server_categories.subject AND l.active = 1))
		OR (kind = 'card' AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.card_key = server_categories.subject
		    AND l.active = 1 AND l.remote_norm = ''))
		OR (kind = 'registry' AND `+registryGone+`)`)
	if err != nil {
		return 0, fmt.Errorf("prune categories: %w", err)
	}
	return res.RowsAffected()
}

// registryGone holds for a category row of a Registry entry no longer
// latest.
const registryGone = `NOT EXISTS (SELECT 1 FROM registry_entries e WHERE e.source = server_categories.registry
	AND e.name = server_categories.subject AND e.is_latest = 1)`

// pruneRegistryCategories removes the categories of Registry entries no
// longer latest.
const pruneRegistryCategories = `DELETE FROM server_categories WHERE kind = 'registry' AND ` + registryGone

// uncategorized says whether a server the site shows has no stored
// category to read: a listed card without remotes or a listed endpoint
// without a row of its own, or a Registry entry with remotes without one
// (an endpoint only the Registry declares takes its entry's).
const uncategorized = `SELECT EXISTS (SELECT 1 FROM cards c WHERE EXISTS (SELECT 1 FROM listings l
	  WHERE l.card_key = c.key AND l.active = 1 AND l.remote_norm = '')
	  AND NOT EXISTS (SELECT 1 FROM server_categories sc WHERE sc.kind = 'card' AND sc.registry = '' AND sc.subject = c.key))
	OR EXISTS (SELECT 1 FROM remotes r WHERE EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = r.url_norm AND l.active = 1)
	  AND NOT EXISTS (SELECT 1 FROM server_categories sc WHERE sc.kind = 'endpoint' AND sc.registry = '' AND sc.subject = r.url_norm))
	OR EXISTS (SELECT 1 FROM registry_remotes rr WHERE ` + registryRowless + `)`

// registryRowless holds for a Registry remote rr whose entry has no
// category row.
const registryRowless = `NOT EXISTS (SELECT 1 FROM server_categories sc
	WHERE sc.kind = 'registry' AND sc.registry = rr.source AND sc.subject = rr.name)`

// MarkCategoriesComplete records, when every server has a stored category,
// the change number at which it had (feed_state.categories_seq), and
// reports whether it did. From then on the site's category=none reads the
// rows whose category is empty, and the servers written since
// (sinceMark), instead of computing every server's row. It reads
// the change number before checking: a server that comes after the check
// moves the number past the one recorded. After a mark, only the records
// written since it and the Registry's endpoints are checked: no pass
// removes the row of a server still listed, and a server listed again has
// its record written again.
func (db *DB) MarkCategoriesComplete(ctx context.Context) (bool, error) {
	var seq, mark int64
	if err := db.sql.QueryRowContext(ctx, `SELECT seq, categories_seq FROM feed_state WHERE id = 1`).Scan(&seq, &mark); err != nil {
		return false, fmt.Errorf("categories complete: %w", err)
	}
	query, args := uncategorized, []any(nil)
	if mark >= 0 {
		query, args = uncategorizedSince, []any{mark}
	}
	var missing bool
	if err := db.sql.QueryRowContext(ctx, query, args...).Scan(&missing); err != nil {
		return false, fmt.Errorf("categories complete: %w", err)
	}
	if missing {
		return false, nil
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE feed_state SET categories_seq = ? WHERE id = 1`, seq); err != nil {
		return false, fmt.Errorf("categories complete: %w", err)
	}
	return true, nil
}

// uncategorizedSince is uncategorized for the servers whose records were
// written after a change number, and every Registry endpoint.
const uncategorizedSince = `SELECT EXISTS (SELECT 1 FROM feed_servers f WHERE f.seq > ? AND f.removed_at IS NULL
	  AND NOT EXISTS (SELECT 1 FROM server_categories sc
	    WHERE sc.kind = CASE WHEN f.kind = 0 THEN '` + KindEndpoint + `' ELSE '` + KindCard + `' END
	      AND sc.registry = '' AND sc.subject = f.key))
	OR EXISTS (SELECT 1 FROM registry_remotes rr WHERE ` + registryRowless + `)`

// categoriesComplete says whether every server has had a stored category
// since the last change (MarkCategoriesComplete), and the change number
// of the last mark (-1: none).
func categoriesComplete(ctx context.Context, q rowQuery) (ok bool, mark int64, err error) {
	if err := q(ctx, `SELECT seq = categories_seq, categories_seq FROM feed_state WHERE id = 1`).Scan(&ok, &mark); err != nil {
		return false, 0, fmt.Errorf("categories complete: %w", err)
	}
	return ok, mark, nil
}

// Categories returns the stored categories of one kind, keyed by subject
// (for kind registry: registry base URL, a space, the name).
func (db *DB) Categories(ctx context.Context, kind string) (map[string]CategoryRow, error) {
	rows, err := collect(ctx, db.sql, scanCategory, `SELECT kind, registry, subject, category, source, reason, evidence, inputs,
		computed_at FROM server_categories WHERE kind = ?`, kind)
	if err != nil {
		return nil, fmt.Errorf("categories: %w", err)
	}
	out := make(map[string]CategoryRow, len(rows))
	for _, r := range rows {
		k := r.Subject
		if r.Registry != "" {
			k = r.Registry + " " + r.Subject
		}
		out[k] = r
	}
	return out, nil
}

func scanCategory(rows *sql.Rows) (CategoryRow, error) {
	var r CategoryRow
	var ev string
	err := rows.Scan(&r.Kind, &r.Registry, &r.Subject, &r.Category, &r.Source, &r.Reason, &ev, &r.Inputs, &r.ComputedAt)
	_ = json.Unmarshal([]byte(ev), &r.Evidence) // written by SaveCategories
	return r, err
}

// inSQLTx runs fn in one plain transaction (no prepared cache), its errors
// prefixed with what.
func (db *DB) inSQLTx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

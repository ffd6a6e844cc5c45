package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The Registry-shaped feed (one entry per describing card) with source
// registry or all: after the cards' entries come the Registry entries
// declaring endpoints no listed card declares, in (registry, name) order,
// each with those endpoints as its records.

// FeedEntryRegistry is the Registry entry an entry of Registry-only
// servers stands for.
type FeedEntryRegistry struct {
	Source, Name, Version string
	ChangedAt             string
	ServerJSON            string
	// Status and PublishedAt are the Registry's for this version (empty
	// when a tombstone's version is no longer stored); Latest is whether
	// it is the name's latest (registry_entries.is_latest).
	Status, PublishedAt string
	Latest              bool
}

// registryEntryCursor starts the cursor of an entry of Registry-only
// servers; a card key (a URL) never starts with it.
const registryEntryCursor = "\x00registry\x00"

// Cursor is the entry's place, for EntryQuery.After.
func (e *FeedEntry) Cursor() string {
	if e.Registry != nil {
		return registryEntryCursor + e.Registry.Source + "\x00" + e.Registry.Name
	}
	return e.CardKey
}

// registryCursor reads a cursor of the Registry entries' part.
func registryCursor(after string) (subjectKey, bool) {
	rest, ok := strings.CutPrefix(after, registryEntryCursor)
	if !ok {
		return subjectKey{}, false
	}
	src, name, _ := strings.Cut(rest, "\x00")
	return subjectKey{src, name}, true
}

// registryEntryQuery is what selects entries of Registry-only servers.
type registryEntryQuery struct {
	FeedFilter
	Search, Since, Name string
}

// firstEntry is the condition that the registry_remotes row named alias
// is the first (by source, name, version) of those declaring its
// endpoint: the entry whose name and text stand for the endpoint where no
// card does. A join on it reads one more index entry a row, where a join
// on a subquery's row value made PostgreSQL compare every entry with every
// row.
func firstEntry(alias string) string {
	return fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM registry_remotes r2 WHERE r2.url_norm = %[1]s.url_norm
		AND (r2.source, r2.name, r2.version) < (%[1]s.source, %[1]s.name, %[1]s.version))`, alias)
}

// leastOfEndpoint is the least value of a registry_remotes column among
// the entries declaring the endpoint of the row named alias: what an
// endpoint only the Registry declares shows when its entries write its URL
// or type differently.
func leastOfEndpoint(column, alias string) string {
	return fmt.Sprintf(`(SELECT MIN(r3.%[1]s) FROM registry_remotes r3 WHERE r3.url_norm = %[2]s.url_norm)`, column, alias)
}

// registryOnlyRemote is the condition "Registry remote rr is declared by
// no listed card".
const registryOnlyRemote = `NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0 AND f.key = rr.url_norm AND f.removed_at IS NULL)`

// registryEntriesPage reads up to size Registry entries after a key that
// declare an endpoint no listed card declares, each with those endpoints'
// records that the filter keeps; an entry left with none is dropped. With
// q.Since, the entries that went away since then come too, in key order,
// each with its endpoints' tombstones (registryGoneEntries). read is how
// many entries the page read before that, to tell the last page.
func registryEntriesPage(ctx context.Context, tx *sql.Tx, q registryEntryQuery, after subjectKey, size int) (out []FeedEntry, read int, last subjectKey, err error) {
	if q.cardsOnly() {
		return nil, 0, last, nil // none of them has a grade or a listing
	}
	conds := []string{listedEntry, "(e.source, e.name) > (?, ?)",
		`EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.source = e.source AND rr.name = e.name AND rr.version = e.version
		 AND ` + registryOnlyRemote + `)`}
	conds, args := registryEntryConds(conds, []any{after.registry, after.subject}, q.FeedFilter, q.Since, q.Search,
		`EXISTS (SELECT 1 FROM registry_remotes rr JOIN probe_meaning pm ON pm.remote_norm = rr.url_norm
		 WHERE rr.source = e.source AND rr.name = e.name AND rr.version = e.version AND pm.changed_at > ? AND `+registryOnlyRemote+`)`)
	if q.Name != "" {
		conds = append(conds, "e.name = ?")
		args = append(args, q.Name)
	}
	entries, err := collect(ctx, tx, func(rows *sql.Rows) (FeedEntryRegistry, error) {
		e := FeedEntryRegistry{Latest: true} // the condition's e.is_latest = 1
		err := rows.Scan(&e.Source, &e.Name, &e.Version, &e.ChangedAt, &e.ServerJSON, &e.Status, &e.PublishedAt)
		return e, err
	}, `SELECT e.source, e.name, e.version, e.changed_at, e.server_json, e.status, e.published_at
		FROM registry_entries e
		LEFT JOIN server_categories rc ON rc.kind = '`+KindRegistry+`' AND rc.registry = e.source AND rc.subject = e.name
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY e.source, e.name LIMIT ?`, append(args, size)...)
	if err != nil {
		return nil, 0, last, fmt.Errorf("registry entries of the feed: %w", err)
	}
	var gone []FeedEntry
	if q.Since != "" {
		if gone, err = registryGoneEntries(ctx, tx, q, after, size); err != nil {
			return nil, 0, last, err
		}
	}
	if len(entries)+len(gone) == 0 {
		return nil, 0, last, nil
	}
	// The page is the first size of both, in key order: both are cut at
	// the read-th key of the two merged, which is the page's last.
	read = min(len(entries)+len(gone), size)
	i, j := 0, 0
	for i+j < read {
		if j == len(gone) || (i < len(entries) && lessKey(subjectKey{entries[i].Source, entries[i].Name},
			subjectKey{gone[j].Registry.Source, gone[j].Registry.Name})) {
			last = subjectKey{entries[i].Source, entries[i].Name}
			i++
		} else {
			last = subjectKey{gone[j].Registry.Source, gone[j].Registry.Name}
			j++
		}
	}
	entries, gone = entries[:i], gone[:j]
	live, err := registryEntryRecords(ctx, tx, q, entries)
	if err != nil {
		return nil, 0, last, err
	}
	out = mergeEntries(live, gone)
	return out, read, last, nil
}

func lessKey(a, b subjectKey) bool {
	return a.registry < b.registry || (a.registry == b.registry && a.subject < b.subject)
}

// mergeEntries merges two lists of Registry entries, each in key order.
func mergeEntries(a, b []FeedEntry) []FeedEntry {
	out := make([]FeedEntry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if lessKey(subjectKey{a[0].Registry.Source, a[0].Registry.Name}, subjectKey{b[0].Registry.Source, b[0].Registry.Name}) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// registryEntryRecords gives live Registry entries the records of their
// endpoints no listed card declares that the filter keeps; an entry left
// with none is dropped.
func registryEntryRecords(ctx context.Context, tx *sql.Tx, q registryEntryQuery, entries []FeedEntryRegistry) ([]FeedEntry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	names := make([]any, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+registryRecordColumns+` FROM registry_remotes x
		JOIN registry_entries e ON e.source = x.source AND e.name = x.name AND e.version = x.version
		`+registryRecordJoins+`
		WHERE x.name IN (`+placeholders(len(names))+`)
		  AND NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0 AND f.key = x.url_norm AND f.removed_at IS NULL)
		ORDER BY x.source, x.name, x.url_norm`, names...)
	if err != nil {
		return nil, fmt.Errorf("registry entries of the feed: %w", err)
	}
	recs, err := scanRegistryRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("registry entries of the feed: %w", err)
	}
	// The Registry shape carries each endpoint's probe, not the record's
	// facts (attachServerFacts): they are not read here.
	by := map[subjectKey][]FeedServer{}
	for _, r := range recs {
		if q.keeps(r) {
			k := subjectKey{r.registrySource, r.Name}
			by[k] = append(by[k], r)
		}
	}
	var out []FeedEntry
	for i := range entries {
		e := &entries[i]
		if rs := by[subjectKey{e.Source, e.Name}]; len(rs) > 0 {
			out = append(out, FeedEntry{Registry: e, Records: rs})
		}
	}
	return out, nil
}

// registryGoneEntries reads up to size Registry entries after a key whose
// endpoints left the Registry after q.Since (registry_gone) and that
// declare no endpoint only the Registry declares now: each an entry of
// tombstones, its Registry part the version that last declared them, as
// the delta feed's tombstones of those endpoints (registryGonePage) are.
// Like those, they are given whatever the category and outcome filters
// say: a mirror that kept such a server must hear that it went.
func registryGoneEntries(ctx context.Context, tx *sql.Tx, q registryEntryQuery, after subjectKey, size int) ([]FeedEntry, error) {
	conds := []string{"g.removed_at > ?", "(g.source, g.name) > (?, ?)", `NOT EXISTS (SELECT 1 FROM feed_servers f
		WHERE f.kind = 0 AND f.key = g.url_norm AND (f.removed_at IS NULL OR f.updated_at > ?))`,
		`NOT EXISTS (SELECT 1 FROM registry_entries e JOIN registry_remotes rr ON rr.source = e.source AND rr.name = e.name
		 AND rr.version = e.version WHERE e.source = g.source AND e.name = g.name AND ` + listedEntry + `
		 AND ` + registryOnlyRemote + `)`}
	args := []any{q.Since, after.registry, after.subject, q.Since}
	if q.Search != "" {
		conds = append(conds, `lower(g.name) LIKE lower(?) ESCAPE '\'`)
		args = append(args, "%"+likeEscape(q.Search)+"%")
	}
	if q.Name != "" {
		conds = append(conds, "g.name = ?")
		args = append(args, q.Name)
	}
	type gone struct {
		source, name, version, serverJSON string
		status, publishedAt               string
		latest                            bool
		rec                               FeedServer
	}
	// The entry stands for the version that declared the endpoint that
	// went last.
	entryOf := func(g gone) FeedEntryRegistry {
		return FeedEntryRegistry{Source: g.source, Name: g.name, Version: g.version, ChangedAt: g.rec.RemovedAt,
			ServerJSON: g.serverJSON, Status: g.status, PublishedAt: g.publishedAt, Latest: g.latest}
	}
	rows, err := collect(ctx, tx, func(rows *sql.Rows) (gone, error) {
		var g gone
		s := &g.rec
		err := rows.Scan(&g.source, &g.name, &g.version, &g.serverJSON, &g.status, &g.publishedAt, &g.latest,
			&s.EndpointNorm, &s.Endpoint, &s.RemovedReason, &s.RemovedAt)
		s.kind, s.Name, s.UpdatedAt, s.Findings = kindEndpoint, g.name, s.RemovedAt, []string{}
		return g, err
	}, `SELECT g.source, g.name, g.version, COALESCE(e.server_json, ''), COALESCE(e.status, ''), COALESCE(e.published_at, ''),
		COALESCE(e.is_latest, 0) = 1, g.url_norm, g.url, g.reason, g.removed_at
		FROM registry_gone g LEFT JOIN registry_entries e ON e.source = g.source AND e.name = g.name AND e.version = g.version
		WHERE (g.source, g.name) IN (SELECT DISTINCT g.source, g.name FROM registry_gone g WHERE `+strings.Join(conds, " AND ")+`
		                             ORDER BY g.source, g.name LIMIT ?)
		  AND `+strings.Join(conds, " AND ")+`
		ORDER BY g.source, g.name, g.url_norm`, append(append(append([]any{}, args...), size), args...)...)
	if err != nil {
		return nil, fmt.Errorf("registry entries gone from the feed: %w", err)
	}
	var out []FeedEntry
	for _, g := range rows {
		if n := len(out); n > 0 && out[n-1].Registry.Source == g.source && out[n-1].Registry.Name == g.name {
			e := &out[n-1]
			e.Records = append(e.Records, g.rec)
			if g.rec.RemovedAt > e.Registry.ChangedAt {
				// The version that declared the endpoint that went last.
				*e.Registry = entryOf(g)
			}
			continue
		}
		r := entryOf(g)
		out = append(out, FeedEntry{Registry: &r, Records: []FeedServer{g.rec}})
	}
	return out, nil
}

// keeps applies the filter's probe outcome to a Registry-only record (the
// entry's category and the grade were applied in SQL).
func (q FeedFilter) keeps(s FeedServer) bool {
	switch {
	case q.NotProbed:
		return s.Probe == nil
	case q.Outcome != "":
		return s.Probe != nil && s.Probe.Outcome == q.Outcome
	}
	return true
}

// eachRegistryEntry calls fn for every entry of Registry-only servers
// after a key, a page at a time, until fn says stop or they run out.
func eachRegistryEntry(ctx context.Context, tx *sql.Tx, q registryEntryQuery, after subjectKey, pageSize int, fn func(FeedEntry) (more bool, err error)) error {
	for {
		page, read, last, err := registryEntriesPage(ctx, tx, q, after, pageSize)
		if err != nil {
			return err
		}
		for _, e := range page {
			more, err := fn(e)
			if err != nil || !more {
				return err
			}
		}
		if read < pageSize {
			return nil
		}
		after = last
	}
}

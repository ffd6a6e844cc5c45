package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The Registry-shaped feed (one entry per describing card) with source
// all: after the cards' entries come the Registry entries declaring
// endpoints no listed card declares, in (registry, name) order, each with
// those endpoints as its records.

// FeedEntryRegistry is the Registry entry an entry of Registry-only
// servers stands for.
type FeedEntryRegistry struct {
	Source, Name, Version string
	ChangedAt             string
	ServerJSON            string
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

// registryEntriesPage reads up to size Registry entries after a key that
// declare an endpoint no listed card declares, each with those endpoints'
// records that the filter keeps; an entry left with none is dropped. read
// is how many entries the page read before that, to tell the last page.
func registryEntriesPage(ctx context.Context, tx *sql.Tx, q registryEntryQuery, after subjectKey, size int) (out []FeedEntry, read int, last subjectKey, err error) {
	if q.Grade != "" {
		return nil, 0, last, nil // none of them has a grade
	}
	conds := []string{"e.is_latest = 1", "e.status = 'active'", "(e.source, e.name) > (?, ?)",
		`EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.source = e.source AND rr.name = e.name AND rr.version = e.version
		 AND NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0 AND f.key = rr.url_norm AND f.removed_at IS NULL))`}
	conds, args := registryEntryConds(conds, []any{after.registry, after.subject}, q.FeedFilter, q.Since, q.Search,
		`EXISTS (SELECT 1 FROM registry_remotes rr JOIN probe_meaning pm ON pm.remote_norm = rr.url_norm
		 WHERE rr.source = e.source AND rr.name = e.name AND rr.version = e.version AND pm.changed_at > ?
		 AND NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0 AND f.key = rr.url_norm AND f.removed_at IS NULL))`)
	if q.Name != "" {
		conds = append(conds, "e.name = ?")
		args = append(args, q.Name)
	}
	entries, err := collect(ctx, tx, func(rows *sql.Rows) (FeedEntryRegistry, error) {
		var e FeedEntryRegistry
		err := rows.Scan(&e.Source, &e.Name, &e.Version, &e.ChangedAt, &e.ServerJSON)
		return e, err
	}, `SELECT e.source, e.name, e.version, e.changed_at, e.server_json FROM registry_entries e
		LEFT JOIN server_categories rc ON rc.kind = '`+KindRegistry+`' AND rc.registry = e.source AND rc.subject = e.name
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY e.source, e.name LIMIT ?`, append(args, size)...)
	if err != nil {
		return nil, 0, last, fmt.Errorf("registry entries of the feed: %w", err)
	}
	if len(entries) == 0 {
		return nil, 0, last, nil
	}
	last = subjectKey{entries[len(entries)-1].Source, entries[len(entries)-1].Name}
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
		return nil, 0, last, fmt.Errorf("registry entries of the feed: %w", err)
	}
	recs, err := scanRegistryRecords(rows)
	if err != nil {
		return nil, 0, last, fmt.Errorf("registry entries of the feed: %w", err)
	}
	kept := recs[:0]
	for _, r := range recs {
		if q.keeps(r) {
			kept = append(kept, r)
		}
	}
	// The Registry shape carries each endpoint's probe, not the record's
	// facts (attachServerFacts): they are not read here.
	by := map[subjectKey][]FeedServer{}
	for _, r := range kept {
		k := subjectKey{r.registrySource, r.Name}
		by[k] = append(by[k], r)
	}
	for i := range entries {
		e := &entries[i]
		if rs := by[subjectKey{e.Source, e.Name}]; len(rs) > 0 {
			out = append(out, FeedEntry{Registry: e, Records: rs})
		}
	}
	return out, len(entries), last, nil
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

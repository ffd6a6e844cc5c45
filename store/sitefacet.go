package store

import (
	"context"
	"fmt"
	"slices"
)

// A filter on a probe outcome or a category names servers that an index
// finds (probes_outcome, server_categories_category). A page of such a
// filter reads the servers those indexes name, in key order, instead of
// computing every server's row from its position on: a value that few
// servers hold costs what those servers cost, where the walk read them all
// (0.5–1 s at 100,000 servers), and a common value fills a page from the
// first candidates. Grades and namespace methods have no such index: a
// grade is the best card's, a method the name's namespace's.

// siteFacet finds, in key order, the servers a filter may select: a
// superset, since each row is still read with the filter's condition.
type siteFacet struct {
	cards, endpoints []facetArm
}

// facetArm is one query for subjects after a subject, distinct and in
// order, at most a number: its arguments are args, then those two.
type facetArm struct {
	query string
	args  []any
}

// siteFacetOf is the facet that drives f's pages, nil when none can. An
// outcome drives before a category: fewer servers are probed than
// categorised. "none" is held by servers no index row names.
func siteFacetOf(f SiteFilter) *siteFacet {
	switch {
	case f.Outcome != "" && f.Outcome != "none":
		// Any probe with the outcome: a row's is its latest.
		return &siteFacet{endpoints: []facetArm{{`SELECT DISTINCT remote_norm FROM probes
			WHERE outcome = ? AND remote_norm > ? ORDER BY remote_norm LIMIT ?`, []any{f.Outcome}}}}
	case f.Category != "" && f.Category != "none":
		own := func(kind string) facetArm {
			return facetArm{`SELECT subject FROM server_categories
				WHERE category = ? AND kind = ? AND registry = '' AND subject > ? ORDER BY subject LIMIT ?`, []any{f.Category, kind}}
		}
		// An endpoint without a category of its own takes its Registry
		// entry's (siteColumns): any entry declaring it with the category.
		fromRegistry := facetArm{`SELECT DISTINCT rr.url_norm FROM server_categories sc
			JOIN registry_remotes rr ON rr.source = sc.registry AND rr.name = sc.subject
			WHERE sc.category = ? AND sc.kind = 'registry' AND rr.url_norm > ? ORDER BY rr.url_norm LIMIT ?`, []any{f.Category}}
		return &siteFacet{cards: []facetArm{own(KindCard)}, endpoints: []facetArm{own(KindEndpoint), fromRegistry}}
	}
	return nil
}

// keys returns the facet's first n servers after a key, in key order.
func (fc *siteFacet) keys(ctx context.Context, db *DB, after SiteKey, n int) ([]SiteKey, error) {
	var keys []SiteKey
	if after.Kind != KindEndpoint {
		subjects, err := db.facetSubjects(ctx, fc.cards, after.Subject, n)
		if err != nil {
			return nil, err
		}
		for _, s := range subjects {
			keys = append(keys, SiteKey{Kind: KindCard, Subject: s})
		}
		if len(keys) == n {
			return keys, nil
		}
		after = SiteKey{Kind: KindEndpoint}
	}
	subjects, err := db.facetSubjects(ctx, fc.endpoints, after.Subject, n-len(keys))
	if err != nil {
		return nil, err
	}
	for _, s := range subjects {
		keys = append(keys, SiteKey{Kind: KindEndpoint, Subject: s})
	}
	return keys, nil
}

// facetSubjects merges the arms' first n subjects after a subject. Each
// arm reads at most n, so the first n of their union are the union's.
// Go's byte order is the databases' (PostgreSQL's text is COLLATE "C").
func (db *DB) facetSubjects(ctx context.Context, arms []facetArm, after string, n int) ([]string, error) {
	var out []string
	for _, a := range arms {
		got, err := collect(ctx, db.sql, scanString, a.query, append(slices.Clone(a.args), after, n)...)
		if err != nil {
			return nil, fmt.Errorf("site facet: %w", err)
		}
		out = append(out, got...)
	}
	if len(arms) > 1 {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out[:min(len(out), n)], nil
}

// The first query of a faceted page reads siteSearchChunk candidates, and
// each next one twice the last, up to maxFacetChunk.
const maxFacetChunk = 2048

// siteFaceted reads up to n servers after a key that sel selects, among
// the servers the facet names.
func (db *DB) siteFaceted(ctx context.Context, fc *siteFacet, sel siteSelect, after SiteKey, n int) ([]SiteRow, error) {
	first := db.facetChunk
	if first == 0 {
		first = siteSearchChunk
	}
	var rows []SiteRow
	for chunk := first; len(rows) < n; chunk = min(2*chunk, maxFacetChunk) {
		keys, err := fc.keys(ctx, db, after, chunk)
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			break
		}
		more, err := db.siteRowsOf(ctx, sel, keys, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
		if len(keys) < chunk {
			break
		}
		after = keys[len(keys)-1]
	}
	return rows, nil
}

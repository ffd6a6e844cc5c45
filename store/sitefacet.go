package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// A filter on a probe outcome, a category, a namespace method or a grade
// names servers that indexes find (probe_outcomes_outcome,
// server_categories_category; the namespaces with the method, then
// cards_name; for a grade, serve's search index, since the database has
// none and one would cost every crawl). A page of such a filter reads the
// servers those name, in key order, instead of computing every server's
// row from its position on: a value that few servers hold costs what those
// servers cost, where the walk read them all (0.5–1.2 s at 100,000
// servers), and a common value fills a page from its first candidates.

// siteFacet finds, in key order, the servers a filter may select: a
// superset, since each row is still read with the filter's condition.
type siteFacet struct {
	cards, endpoints []facetArm
	// whole, when not nil, stands for the arms where none can read in key
	// order: it reads all the facet's servers, in any order, or says
	// there are more than most, or that it cannot answer now (common: the
	// page tries the next facet).
	whole func(ctx context.Context, db *DB, most int) (keys []SiteKey, common bool, err error)
	// usable, when not nil, says whether the arms can answer now.
	usable func(ctx context.Context) (bool, error)
	// parts, when not empty, stand for the arms: the facet is the servers
	// every part names (each read in key order).
	parts []*siteFacet
}

// facetArm is one query for distinct subjects, in order: its arguments
// are args, then a subject to start after, then the most to read. It
// reads the database, or from when not nil. Without a query, its subjects
// are fixed (in order).
type facetArm struct {
	query string
	args  []any
	from  *sql.DB
	fixed []string
}

// siteFacetsOf are the facets that can drive f's pages: its outcome's,
// its source's when the Registry, and its category's (read in key order;
// "none" from a mark that every server had a category row at,
// MarkCategoriesComplete, and what was written since), its namespace
// method's (read whole, so it may find too many; "unknown" from a mark
// that every named namespace had a row at, MarkNamespacesComplete, and
// what was written since), its grade's (while serve's index can answer),
// and its listing finding's (the listings with codes). The outcome "none" is read from the feed records' partial
// index of those never probed: an anti-join against the probes beat the
// walk only when few were, and lost to it when most were (BENCHMARKS.md,
// session 17); the index costs what its entries do either way.
func (db *DB) siteFacetsOf(f SiteFilter) []*siteFacet {
	var out []*siteFacet
	if f.Outcome != "" && f.Outcome != "none" {
		// Any probe with the outcome: a row's is its latest.
		out = append(out, &siteFacet{endpoints: []facetArm{{query: `SELECT remote_norm FROM probe_outcomes
			WHERE outcome = ? AND remote_norm > ? ORDER BY remote_norm LIMIT ?`, args: []any{f.Outcome}}}})
	}
	if f.Outcome == "none" {
		// Never probed: the live feed records of cards' endpoints and of
		// cards without remotes whose latest probe outcome is none
		// (feed_servers_unprobed; a record's outcome is its endpoint's
		// latest probe's, as a row's is), and the endpoints only the
		// Registry declares that no probe reached, few beside a crawl's.
		unprobed := func(kind int) facetArm {
			return facetArm{query: `SELECT key FROM feed_servers WHERE kind = ? AND probe_outcome = '' AND removed_at IS NULL
				AND key > ? ORDER BY key LIMIT ?`, args: []any{kind}}
		}
		out = append(out, &siteFacet{cards: []facetArm{unprobed(kindCard)}, endpoints: []facetArm{unprobed(kindEndpoint),
			{query: `SELECT DISTINCT rr.url_norm FROM registry_remotes rr WHERE rr.url_norm > ?
				AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.remote_norm = rr.url_norm) ORDER BY rr.url_norm LIMIT ?`}}})
	}
	if f.Source == SourceRegistry {
		// The endpoints a latest, undeleted Registry entry declares: few
		// beside a crawl's, and the walk read every server to find them.
		out = append(out, &siteFacet{endpoints: []facetArm{{query: `SELECT DISTINCT url_norm FROM registry_remotes
			WHERE url_norm > ? ORDER BY url_norm LIMIT ?`}}})
	}
	if f.Category != "" {
		// "none" is a row that says '', while every server has a row: a
		// server without one has none too, and no index lists those. Since
		// the mark that says so, the servers that may lack a row are added
		// (sinceMark).
		category := f.Category
		if category == "none" {
			category = ""
		}
		own := func(kind string) facetArm {
			return facetArm{query: `SELECT subject FROM server_categories
				WHERE category = ? AND kind = ? AND registry = '' AND subject > ? ORDER BY subject LIMIT ?`, args: []any{category, kind}}
		}
		// An endpoint without a category of its own takes its Registry
		// entry's (siteColumns): any entry declaring it with the category.
		fromRegistry := facetArm{query: `SELECT DISTINCT rr.url_norm FROM server_categories sc
			JOIN registry_remotes rr ON rr.source = sc.registry AND rr.name = sc.subject
			WHERE sc.category = ? AND sc.kind = 'registry' AND rr.url_norm > ? ORDER BY rr.url_norm LIMIT ?`, args: []any{category}}
		fc := &siteFacet{cards: []facetArm{own(KindCard)}, endpoints: []facetArm{own(KindEndpoint), fromRegistry}}
		if f.Category == "none" {
			fc.cards, fc.endpoints = append(fc.cards, facetArm{}), append(fc.endpoints, facetArm{})
			fc.usable = func(ctx context.Context) (bool, error) {
				complete, mark, err := categoriesComplete(ctx, db.sql.QueryRowContext)
				if err != nil || complete {
					return complete, err
				}
				since, common, err := db.sinceMark(ctx, mark, db.facetBound(), lacksOwnCategory, registryUncategorized)
				if err != nil || common {
					return false, err
				}
				fc.addFixed(since)
				return true, nil
			}
		}
		out = append(out, fc)
	}
	switch f.NSMethod {
	case "":
	case NSUnknown:
		// From the mark, and the servers that may have come since
		// (sinceMark); when those are many, the page walks.
		out = append(out, &siteFacet{whole: func(ctx context.Context, db *DB, most int) ([]SiteKey, bool, error) {
			complete, bare, mark, err := namespacesComplete(ctx, db.sql.QueryRowContext)
			if err != nil {
				return nil, true, err
			}
			keys, common, err := db.unknownServers(ctx, bare, most)
			if err != nil || common || complete {
				return keys, common, err
			}
			since, common, err := db.sinceMark(ctx, mark, most-len(keys), "",
				fmt.Sprintf(registryNamespaceUnknown, namespaceOf("rr.name", db.dialect.strpos)))
			if err != nil || common {
				return nil, true, err
			}
			return append(keys, since...), false, nil
		}})
	default:
		out = append(out, &siteFacet{whole: func(ctx context.Context, db *DB, most int) ([]SiteKey, bool, error) {
			return db.namedServers(ctx, f.NSMethod, most)
		}})
	}
	if f.ListingFinding != "" {
		// The listings with codes (listings_coded): few, where the walk
		// read every server.
		like := codeLike(f.ListingFinding)
		out = append(out, &siteFacet{
			cards: []facetArm{{query: `SELECT DISTINCT l.card_key FROM listings l WHERE l.remote_norm = '' AND l.active = 1
				AND ` + codedListing("l") + ` AND l.card_key > ? ORDER BY l.card_key LIMIT ?`, args: []any{like}}},
			endpoints: []facetArm{{query: `SELECT DISTINCT l.remote_norm FROM listings l WHERE l.remote_norm <> '' AND l.active = 1
				AND ` + codedListing("l") + ` AND l.remote_norm > ? ORDER BY l.remote_norm LIMIT ?`, args: []any{like}}},
		})
	}
	if ix := db.search.Load(); ix != nil && ix.Ready() && f.Grade != "" && f.Grade != "none" {
		out = append(out, ix.gradeFacet(f.Grade))
	}
	return out
}

// namespacesOfMethod counts, up to a bound, the namespaces verified by a
// method (namespaces_method).
const namespacesOfMethod = `SELECT COUNT(*) FROM (SELECT 1 FROM namespaces WHERE method = ? LIMIT ?) n`

// namedServers returns the servers named in a namespace verified by a
// method: every card whose name is in one (its names run from "ns/" up
// to "ns0", "0" following "/"; a card with remotes is not a server, and
// its row is not read), the endpoints those cards declare, and those of
// Registry entries so named (a row is named by its best card or its first
// entry). common when more than most.
func (db *DB) namedServers(ctx context.Context, method string, most int) (keys []SiteKey, common bool, err error) {
	// Each namespace was checked for a card or entry naming it, so more
	// than most of them nearly always name more than most servers: found
	// without reading their cards (15-25 ms at 5,000), and where it is
	// wrong the page walks, which is right too, only slower.
	var spaces int
	if err := db.sql.QueryRowContext(ctx, namespacesOfMethod, method, most+1).Scan(&spaces); err != nil {
		return nil, false, fmt.Errorf("site facet: %w", err)
	}
	if spaces > most {
		return nil, true, nil
	}
	// CROSS JOIN keeps SQLite to this order: otherwise it reads every card
	// and compares its name with every namespace's bounds (16-30 s at
	// 100,000 cards). The endpoints are read by card key for the same
	// reason on PostgreSQL, which guesses a namespace names 10,000 cards.
	cards, err := collect(ctx, db.sql, scanString, `SELECT c.key FROM namespaces n CROSS JOIN cards c
		WHERE n.method = ? AND c.name >= n.namespace || '/' AND c.name < n.namespace || '0' LIMIT ?`, method, most+1)
	if err != nil {
		return nil, false, fmt.Errorf("site facet: %w", err)
	}
	if len(cards) > most {
		return nil, true, nil
	}
	for _, k := range cards {
		keys = append(keys, SiteKey{Kind: KindCard, Subject: k})
	}
	ends, err := db.endpointsOfCards(ctx, cards, most-len(keys))
	if err != nil {
		return nil, false, err
	}
	if keys = append(keys, ends...); len(keys) > most {
		return nil, true, nil
	}
	reg, err := collect(ctx, db.sql, scanString, `SELECT DISTINCT rr.url_norm FROM registry_remotes rr
		JOIN namespaces n ON n.namespace = `+namespaceOf("rr.name", db.dialect.strpos)+` WHERE n.method = ? LIMIT ?`,
		method, most+1-len(keys))
	if err != nil {
		return nil, false, fmt.Errorf("site facet: %w", err)
	}
	for _, e := range reg {
		keys = append(keys, SiteKey{Kind: KindEndpoint, Subject: e})
	}
	return keys, len(keys) > most, nil
}

// endpointsOfCards returns the endpoints the cards' active listings
// declare; once they are more than most, it stops and returns those read.
func (db *DB) endpointsOfCards(ctx context.Context, cards []string, most int) ([]SiteKey, error) {
	var out []SiteKey
	for part := range slices.Chunk(cards, siteSearchChunk) {
		list, args := inList(part)
		ends, err := collect(ctx, db.sql, scanString, `SELECT DISTINCT remote_norm FROM listings
			WHERE card_key IN (`+list+`) AND active = 1 AND remote_norm <> ''`, args...)
		if err != nil {
			return nil, fmt.Errorf("site facet: %w", err)
		}
		for _, e := range ends {
			out = append(out, SiteKey{Kind: KindEndpoint, Subject: e})
		}
		if len(out) > most {
			break
		}
	}
	return out, nil
}

// addFixed adds servers to the facet's last card and endpoint arms, which
// must be fixed ones (no query), keeping each in order.
func (fc *siteFacet) addFixed(keys []SiteKey) {
	cards, ends := &fc.cards[len(fc.cards)-1], &fc.endpoints[len(fc.endpoints)-1]
	for _, k := range keys {
		arm := ends
		if k.Kind == KindCard {
			arm = cards
		}
		arm.fixed = append(arm.fixed, k.Subject)
	}
	for _, a := range []*facetArm{cards, ends} {
		slices.Sort(a.fixed)
		a.fixed = slices.Compact(a.fixed)
	}
}

// keys returns the facet's first n servers after a key, in key order.
func (fc *siteFacet) keys(ctx context.Context, db *DB, after SiteKey, n int) ([]SiteKey, error) {
	if len(fc.parts) > 0 {
		return fc.meetKeys(ctx, db, after, n, nil)
	}
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

// meetKeys returns the first n servers after a key that every part
// names. Each round reads n from each part, from the same key, and keeps
// those all of them hold up to the least last key of a part that had n
// (past it, a part may hold more than it gave); the next round starts
// there. Index entries are read, where driving by one part computed the
// rows of all its servers: two common values that few servers share cost
// what reading their entries does. first, when not nil, is what each part
// gave for the first round, already read.
func (fc *siteFacet) meetKeys(ctx context.Context, db *DB, after SiteKey, n int, first [][]SiteKey) ([]SiteKey, error) {
	var out []SiteKey
	for len(out) < n {
		var (
			lists   [][]SiteKey
			horizon *SiteKey // nil: every part gave all it has
		)
		for i, p := range fc.parts {
			var keys []SiteKey
			var err error
			if first != nil {
				keys = first[i]
			} else if keys, err = p.keys(ctx, db, after, n); err != nil {
				return nil, err
			}
			if len(keys) == 0 {
				return out, nil // past after, the part names none
			}
			if last := keys[len(keys)-1]; len(keys) == n && (horizon == nil || compareSiteKeys(last, *horizon) < 0) {
				horizon = &last
			}
			lists = append(lists, keys)
		}
		for _, k := range lists[0] {
			if horizon != nil && compareSiteKeys(k, *horizon) > 0 {
				break
			}
			held := true
			for _, l := range lists[1:] {
				if _, found := slices.BinarySearchFunc(l, k, compareSiteKeys); !found {
					held = false
					break
				}
			}
			if held {
				out = append(out, k)
			}
		}
		if horizon == nil {
			break
		}
		after, first = *horizon, nil
	}
	return out[:min(len(out), n)], nil
}

// facetSubjects merges the arms' first n subjects after a subject. Each
// arm reads at most n, so the first n of their union are the union's.
// Go's byte order is the databases' (PostgreSQL's text is COLLATE "C").
func (db *DB) facetSubjects(ctx context.Context, arms []facetArm, after string, n int) ([]string, error) {
	var out []string
	for _, a := range arms {
		if a.query == "" {
			got := keysAfter(a.fixed, after, strings.Compare)
			out = append(out, got[:min(len(got), n)]...)
			continue
		}
		from := db.sql
		if a.from != nil {
			from = a.from
		}
		got, err := collect(ctx, from, scanString, a.query, append(slices.Clone(a.args), after, n)...)
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

// facetBound is the most servers a facet may name and still drive a page
// (maxSearchCandidates, or fewer in tests).
func (db *DB) facetBound() int { return cmp.Or(db.facetMost, maxSearchCandidates) }

// The first query of a faceted page reads siteSearchChunk candidates, and
// each next one twice the last, up to maxFacetChunk.
const maxFacetChunk = 2048

// siteFaceted reads up to n servers after a key that sel selects, among
// the servers the facets name; walking them all when none can answer.
// Each facet that can is asked for its first chunk of candidates (a whole
// one for all of them): the one that has them all in the fewest drives
// the page, so that a rare value leads whatever it is paired with. When
// none has them all, the servers every such facet names drive it, or the
// one facet's, from the chunk it gave.
func (db *DB) siteFaceted(ctx context.Context, facets []*siteFacet, sel siteSelect, after SiteKey, n int) ([]SiteRow, error) {
	chunk := cmp.Or(db.facetChunk, siteSearchChunk)
	var (
		lead          *siteFacet
		leadKeys      []SiteKey
		leadsComplete bool
		partial       []*siteFacet // read in key order, with more than a chunk
		partialKeys   [][]SiteKey  // the first chunk each gave
	)
	for _, fc := range facets {
		var keys []SiteKey
		switch {
		case fc.whole != nil:
			all, common, err := fc.whole(ctx, db, db.facetBound())
			if err != nil {
				return nil, err
			}
			if common {
				continue
			}
			slices.SortFunc(all, compareSiteKeys)
			keys = keysAfter(slices.Compact(all), after, compareSiteKeys)
		default:
			if fc.usable != nil {
				ok, err := fc.usable(ctx)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			var err error
			if keys, err = fc.keys(ctx, db, after, chunk); err != nil {
				return nil, err
			}
		}
		complete := fc.whole != nil || len(keys) < chunk
		if !complete {
			partial, partialKeys = append(partial, fc), append(partialKeys, keys)
		}
		switch {
		case lead == nil, complete && (!leadsComplete || len(keys) < len(leadKeys)):
			lead, leadKeys, leadsComplete = fc, keys, complete
		}
	}
	if !leadsComplete && len(partial) > 1 {
		// Several values none of which is rare: the servers all of them
		// name lead.
		lead = &siteFacet{parts: partial}
		var err error
		if leadKeys, err = lead.meetKeys(ctx, db, after, chunk, partialKeys); err != nil {
			return nil, err
		}
		leadsComplete = len(leadKeys) < chunk
	}
	switch {
	case lead == nil:
		return db.siteScan(ctx, sel, after, n)
	case leadsComplete:
		return db.siteRowsAmong(ctx, sel, leadKeys, n)
	}
	return db.siteOrdered(ctx, lead, sel, after, leadKeys, n)
}

// siteOrdered reads up to n servers after a key that sel selects, among
// the servers the facet's arms name in key order, starting with the first
// chunk of them (keys, a full chunk), then chunks twice the last.
func (db *DB) siteOrdered(ctx context.Context, fc *siteFacet, sel siteSelect, after SiteKey, keys []SiteKey, n int) ([]SiteRow, error) {
	var rows []SiteRow
	for chunk := len(keys); ; {
		more, err := db.siteRowsOf(ctx, sel, keys, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
		if len(rows) >= n || len(keys) < chunk {
			return rows, nil
		}
		after = keys[len(keys)-1]
		chunk = min(2*chunk, maxFacetChunk)
		if keys, err = fc.keys(ctx, db, after, chunk); err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			return rows, nil
		}
	}
}

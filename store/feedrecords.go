package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// One record per server: the card feed's records (feed_servers) carry what
// the Registry, the reconciliation, the namespace check and the probe
// history say about the same server, read a page at a time by key, and the
// endpoints only the Registry declares are records too. Which records a
// read selects is FeedFilter.Source.

// FeedSource values: which servers a feed read selects.
const (
	// FeedSourceCard: the servers a listed card declares (the feed as it
	// always was; the default).
	FeedSourceCard = SourceCard
	// FeedSourceRegistry: the endpoints a latest, undeleted Registry entry
	// declares, whether or not a card does too.
	FeedSourceRegistry = SourceRegistry
	// FeedSourceAll: both.
	FeedSourceAll = "all"
)

// FeedSources lists the values of FeedFilter.Source.
var FeedSources = []string{FeedSourceCard, FeedSourceRegistry, FeedSourceAll}

// FeedRegistry is the Registry entry declaring a record's endpoint: the
// first (by registry, name, version) latest, undeleted entry that lists it
// among its remotes.
type FeedRegistry struct {
	Source, Name, Version string
	Status                string
	PublishedAt           string
	UpdatedAt             string
	// Findings are the entry's findings as cardcrawl judged it against the
	// vendored server.json schema; one of error severity means the
	// Registry would reject the entry if it were published today.
	Findings   finding.List
	ServerJSON string
}

// FeedReconcile is how the record's card was paired with a Registry
// entry: on what basis, and which fields differ (Diffs as stored, a JSON
// array).
type FeedReconcile struct {
	Source, Name, Version string
	Basis, Detail         string
	Diffs                 string
	ComputedAt            string
}

// ProbeCount is how many probes of an endpoint had one outcome, and when
// the first and last of them ran.
type ProbeCount struct {
	Outcome     string
	Count       int
	First, Last string
}

// validSource reports whether s is a FeedFilter.Source value.
func validSource(s string) bool {
	return s == "" || s == FeedSourceCard || s == FeedSourceRegistry || s == FeedSourceAll
}

// withRegistryOnly reports whether a read selects the endpoints only the
// Registry declares.
func (q FeedFilter) withRegistryOnly() bool {
	return q.Source == FeedSourceRegistry || q.Source == FeedSourceAll
}

// registryRecordColumns are a record of an endpoint only the Registry
// declares (x: url_norm, url, type; e its entry), with registryRecordJoins.
const registryRecordColumns = `x.url_norm, x.url, x.type, e.name, e.version, e.first_seen, e.last_seen,
	` + registryRecordUpdated + `, COALESCE(p.probed_at, ''), COALESCE(p.outcome, ''), COALESCE(p.transport, ''),
	COALESCE(p.protocol, ''), COALESCE(p.server_name, ''), COALESCE(p.server_version, ''), p.tool_count,
	COALESCE(p.result, ''), COALESCE(d.decision, ''), COALESCE(d.reason, ''),
	COALESCE(rc.category, ''), COALESCE(rc.source, ''), e.source`

// registryRecordUpdated is a Registry-only record's updatedAt: its
// entry's last change or its latest probe's last change of meaning
// (probe_meaning pm), whichever is later.
const registryRecordUpdated = `CASE WHEN COALESCE(pm.changed_at, '') > e.changed_at THEN pm.changed_at ELSE e.changed_at END`

// registryRecordJoins joins a registry record's latest probe, latest
// probe decision, when its probe's meaning last changed and its entry's
// category.
const registryRecordJoins = `LEFT JOIN probes p ON p.id = (SELECT MAX(p2.id) FROM probes p2 WHERE p2.remote_norm = x.url_norm)
	LEFT JOIN probe_decisions d ON d.id = (SELECT MAX(d2.id) FROM probe_decisions d2 WHERE d2.remote_norm = x.url_norm)
	LEFT JOIN probe_meaning pm ON pm.remote_norm = x.url_norm
	LEFT JOIN server_categories rc ON rc.kind = '` + KindRegistry + `' AND rc.registry = e.source AND rc.subject = e.name`

// scanRegistryRecords scans registryRecordColumns rows and closes them.
func scanRegistryRecords(rows *sql.Rows) ([]FeedServer, error) {
	var out []FeedServer
	err := scanEach(rows, func() error {
		var s FeedServer
		var p ProbeRow
		var tools sql.NullInt64
		var decision, reason string
		if err := rows.Scan(&s.EndpointNorm, &s.Endpoint, &s.Transport, &s.Name, &s.Version, &s.FirstSeen, &s.LastSeen,
			&s.UpdatedAt, &p.ProbedAt, &p.Outcome, &p.Transport, &p.Protocol, &p.ServerName, &p.ServerVersion, &tools,
			&p.Result, &decision, &reason, &s.Category, &s.CategorySource, &s.registrySource); err != nil {
			return err
		}
		s.kind = kindEndpoint
		s.Templated = strings.Contains(s.Endpoint, "{")
		s.Findings = []string{}
		p.Partial = partialResult(p.Result)
		p.Result = ""
		s.setProbe(p, tools, decision, reason)
		out = append(out, s)
		return nil
	})
	return out, err
}

// registryEntryConds adds the conditions on a Registry entry e (and its
// category rc) that the feed's reads share: changed since (the entry, or
// the meaning of a probe: probeChanged, a condition with one parameter,
// the time), a substring of the name, the category.
func registryEntryConds(conds []string, args []any, f FeedFilter, since, search, probeChanged string) ([]string, []any) {
	if since != "" {
		conds = append(conds, "(e.changed_at > ? OR "+probeChanged+")")
		args = append(args, since, since)
	}
	if search != "" {
		conds = append(conds, `lower(e.name) LIKE lower(?) ESCAPE '\'`)
		args = append(args, "%"+likeEscape(search)+"%")
	}
	return f.categoryCond(conds, args, "rc")
}

// registryPages read, a page after a cursor at a time, the records of the
// endpoints only the Registry declares: those declared now, and in a delta
// the tombstones of those gone. Each is a stream of a walk of its own.
var registryPages = []func(ctx context.Context, tx *sql.Tx, q FeedQuery, after FeedCursor, size int) ([]FeedServer, error){
	registryOnlyPage, registryGonePage}

// registryOnlyPage reads up to size endpoints after a cursor that a latest,
// active Registry entry declares and no listed card does, in key order,
// filtered as the feed's records are.
func registryOnlyPage(ctx context.Context, tx *sql.Tx, q FeedQuery, after FeedCursor, size int) ([]FeedServer, error) {
	if after.Kind > kindEndpoint || q.cardsOnly() {
		// Every endpoint sorts before the cards; none of these has a grade
		// or a listing.
		return nil, nil
	}
	conds, args := registryEntryConds([]string{"1 = 1"}, nil, q.FeedFilter, q.Since, q.Search, "pm.changed_at > ?")
	switch {
	case q.NotProbed:
		conds = append(conds, "p.id IS NULL")
	case q.Outcome != "":
		conds = append(conds, "p.outcome = ?")
		args = append(args, q.Outcome)
	}
	// Each endpoint is its first entry's row (firstEntry), read in the
	// index's order: a GROUP BY of the endpoints was materialized and
	// sorted whole for every page on SQLite (5.7 s to export 16,867), and
	// joining its entry on a subquery's row value made PostgreSQL compare
	// every entry with every endpoint (more than 5 minutes).
	rows, err := tx.QueryContext(ctx, `SELECT `+registryRecordColumns+`
		FROM (SELECT rr.url_norm AS url_norm, rr.source AS source, rr.name AS name, rr.version AS version,
		        `+leastOfEndpoint("url", "rr")+` AS url, `+leastOfEndpoint("type", "rr")+` AS type
		      FROM registry_remotes rr WHERE rr.url_norm > ? AND `+firstEntry("rr")+` AND `+registryOnlyRemote+`) x
		JOIN registry_entries e ON e.source = x.source AND e.name = x.name AND e.version = x.version
		`+registryRecordJoins+`
		WHERE `+strings.Join(conds, " AND ")+` ORDER BY x.url_norm LIMIT ?`,
		append(append([]any{after.Key}, args...), size)...)
	if err != nil {
		return nil, fmt.Errorf("registry-only servers: %w", err)
	}
	out, err := scanRegistryRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("registry-only servers: %w", err)
	}
	return out, nil
}

// registryGonePage reads the tombstones of the delta feed for endpoints
// only the Registry declared: those that left it after q.Since and that no
// card record stands for (live, or changed since then).
func registryGonePage(ctx context.Context, tx *sql.Tx, q FeedQuery, after FeedCursor, size int) ([]FeedServer, error) {
	if q.Since == "" || after.Kind > kindEndpoint || q.cardsOnly() {
		return nil, nil // as registryOnlyPage's, and no delta: no tombstones
	}
	conds := []string{"g.removed_at > ?", "g.url_norm > ?", `NOT EXISTS (SELECT 1 FROM feed_servers f WHERE f.kind = 0
		AND f.key = g.url_norm AND (f.removed_at IS NULL OR f.updated_at > ?))`}
	args := []any{q.Since, after.Key, q.Since}
	if q.Search != "" {
		conds = append(conds, `lower(g.name) LIKE lower(?) ESCAPE '\'`)
		args = append(args, "%"+likeEscape(q.Search)+"%")
	}
	page, err := collect(ctx, tx, func(rows *sql.Rows) (FeedServer, error) {
		var s FeedServer
		err := rows.Scan(&s.EndpointNorm, &s.Endpoint, &s.Name, &s.RemovedReason, &s.RemovedAt)
		s.kind, s.UpdatedAt, s.Findings = kindEndpoint, s.RemovedAt, []string{}
		return s, err
	}, `SELECT g.url_norm, g.url, g.name, g.reason, g.removed_at FROM registry_gone g WHERE `+strings.Join(conds, " AND ")+`
		ORDER BY g.url_norm LIMIT ?`, append(args, size)...)
	if err != nil {
		return nil, fmt.Errorf("servers gone from the Registry: %w", err)
	}
	return page, nil
}

// The queries of attachServerFacts, each by key (%s: the keys'
// placeholders); store/indexes_test.go holds them to their indexes. Those
// read for every page of an export select their text columns packed
// (packText), in the order written.
const registryFactsQuery = `SELECT rr.url_norm, e.source, e.name, e.version, e.status, e.published_at, e.updated_at,
		e.findings, e.server_json
		FROM registry_remotes rr JOIN registry_entries e ON e.source = rr.source AND e.name = rr.name AND e.version = rr.version
		WHERE rr.url_norm IN (%s) ORDER BY rr.url_norm, rr.source, rr.name, rr.version`

var (
	// An endpoint's probes in brief (probe_outcomes): a row an outcome,
	// however many probes it has had.
	probeHistoryQuery = `SELECT probe_count, ` + packText("remote_norm", "outcome", "first_at", "last_at") +
		` FROM probe_outcomes WHERE remote_norm IN (%s) ORDER BY remote_norm, outcome`
	reconcileFactsQuery = `SELECT id, ` + packText("card_key", "source", "name", "version", "basis", "detail", "diffs", "computed_at") +
		` FROM reconcile_results WHERE card_key IN (%s) AND kind = 'pair'`
	namespaceFactsQuery = `SELECT ` + packText("namespace", "kind", "domain", "method", "result", "checked_at") +
		` FROM namespaces WHERE namespace IN (%s)`
)

// rowsQuerier runs a query that returns rows: a transaction, or a feed
// read's prepared statements (readTx).
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryIn runs a query whose %s is an IN list of keys, padded (inList) so
// that its text is one of a few prepared once.
func queryIn(ctx context.Context, tx rowsQuerier, query string, keys []any) (*sql.Rows, error) {
	in, args := inList(keys)
	return tx.QueryContext(ctx, fmt.Sprintf(query, in), args...)
}

// queryKeys runs queryIn, or with span the same query over the range from
// the least key to the greatest: one seek and a walk along the index rather
// than a seek per key, for a page that holds every key of that range (the
// callers look rows up by key, so one the page does not hold is skipped).
func queryKeys(ctx context.Context, tx rowsQuerier, query string, keys []any, span bool) (*sql.Rows, error) {
	if !span {
		return queryIn(ctx, tx, query, keys)
	}
	lo, hi := keys[0].(string), keys[0].(string)
	for _, k := range keys[1:] {
		lo, hi = min(lo, k.(string)), max(hi, k.(string))
	}
	return tx.QueryContext(ctx, strings.Replace(query, " IN (%s)", " BETWEEN ? AND ?", 1), lo, hi)
}

// keyIndex groups a page's records by a key: the keys in the order first
// met (a query's IN list) and where each one's records are. A walk keeps
// one from page to page (reset), its map cleared rather than made again.
type keyIndex struct {
	at   map[string][]int
	keys []any
}

func (x *keyIndex) reset() {
	if x.at == nil {
		x.at = map[string][]int{}
	}
	clear(x.at)
	x.keys = x.keys[:0]
}

func (x *keyIndex) add(key string, i int) {
	if x.at[key] == nil {
		x.keys = append(x.keys, key)
	}
	x.at[key] = append(x.at[key], i)
}

// factScratch is what attachServerFacts keeps from one page to the next
// of a walk: the records by endpoint, card and namespace, and by category
// subject.
type factScratch struct {
	byNorm, byCard, byNS keyIndex
	categories           categoryScratch
}

// categoriesQuery reads the categories of a page's records of the read
// model of one kind (%s: the keys' placeholders), packed (packText).
func categoriesQuery(kind string) string {
	return `SELECT ` + packText("subject", "category", "source") + ` FROM server_categories
		WHERE kind = '` + kind + `' AND registry = '' AND subject IN (%s)`
}

var endpointCategoriesQuery, cardCategoriesQuery = categoriesQuery(KindEndpoint), categoriesQuery(KindCard)

// categoryScratch is what attachCategories keeps from one page to the
// next: the records by endpoint and by card (those without remotes).
type categoryScratch struct{ endpoints, cards keyIndex }

// attachCategories sets the category of each record of the read model in page
// (FeedServer.stored) from its row in server_categories: none leaves it
// empty, as a record without a stored category is. A record only the
// Registry declares keeps the category of its entry, read with it. With
// span, each kind's keys are read by their range (queryKeys).
func (c *categoryScratch) attachCategories(ctx context.Context, tx rowsQuerier, page []FeedServer, span bool) error {
	c.endpoints.reset()
	c.cards.reset()
	for i := range page {
		switch s := &page[i]; {
		case !s.stored:
		case s.kind == kindEndpoint:
			c.endpoints.add(s.EndpointNorm, i)
		default:
			c.cards.add(s.CardKey, i)
		}
	}
	var subject, category, source string
	dests := []*string{&subject, &category, &source}
	for _, by := range []struct {
		query string
		index *keyIndex
	}{{endpointCategoriesQuery, &c.endpoints}, {cardCategoriesQuery, &c.cards}} {
		if len(by.index.keys) == 0 {
			continue
		}
		rows, err := queryKeys(ctx, tx, by.query, by.index.keys, span)
		if err != nil {
			return fmt.Errorf("categories of the feed: %w", err)
		}
		var packed string
		err = scanEach(rows, func() error {
			if err := rows.Scan(&packed); err != nil {
				return err
			}
			if err := unpackText(packed, dests); err != nil {
				return err
			}
			for _, i := range by.index.at[subject] {
				page[i].Category, page[i].CategorySource = category, source
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("categories of the feed: %w", err)
		}
	}
	return nil
}

// attachServerFacts reads, for a page of records, their categories
// (attachCategories), the Registry entry declaring each endpoint, the
// reconciliation of each card that paired, the namespace check of each
// name and each endpoint's probe history: a few queries, whatever the page
// holds; with span, the endpoints' by their range (queryKeys).
func (f *factScratch) attachServerFacts(ctx context.Context, tx rowsQuerier, page []FeedServer, want Facts, span bool) error {
	if len(page) == 0 {
		return nil
	}
	want = wantAll(want)
	f.byNorm.reset()
	f.byCard.reset()
	f.byNS.reset()
	byNorm, byCard := f.byNorm.at, f.byCard.at
	for i := range page {
		s := &page[i]
		if s.EndpointNorm != "" {
			f.byNorm.add(s.EndpointNorm, i)
		}
		if s.CardKey != "" && s.paired {
			f.byCard.add(s.CardKey, i)
		}
	}
	norms, cards := f.byNorm.keys, f.byCard.keys
	if want&FactCategory != 0 {
		if err := f.categories.attachCategories(ctx, tx, page, span); err != nil {
			return err
		}
	}
	if len(norms) > 0 && want&FactRegistry != 0 {
		rows, err := queryKeys(ctx, tx, registryFactsQuery, norms, span)
		if err != nil {
			return fmt.Errorf("registry entries of the feed: %w", err)
		}
		err = scanEach(rows, func() error {
			var norm string
			var r FeedRegistry
			if err := rows.Scan(&norm, &r.Source, &r.Name, &r.Version, &r.Status, &r.PublishedAt, &r.UpdatedAt,
				findingsScan{&r.Findings}, &r.ServerJSON); err != nil {
				return err
			}
			for _, i := range byNorm[norm] {
				if page[i].Registry == nil {
					page[i].Registry = &r
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("registry entries of the feed: %w", err)
		}
	}
	if len(norms) > 0 && want&FactProbeHistory != 0 {
		rows, err := queryKeys(ctx, tx, probeHistoryQuery, norms, span)
		if err != nil {
			return fmt.Errorf("probe history: %w", err)
		}
		history := map[string][]ProbeCount{}
		var norm, packed string
		var c ProbeCount
		dests := []*string{&norm, &c.Outcome, &c.First, &c.Last}
		err = scanEach(rows, func() error {
			if err := rows.Scan(&c.Count, &packed); err != nil {
				return err
			}
			if err := unpackText(packed, dests); err != nil {
				return err
			}
			history[norm] = append(history[norm], c) // in outcome order
			return nil
		})
		if err != nil {
			return fmt.Errorf("probe history: %w", err)
		}
		for norm, h := range history {
			for _, i := range byNorm[norm] {
				page[i].ProbeHistory = h
			}
		}
	}
	if len(cards) > 0 && want&FactReconcile != 0 {
		pairID := map[string]int64{}
		rows, err := queryIn(ctx, tx, reconcileFactsQuery, cards)
		if err != nil {
			return fmt.Errorf("reconciliation of the feed: %w", err)
		}
		var packed string
		err = scanEach(rows, func() error {
			var key string
			var id int64
			var r FeedReconcile
			if err := rows.Scan(&id, &packed); err != nil {
				return err
			}
			if err := unpackText(packed, []*string{&key, &r.Source, &r.Name, &r.Version, &r.Basis, &r.Detail, &r.Diffs,
				&r.ComputedAt}); err != nil {
				return err
			}
			// A card pairs with one entry; should it pair with more, the
			// first recorded is the one shown, as diff lists them.
			if first, ok := pairID[key]; ok && first < id {
				return nil
			}
			pairID[key] = id
			for _, i := range byCard[key] {
				page[i].Reconcile = &r
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reconciliation of the feed: %w", err)
		}
	}
	if want&FactNamespace == 0 {
		return nil
	}
	for i := range page {
		name := page[i].Name
		if name == "" && page[i].Registry != nil {
			name = page[i].Registry.Name
		}
		if ns, _, found := strings.Cut(name, "/"); found && ns != "" {
			f.byNS.add(ns, i)
		}
	}
	byNS, spaces := f.byNS.at, f.byNS.keys
	if len(spaces) == 0 {
		return nil
	}
	rows, err := queryIn(ctx, tx, namespaceFactsQuery, spaces)
	if err != nil {
		return fmt.Errorf("namespaces of the feed: %w", err)
	}
	var packed string
	err = scanEach(rows, func() error {
		var n NamespaceRow
		if err := rows.Scan(&packed); err != nil {
			return err
		}
		if err := unpackText(packed, []*string{&n.Namespace, &n.Kind, &n.Domain, &n.Method, &n.Result, &n.CheckedAt}); err != nil {
			return err
		}
		for _, i := range byNS[n.Namespace] {
			page[i].Namespace = &n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("namespaces of the feed: %w", err)
	}
	return nil
}

// scanEach calls scan for every row and closes rows.
func scanEach(rows *sql.Rows, scan func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := scan(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// touchFeedRecords moves updatedAt, and the change counter, of the live
// feed records that where (a condition on feed_servers) selects, if any:
// what the feed says of them beyond their card changed. seq holds the
// transaction's change number once taken (0 before), so one transaction
// takes one.
func touchFeedRecords(tx *txw, now string, seq *int64, where string, args ...any) error {
	where = `removed_at IS NULL AND ` + where
	var found bool
	if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM feed_servers WHERE `+where+`)`, args...).Scan(&found); err != nil {
		return err
	}
	if !found {
		return nil
	}
	if err := takeFeedSeq(tx, seq); err != nil {
		return err
	}
	_, err := tx.exec(`UPDATE feed_servers SET updated_at = ?, seq = ? WHERE `+where, append([]any{now, *seq}, args...)...)
	return err
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The person-facing pages (internal/site) read servers through the queries
// in this file and site_detail.go. A server is what the feed calls one:
// an endpoint (kind KindEndpoint, subject its normalised URL) that a listed
// card or a latest, undeleted Registry entry declares, or a listed card that
// declares no remote (kind KindCard, subject the card key). Every query
// pages with a keyset on (kind, subject) and holds one page.

// SiteKey names one server: its kind and subject.
type SiteKey struct {
	Kind    string
	Subject string
}

// SiteRow is one server as the index shows it. Name, Title, Description
// and Grade come from the best-graded listed card (ties to the smallest
// key, as Servers), or for an endpoint only the Registry declares, from
// the first Registry entry declaring it (Name only; Title and Description
// are inside ServerJSON).
type SiteRow struct {
	SiteKey
	URL            string // the endpoint as written ("" for a card)
	Name           string
	Title          string
	Description    string
	Grade          string // "" when no card describes it
	CardKey        string // the best card ("" when none)
	InCards        bool   // a listed card declares it
	InRegistry     bool   // a latest, undeleted Registry entry declares it
	Category       string // "" when none
	CategorySource string
	Outcome        string // latest probe outcome, "" when never probed
	NSMethod       string // how the name's namespace was verified: http, dns, github, none; "" when unknown
	// RegistryServerJSON is the server.json of the first Registry entry
	// declaring the endpoint ("" when none).
	RegistryServerJSON string
}

// Sources lists where the server was found: "card", "registry".
func (r SiteRow) Sources() []string {
	var out []string
	if r.InCards {
		out = append(out, SourceCard)
	}
	if r.InRegistry {
		out = append(out, SourceRegistry)
	}
	return out
}

// SiteFilter selects servers for the index. Empty fields select all; the
// value "none" of Category, Outcome and Grade selects the servers without
// one. NSMethod's "none" is a method (the namespace was checked and
// nothing verified it), and NSUnknown selects the servers whose namespace
// was never checked.
type SiteFilter struct {
	// Q matches, case-insensitively, a substring of the name, title,
	// description, endpoint URL or a listing domain, or of the server.json
	// of a Registry entry declaring the endpoint.
	Q        string
	Category string
	Source   string // card or registry
	Outcome  string
	Grade    string
	NSMethod string
	// ListingFinding keeps servers a listing of which carries this code
	// (FeedFilter.ListingFinding).
	ListingFinding string
	// After is the last key of the previous page (zero: the first page).
	After SiteKey
	// Limit is the page size (default 30, at most 200).
	Limit int
}

// SitePage is one page of servers; Next is the key to continue after, nil
// on the last page.
type SitePage struct {
	Rows []SiteRow
	Next *SiteKey
}

// namespaceOf is the SQL for the namespace a name gives: what precedes its
// first "/", as namespace.Of reads it for the namespace pass; NULL without
// one. strpos is the dialect's function, or a format verb that will name
// it.
func namespaceOf(name, strpos string) string {
	return fmt.Sprintf(`CASE WHEN %[2]s(%[1]s, '/') > 0 THEN substr(%[1]s, 1, %[2]s(%[1]s, '/') - 1) END`, name, strpos)
}

// siteColumns projects one server of a segment (x: kind, subject, url,
// card_key, in_cards; %[1]s) into a SiteRow's columns (%[2]s: the
// dialect's strpos). A name's namespace (namespaceOf) is found by its key,
// where comparing every namespace with the name's start read all of them
// for each server. The Registry entry is the first (by source, name,
// version) latest, undeleted entry declaring the endpoint (firstEntry); its
// category stands in when the endpoint has none of its own.
var siteColumns = `SELECT x.kind AS kind, x.subject AS subject, x.url AS url,
	COALESCE(c.name, e.name, '') AS name, COALESCE(c.title, '') AS title, COALESCE(c.description, '') AS description,
	COALESCE(c.grade, '') AS grade, COALESCE(c.key, '') AS card_key, x.in_cards AS in_cards,
	` + inRegistryOf("x.kind = 'endpoint'", "x.subject") + ` AS in_registry,
	COALESCE(sc.category, rc.category, '') AS category, COALESCE(sc.source, rc.source, '') AS category_source,
	COALESCE((SELECT p.outcome FROM probes p WHERE x.kind = 'endpoint' AND p.remote_norm = x.subject ORDER BY p.id DESC LIMIT 1), '') AS outcome,
	` + nsMethodOf("COALESCE(c.name, e.name, '')") + ` AS ns_method,
	COALESCE(e.server_json, '') AS server_json
	FROM (%[1]s) x
	LEFT JOIN cards c ON c.key = x.card_key
	` + firstEntryOf("x.kind = 'endpoint'", "x.subject") + `
	LEFT JOIN server_categories sc ON sc.kind = x.kind AND sc.registry = '' AND sc.subject = x.subject
	` + registryCategory

// inRegistryOf is 1 when a Registry entry declares the server (a subject
// that isEndpoint), else 0.
func inRegistryOf(isEndpoint, subject string) string {
	return `CASE WHEN ` + isEndpoint + ` AND EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = ` + subject +
		`) THEN 1 ELSE 0 END`
}

// firstEntryOf joins a server (a subject that isEndpoint) to the first
// Registry entry declaring it (firstEntry): e, through its remote fr.
func firstEntryOf(isEndpoint, subject string) string {
	return `LEFT JOIN registry_remotes fr ON ` + isEndpoint + ` AND fr.url_norm = ` + subject + ` AND ` + firstEntry("fr") + `
	LEFT JOIN registry_entries e ON e.source = fr.source AND e.name = fr.name AND e.version = fr.version`
}

// registryCategory joins that entry's category (rc), which stands in for
// a server's own.
const registryCategory = `LEFT JOIN server_categories rc ON rc.kind = 'registry' AND rc.registry = e.source AND rc.subject = e.name`

// nsMethodOf is how the namespace of the server named by name was
// verified, empty when unknown; %[2]s is the dialect's strpos.
func nsMethodOf(name string) string {
	return `COALESCE((SELECT n.method FROM namespaces n
	          WHERE n.namespace = ` + namespaceOf(name, "%[2]s") + `), '')`
}

// The segments, in key order: cards without remotes ('card' < 'endpoint'),
// then endpoints, which are the endpoints of listed cards merged with
// those only the Registry declares. Each takes the subject to start after,
// and {in} is where a search narrows it to its candidates (siteSegment).
var (
	siteCards = siteSegment{`SELECT 'card' AS kind, c0.key AS subject, '' AS url, c0.key AS card_key, 1 AS in_cards FROM cards c0
		WHERE c0.key > ? {in} AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c0.key AND l.active = 1 AND l.remote_norm = '')`, "c0.key", nthKey("cards", "key")}
	siteCardEndpoints = siteSegment{`SELECT 'endpoint' AS kind, r.url_norm AS subject, r.url AS url, (` + bestCardOf("r.url_norm") + `) AS card_key, 1 AS in_cards
		FROM remotes r WHERE r.url_norm > ? {in} AND EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = r.url_norm AND l.active = 1)`, "r.url_norm", nthKey("remotes", "url_norm")}
	// One row an endpoint, its first entry's (firstEntry), in the index's
	// order: grouped by endpoint, SQLite computed and sorted every one of
	// them for each page (150-230 ms for 16,867).
	siteRegistryEndpoints = siteSegment{`SELECT 'endpoint' AS kind, rr.url_norm AS subject,
		  ` + leastOfEndpoint("url", "rr") + ` AS url, NULL AS card_key, 0 AS in_cards
		FROM registry_remotes rr WHERE rr.url_norm > ? {in} AND ` + firstEntry("rr") + `
		  AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = rr.url_norm AND l.active = 1)`, "rr.url_norm",
		nthKey("registry_remotes", "url_norm")}
	siteEndpoints = []siteSegment{siteCardEndpoints, siteRegistryEndpoints}
)

// siteSegment is one segment's query, its subject column, and the query
// giving the subject a given number of its driving table's keys past
// another (nthKey; for windows: siteWalk).
type siteSegment struct{ query, subject, nth string }

// nthKey is the query for the key of table's column that lies a given
// number of keys past another (arguments: the key, the number less one).
func nthKey(table, column string) string {
	return `SELECT ` + column + ` FROM ` + table + ` WHERE ` + column + ` > ? ORDER BY ` + column + ` LIMIT 1 OFFSET ?`
}

// sql is the segment's query for a span: its subject bounded above when
// the span is, and narrowed to n subjects when n > 0. The arguments follow
// the one to start after, in that order (siteSpan.args).
func (s siteSegment) sql(sp siteSpan) string {
	in := ""
	if sp.to != "" {
		in = "AND " + s.subject + " <= ? "
	}
	if len(sp.in) > 0 {
		in += "AND " + s.subject + " IN (" + placeholders(len(sp.in)) + ")"
	}
	return strings.Replace(s.query, "{in}", in, 1)
}

// siteSpan is the subjects a page query reads: after after, up to to (when
// not empty; subjects are never empty), and only those in in (when not
// empty).
type siteSpan struct {
	after, to string
	in        []string
}

// args are the span's arguments, in the order sql places them.
func (sp siteSpan) args() []any {
	args := []any{sp.after}
	if sp.to != "" {
		args = append(args, sp.to)
	}
	for _, k := range sp.in {
		args = append(args, k)
	}
	return args
}

// siteFilterSQL turns a filter into a condition on siteColumns' columns
// (table alias s) and its arguments.
func siteFilterSQL(f SiteFilter) (string, []any) {
	var conds []string
	var args []any
	if q := strings.TrimSpace(f.Q); q != "" {
		pat := "%" + likeEscaper.Replace(q) + "%"
		conds = append(conds, `(lower(s.name) LIKE lower(?) ESCAPE '\' OR lower(s.title) LIKE lower(?) ESCAPE '\'
			OR lower(s.description) LIKE lower(?) ESCAPE '\' OR lower(s.url) LIKE lower(?) ESCAPE '\'
			OR lower(s.server_json) LIKE lower(?) ESCAPE '\'
			OR EXISTS (SELECT 1 FROM listings l WHERE l.active = 1 AND lower(l.domain) LIKE lower(?) ESCAPE '\'
			           AND ((s.kind = 'endpoint' AND l.remote_norm = s.subject)
			             OR (s.kind = 'card' AND l.card_key = s.subject AND l.remote_norm = ''))))`)
		args = append(args, pat, pat, pat, pat, pat, pat)
	}
	eq := func(col, v string) {
		switch v {
		case "":
		case "none":
			conds = append(conds, col+" = ''")
		default:
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("s.category", f.Category)
	eq("s.outcome", f.Outcome)
	eq("s.grade", f.Grade)
	switch f.NSMethod {
	case "":
	case NSUnknown:
		conds = append(conds, "s.ns_method = ''")
	default:
		conds = append(conds, "s.ns_method = ?")
		args = append(args, f.NSMethod)
	}
	if f.ListingFinding != "" {
		conds = append(conds, `EXISTS (SELECT 1 FROM listings l WHERE l.active = 1 AND `+codedListing("l")+`
			AND ((s.kind = 'endpoint' AND l.remote_norm = s.subject) OR (s.kind = 'card' AND l.card_key = s.subject
			AND l.remote_norm = '')))`)
		args = append(args, codeLike(f.ListingFinding))
	}
	switch f.Source {
	case SourceCard:
		conds = append(conds, "s.in_cards = 1")
	case SourceRegistry:
		conds = append(conds, "s.in_registry = 1")
	}
	if len(conds) == 0 {
		return noSiteFilter, nil
	}
	return strings.Join(conds, " AND "), args
}

// siteSelect is what a page of a filter reads: the segments that can hold
// a server it selects, and its condition on siteColumns' columns.
type siteSelect struct {
	cards     bool          // siteCards
	endpoints []siteSegment // of siteEndpoints
	cond      string
	args      []any
}

// siteSelectOf is f's siteSelect. A card without remotes is never probed,
// no Registry entry declares it, and it has its own grade. An endpoint a
// listed card declares has that card's grade (SaveDomain stores a
// listing's card with it, every card has one of servercard.Grades, and
// cards are never removed); one only the Registry declares has none.
func siteSelectOf(f SiteFilter) siteSelect {
	cond, args := siteFilterSQL(f)
	sel := siteSelect{cards: true, endpoints: siteEndpoints, cond: cond, args: args}
	if (f.Outcome != "" && f.Outcome != "none") || f.Source == SourceRegistry || f.Grade == "none" {
		sel.cards = false
	}
	switch {
	case f.Grade == "none":
		sel.endpoints = []siteSegment{siteRegistryEndpoints}
	case f.Grade != "" || f.Source == SourceCard:
		sel.endpoints = []siteSegment{siteCardEndpoints}
	}
	return sel
}

// NSUnknown is SiteFilter.NSMethod's value for a namespace never checked.
const NSUnknown = "unknown"

// noSiteFilter is the condition of a filter that selects every server.
const noSiteFilter = "1 = 1"

// likeEscaper escapes LIKE's wildcards (with ESCAPE '\'), so a search for
// "50%" or "a_b" matches those characters.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ErrBadFilter is returned for a filter value no server can have.
var ErrBadFilter = errors.New("bad filter")

const (
	defaultSiteLimit = 30
	maxSiteLimit     = 200
)

// SiteServers returns one page of servers matching f, in key order.
func (db *DB) SiteServers(ctx context.Context, f SiteFilter) (SitePage, error) {
	if f.Source != "" && f.Source != SourceCard && f.Source != SourceRegistry {
		return SitePage{}, fmt.Errorf("%w: source must be card or registry, not %q", ErrBadFilter, f.Source)
	}
	if f.After.Kind != "" && f.After.Kind != KindCard && f.After.Kind != KindEndpoint {
		return SitePage{}, fmt.Errorf("%w: no server kind %q", ErrBadFilter, f.After.Kind)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultSiteLimit
	}
	limit = min(limit, maxSiteLimit)
	sel := siteSelectOf(f)
	after := f.After
	if !sel.cards && after.Kind != KindEndpoint {
		// Cards sort first; skipping them spares reading every one.
		after = SiteKey{Kind: KindEndpoint}
	}
	var rows []SiteRow
	var err error
	q, ix := strings.TrimSpace(f.Q), db.search.Load()
	facets := db.siteFacetsOf(f)
	if ix != nil && ix.Ready() && searchable(q) {
		rows, err = db.siteSearch(ctx, ix, q, sel, facets, after, limit+1)
	} else {
		rows, err = db.siteFaceted(ctx, facets, sel, after, limit+1)
	}
	if err != nil {
		return SitePage{}, err
	}
	var out SitePage
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1].SiteKey
		out.Next = &last
	}
	out.Rows = rows
	return out, nil
}

// siteScan reads up to n servers after a key that sel selects, walking
// its segments in key order.
func (db *DB) siteScan(ctx context.Context, sel siteSelect, after SiteKey, n int) ([]SiteRow, error) {
	var rows []SiteRow
	// Cards first, unless the page starts among the endpoints.
	if sel.cards && after.Kind != KindEndpoint {
		page, err := db.siteWalk(ctx, sel.cond, sel.args, []siteSegment{siteCards}, after.Subject, n)
		if err != nil {
			return nil, err
		}
		rows = page
	}
	if len(rows) < n && len(sel.endpoints) > 0 {
		start := ""
		if after.Kind == KindEndpoint {
			start = after.Subject
		}
		page, err := db.siteWalk(ctx, sel.cond, sel.args, sel.endpoints, start, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, page...)
	}
	return rows, nil
}

// firstSiteWindow is how many driving keys a windowed walk's first query
// spans; each next one spans twice as many.
const firstSiteWindow = 1024

// siteWalk reads up to n rows of the segments after a subject, filtered
// by cond. Where the dialect asks for it (windowPages) and there is a
// filter, it reads them in windows of driving keys, each twice the last,
// until it has n: PostgreSQL cannot estimate a filter on the columns the
// page's joins compute, guesses a few dozen matches, and so computes every
// server's row before sorting, however many match. Bounded to a window,
// a page of a common value is read from the first window, and a walk to
// a rare one costs about what one pass over every server does.
func (db *DB) siteWalk(ctx context.Context, cond string, args []any, segments []siteSegment, after string, n int) ([]SiteRow, error) {
	first := db.siteWindow
	if first == 0 && db.dialect.windowPages {
		first = firstSiteWindow
	}
	if first == 0 || cond == noSiteFilter {
		return db.sitePage(ctx, cond, args, segments, siteSpan{after: after}, n)
	}
	var rows []SiteRow
	for w := first; len(rows) < n; w *= 2 {
		to, err := db.siteWindowEnd(ctx, segments, after, w)
		if err != nil {
			return nil, err
		}
		page, err := db.sitePage(ctx, cond, args, segments, siteSpan{after: after, to: to}, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, page...)
		if to == "" {
			break
		}
		after = to
	}
	return rows, nil
}

// siteWindowEnd is the last subject of the window of w driving keys
// after a subject: the least of the segments' w-th keys (in the database's
// order), so no segment's window holds more than w of them. "" when no
// segment has w more keys (the window runs to the end).
func (db *DB) siteWindowEnd(ctx context.Context, segments []siteSegment, after string, w int) (string, error) {
	var nths []string
	var args []any
	for _, seg := range segments {
		nths = append(nths, `SELECT (`+seg.nth+`) AS k`)
		args = append(args, after, w-1)
	}
	var to sql.NullString
	q := `SELECT MIN(k) FROM (` + strings.Join(nths, " UNION ALL ") + `) w`
	if err := db.sql.QueryRowContext(ctx, q, args...).Scan(&to); err != nil {
		return "", fmt.Errorf("site window: %w", err)
	}
	return to.String, nil
}

// siteSearchChunk is how many candidates one query of a search reads.
const siteSearchChunk = 256

// siteSearch reads up to n servers after a key that sel selects, among
// the candidates the index finds for q; for a common term, among those
// of the filter's facets, or walking them all.
func (db *DB) siteSearch(ctx context.Context, ix *SearchIndex, q string, sel siteSelect, facets []*siteFacet, after SiteKey, n int) ([]SiteRow, error) {
	keys, common, err := ix.siteCandidates(ctx, q, after)
	if err != nil {
		return nil, err
	}
	if common {
		return db.siteFaceted(ctx, facets, sel, after, n)
	}
	return db.siteRowsAmong(ctx, sel, keys, n)
}

// siteRowsAmong reads up to n servers that sel selects among candidates in
// key order, a chunk of them at a time.
func (db *DB) siteRowsAmong(ctx context.Context, sel siteSelect, keys []SiteKey, n int) ([]SiteRow, error) {
	var rows []SiteRow
	for len(rows) < n && len(keys) > 0 {
		chunk := keys[:min(len(keys), siteSearchChunk)]
		keys = keys[len(chunk):]
		more, err := db.siteRowsOf(ctx, sel, chunk, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	return rows, nil
}

// siteRowsOf reads up to n of the servers keys names (in key order) that
// sel selects.
func (db *DB) siteRowsOf(ctx context.Context, sel siteSelect, keys []SiteKey, n int) ([]SiteRow, error) {
	cards, endpoints := subjectsByKind(keys)
	var rows []SiteRow
	if len(cards) > 0 && sel.cards {
		page, err := db.sitePage(ctx, sel.cond, sel.args, []siteSegment{siteCards}, siteSpan{in: cards}, n)
		if err != nil {
			return nil, err
		}
		rows = page
	}
	if len(endpoints) > 0 && len(sel.endpoints) > 0 && len(rows) < n {
		page, err := db.sitePage(ctx, sel.cond, sel.args, sel.endpoints, siteSpan{in: endpoints}, n-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, page...)
	}
	return rows, nil
}

// subjectsByKind splits keys into the subjects of cards and of endpoints,
// keeping their order.
func subjectsByKind(keys []SiteKey) (cards, endpoints []string) {
	for _, k := range keys {
		if k.Kind == KindCard {
			cards = append(cards, k.Subject)
		} else {
			endpoints = append(endpoints, k.Subject)
		}
	}
	return cards, endpoints
}

// sitePage reads up to limit rows of the given segments (merged in
// subject order) in a span, filtered by cond.
func (db *DB) sitePage(ctx context.Context, cond string, condArgs []any, segments []siteSegment, span siteSpan, limit int) ([]SiteRow, error) {
	var arms []string
	var args []any
	for i, seg := range segments {
		arm := `SELECT * FROM (` + fmt.Sprintf(siteColumns, seg.sql(span), db.dialect.strpos) + `) s WHERE ` + cond
		args = append(args, span.args()...)
		args = append(args, condArgs...)
		if db.dialect.limitArms {
			arm = `SELECT * FROM (` + arm + ` ORDER BY 2 LIMIT ?) a` + strconv.Itoa(i)
			args = append(args, limit)
		}
		arms = append(arms, arm)
	}
	q := strings.Join(arms, " UNION ALL ") + ` ORDER BY 2 LIMIT ?`
	args = append(args, limit)
	rows, err := collect(ctx, db.sql, scanSiteRow, q, args...)
	if err != nil {
		return nil, fmt.Errorf("site servers: %w", err)
	}
	return rows, nil
}

func scanSiteRow(rows *sql.Rows) (SiteRow, error) {
	var r SiteRow
	err := rows.Scan(&r.Kind, &r.Subject, &r.URL, &r.Name, &r.Title, &r.Description, &r.Grade, &r.CardKey, &r.InCards,
		&r.InRegistry, &r.Category, &r.CategorySource, &r.Outcome, &r.NSMethod, &r.RegistryServerJSON)
	return r, err
}

// SiteCount is how many servers have one value of a column.
type SiteCount struct {
	Value string
	Count int
}

// SiteCounts are the summary page's counts of servers.
type SiteCounts struct {
	Total      int
	BySource   []SiteCount // card, registry, card+registry
	ByGrade    []SiteCount
	ByOutcome  []SiteCount
	ByCategory []SiteCount
	ByNSMethod []SiteCount
	// ByListingFinding counts, for each code an active listing carries,
	// the servers one of whose listings carries it (ListingRecord.Codes);
	// servers whose listings carry none are not counted here.
	ByListingFinding []SiteCount
}

// siteCountRecords projects the live feed records into the columns
// siteCountColumns read, as siteColumns would for the same servers: a
// record's grade and name are its describing card's, its outcome the
// latest probe's. Its one format argument is %[2]s, the dialect's strpos,
// as in siteColumns.
var siteCountRecords = `SELECT 1 AS in_cards, ` + inRegistryOf("f.kind = 0", "f.key") + ` AS in_registry,
	f.grade AS grade, f.probe_outcome AS outcome, COALESCE(sc.category, rc.category, '') AS category,
	` + nsMethodOf("f.name") + ` AS ns_method
	FROM ` + feedFrom + `
	` + firstEntryOf("f.kind = 0", "f.key") + `
	` + registryCategory + `
	WHERE f.removed_at IS NULL`

// siteCountColumns are the columns SiteCounts groups by.
var siteCountColumns = []struct {
	expr string
	dst  func(*SiteCounts) *[]SiteCount
}{
	{`CASE WHEN s.in_cards = 1 AND s.in_registry = 1 THEN 'card+registry' WHEN s.in_cards = 1 THEN 'card' ELSE 'registry' END`,
		func(c *SiteCounts) *[]SiteCount { return &c.BySource }},
	{`s.grade`, func(c *SiteCounts) *[]SiteCount { return &c.ByGrade }},
	{`s.outcome`, func(c *SiteCounts) *[]SiteCount { return &c.ByOutcome }},
	{`s.category`, func(c *SiteCounts) *[]SiteCount { return &c.ByCategory }},
	{`s.ns_method`, func(c *SiteCounts) *[]SiteCount { return &c.ByNSMethod }},
}

// SiteCounts counts every server by source, grade, latest probe outcome,
// category and namespace method in one pass of SQL, grouped by all five
// at once: the rows never reach memory, only their combinations of
// values, which the vocabularies bound. A pass per column read every
// server five times. The servers of listed cards are their live feed
// records (siteCountRecords), which hold each one's describing card and
// latest outcome: choosing the card again for every endpoint was most
// of the pass. The servers by their listings' codes come from the
// listings that carry some (listingFindingCounts).
func (db *DB) SiteCounts(ctx context.Context) (SiteCounts, error) {
	var out SiteCounts
	all := []string{
		fmt.Sprintf(siteCountRecords, "", db.dialect.strpos),
		`SELECT in_cards, in_registry, grade, outcome, category, ns_method FROM (` +
			fmt.Sprintf(siteColumns, siteRegistryEndpoints.sql(siteSpan{}), db.dialect.strpos) + `) r`,
	}
	args := []any{""}
	var cols []string
	for i, col := range siteCountColumns {
		cols = append(cols, fmt.Sprintf("%s AS v%d", col.expr, i))
	}
	tallies := make([]map[string]int, len(siteCountColumns))
	for i := range tallies {
		tallies[i] = map[string]int{}
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT v0, v1, v2, v3, v4, COUNT(*) FROM (SELECT `+strings.Join(cols, ", ")+`
		FROM (`+strings.Join(all, " UNION ALL ")+`) s) g GROUP BY v0, v1, v2, v3, v4`, args...)
	if err != nil {
		return out, fmt.Errorf("site counts: %w", err)
	}
	err = scanEach(rows, func() error {
		var v [5]string
		var n int
		if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &n); err != nil {
			return err
		}
		for i := range v {
			tallies[i][v[i]] += n
		}
		out.Total += n
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("site counts: %w", err)
	}
	for i, col := range siteCountColumns {
		var counts []SiteCount
		for v, n := range tallies[i] {
			counts = append(counts, SiteCount{Value: v, Count: n})
		}
		*col.dst(&out) = mostFirst(counts)
	}
	if out.ByListingFinding, err = db.listingFindingCounts(ctx); err != nil {
		return out, fmt.Errorf("site counts: %w", err)
	}
	return out, nil
}

// listingFindingCounts counts the servers by the codes their listings
// carry, from the coded listings' index (listings_coded), which holds
// each server's rows together: a server's codes are gathered from its
// rows and counted once each, so memory holds one server's codes and a
// count per code.
func (db *DB) listingFindingCounts(ctx context.Context) ([]SiteCount, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT l.remote_norm, l.card_key, l.entry_codes FROM listings l
		WHERE l.entry_codes <> '' AND l.active = 1 ORDER BY l.remote_norm, l.card_key`)
	if err != nil {
		return nil, err
	}
	tally := map[string]int{}
	var server feedKey
	codes := map[string]bool{}
	flush := func() {
		for c := range codes {
			tally[c]++
		}
		clear(codes)
	}
	err = scanEach(rows, func() error {
		var norm, card, text string
		if err := rows.Scan(&norm, &card, &text); err != nil {
			return err
		}
		if key := recordOf(norm, card); key != server {
			flush()
			server = key
		}
		for _, c := range listingCodes(text) {
			codes[c] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	flush()
	var counts []SiteCount
	for c, n := range tally {
		counts = append(counts, SiteCount{Value: c, Count: n})
	}
	return mostFirst(counts), nil
}

// mostFirst sorts counts as the summary lists them: most servers first,
// then by value.
func mostFirst(counts []SiteCount) []SiteCount {
	slices.SortFunc(counts, func(a, b SiteCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Value, b.Value)
	})
	return counts
}

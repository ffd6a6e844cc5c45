package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FeedServer is one feed record as the read model holds it: a remote
// endpoint merged on its normalised URL across cards and domains, or a card
// that declares no remote (EndpointNorm ""), described by one card.
type FeedServer struct {
	EndpointNorm string
	Endpoint     string
	Transport    string
	Templated    bool

	CardKey     string
	CardURL     string // "" when the card came inline
	CardInline  bool
	CardSHA256  string
	Name        string
	Title       string
	Version     string
	Description string
	WebsiteURL  string
	Repository  string // the card's repository object as JSON, "" when none
	Grade       string
	Findings    []string // distinct finding codes, sorted

	FirstSeen string
	LastSeen  string
	Probe     *ProbeRow      // the latest probe, nil when never probed
	Decision  *ProbeDecision // the latest probe decision, nil when none

	// UpdatedAt is when its meaning last changed (see migration 0005).
	UpdatedAt string
	// RemovedAt is set on a tombstone: when it stopped being listed, and
	// RemovedReason why (RemovedNotListed, RemovedCatalogGone).
	RemovedAt     string
	RemovedReason string

	// Listings is its listing chain, read from listings by join.
	Listings []Listing

	// Category is its stored category ("" when none was computed or no
	// rule matched) and CategorySource where it came from (name,
	// description, tools); read from server_categories by join.
	Category, CategorySource string

	// What else is known about the same server, read by key for each page
	// (feedrecords.go): the Registry entry declaring the endpoint (nil when
	// none; a record with no CardKey is one only the Registry declares),
	// the reconciliation of its card (nil when not paired), the check of
	// its name's namespace (nil when never checked), and its probes counted
	// by outcome.
	Registry     *FeedRegistry
	Reconcile    *FeedReconcile
	Namespace    *NamespaceRow
	ProbeHistory []ProbeCount

	// Remote is the describing card's remote object for this endpoint as
	// JSON ("" when the card has none with its URL), and Icons the card's
	// icons as JSON ("" when none): what the Registry shape takes from the
	// card, as decoded, links unfiltered.
	Remote, Icons string
	// CatalogCard is the describing card as the AI Catalog carries it
	// inline (compact JSON, as the feed republishes it), "" when the
	// catalog points at the card by its URL instead (CardByURL).
	CatalogCard string

	kind       int
	entryFirst string
	// registrySource is the registry of the entry a Registry-only record
	// was read for.
	registrySource string
	// repeats: the record starts an entry whose publisher identifier and
	// version an earlier entry has (FactRepeats).
	repeats bool
	// paired: its card is paired with a Registry entry (FactReconcile).
	paired bool
	// stored: the record is a row of the read model (feedScanner), whose
	// category is server_categories' row of its kind and key; one only
	// the Registry declares has its entry's (attachCategories).
	stored bool
}

// Removed reports whether the record is a tombstone.
func (s *FeedServer) Removed() bool { return s.RemovedAt != "" }

// FeedQuery selects feed records.
type FeedQuery struct {
	// Since, when set, selects what changed after it (an RFC 3339 time in
	// the stored format): records whose updated_at is later, tombstones
	// included. Without it, only listed records.
	Since string
	// Search keeps records whose name contains it, case-insensitively.
	Search string
	FeedFilter
	// After continues a walk after the record a cursor names.
	After FeedCursor
	// Limit stops after this many records; 0 reads them all.
	Limit int
	// Facts selects which of a record's parts beyond its identity and
	// card name a read fills; zero reads them all (but FactCatalogCard).
	// A writer asks for what it prints: each fact beyond the card is a
	// query per page, and each column a call into SQLite per row.
	Facts Facts
}

// Facts is a set of a record's parts: facts beyond its card, read by key
// for each page (attachServerFacts), and groups of its own columns
// (feedCols).
type Facts uint16

const (
	// FactRegistry is the Registry entry declaring the endpoint, and with
	// it whether the server's sources include the Registry.
	FactRegistry Facts = 1 << iota
	FactProbeHistory
	FactReconcile
	FactNamespace
	// FactServer: transport, templated and the card's hash.
	FactServer
	// FactCardText: description, website and repository.
	FactCardText
	// FactFindings: the card's finding codes.
	FactFindings
	// FactProbe: the latest probe.
	FactProbe
	// FactDecision: the latest probe decision.
	FactDecision
	// FactCategory: the category and where it came from.
	FactCategory
	// FactChange: when the record changed, and whether and why it went.
	FactChange
	// FactCardParts: the card's remote for the endpoint and its icons.
	FactCardParts
	// FactCatalogCard: the card as the AI Catalog carries it inline; the
	// AI Catalog's alone, so a zero Facts does not read it.
	FactCatalogCard
	// factEntryFirst: the first record of its card's entry, which a walk
	// of entries (EachFeedEntry) orders and groups by, and no record
	// prints.
	factEntryFirst
	// FactRepeats: in a walk of entries (EachFeedEntry), whether an
	// earlier entry has the same publisher identifier and version
	// (FeedEntry.Repeats); the AI Catalog's alone.
	FactRepeats

	// FactsBase asks for none of the parts above: a record's identity,
	// card name, grade, times and listings only (zero would read all).
	FactsBase Facts = 1 << 15

	allFacts = FactRegistry | FactProbeHistory | FactReconcile | FactNamespace | FactServer | FactCardText |
		FactFindings | FactProbe | FactDecision | FactCategory | FactChange | FactCardParts
)

// FeedFilter keeps the records that say something: each field set narrows
// the selection, and all of them together keep what matches every one.
type FeedFilter struct {
	// Category keeps records of this category; with NoCategory, those
	// without one instead.
	Category   string
	NoCategory bool
	// Grade keeps records of this grade (servercard.Grade).
	Grade string
	// Outcome keeps records whose endpoint's latest probe had this outcome
	// (failure.Outcome); with NotProbed, those never probed instead.
	Outcome   string
	NotProbed bool
	// Source selects by where a server was found (FeedSources): card, the
	// default, keeps the servers a listed card declares; registry the
	// endpoints a latest, undeleted Registry entry declares; all both. Unlike
	// the other fields, all widens the selection.
	Source string
	// ListingFinding keeps records a listing of which carries this code:
	// what its catalog found of the entry or of its own signature
	// (ListingRecord.Codes). Like Grade, it keeps no endpoint only the
	// Registry declares.
	ListingFinding string
}

// cardsOnly says the filter keeps only records of listed cards: a grade
// and a listing's codes are theirs alone.
func (q FeedFilter) cardsOnly() bool { return q.Grade != "" || q.ListingFinding != "" }

// conds is the filter as SQL conditions over feed_servers f and
// server_categories sc (feedFrom).
func (q FeedFilter) conds() ([]string, []any) {
	var conds []string
	var args []any
	conds, args = q.categoryCond(conds, args, "sc")
	if q.Grade != "" {
		conds = append(conds, "f.grade = ?")
		args = append(args, q.Grade)
	}
	if q.Source == FeedSourceRegistry {
		conds = append(conds, "f.kind = 0 AND EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = f.key)")
	}
	switch {
	case q.NotProbed:
		conds = append(conds, "f.probe_outcome = ''")
	case q.Outcome != "":
		conds = append(conds, "f.probe_outcome = ?")
		args = append(args, q.Outcome)
	}
	if q.ListingFinding != "" {
		like := codeLike(q.ListingFinding)
		conds = append(conds, `((f.kind = 0 AND EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = f.key AND l.active = 1
			AND `+codedListing("l")+`)) OR (f.kind = 1 AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = f.key
			AND l.remote_norm = '' AND l.active = 1 AND `+codedListing("l")+`)))`)
		args = append(args, like, like)
	}
	return conds, args
}

// categoryCond adds the category condition on the category table aliased
// as table (server_categories, joined for the record or its entry).
func (q FeedFilter) categoryCond(conds []string, args []any, table string) ([]string, []any) {
	switch {
	case q.NoCategory:
		conds = append(conds, "COALESCE("+table+".category, '') = ''")
	case q.Category != "":
		conds = append(conds, table+".category = ?")
		args = append(args, q.Category)
	}
	return conds, args
}

// and appends the filter's conditions to a WHERE clause.
func (q FeedFilter) and(where string, args []any) (string, []any) {
	conds, more := q.conds()
	for _, c := range conds {
		where += " AND " + c
	}
	return where, append(args, more...)
}

// FeedCursor names a record's place in the feed's order.
type FeedCursor struct {
	Kind int
	Key  string
}

// Cursor is the record's place, for FeedQuery.After.
func (s *FeedServer) Cursor() FeedCursor { return FeedCursor{s.kind, s.key()} }

func (s *FeedServer) key() string {
	if s.kind == kindEndpoint {
		return s.EndpointNorm
	}
	return s.CardKey
}

// feedReadPage is how many records one read of the feed takes.
const feedReadPage = 500

// feedCol is a column of the read model: the part of a record it belongs
// to (0: every read takes it) and where it is scanned.
type feedCol struct {
	part Facts
	sql  string
	dest func(*feedScan) any
}

// feedScan is one row of a feed read as scanned, before it is a record.
type feedScan struct {
	s                                          FeedServer
	key, findings, outcome, probedAt, decision string
	reason                                     string
	p                                          ProbeRow
	tools                                      sql.NullInt64
	removed                                    sql.NullString
}

// feedCols are the read model's columns, in the order a read selects them.
var feedCols = []feedCol{
	{0, "f.kind", func(x *feedScan) any { return &x.s.kind }},
	{0, "f.key", func(x *feedScan) any { return &x.key }},
	{0, "f.endpoint", func(x *feedScan) any { return &x.s.Endpoint }},
	{FactServer, "f.transport", func(x *feedScan) any { return &x.s.Transport }},
	{FactServer, "f.templated", func(x *feedScan) any { return &x.s.Templated }},
	{0, "f.card_key", func(x *feedScan) any { return &x.s.CardKey }},
	{0, "f.card_url", func(x *feedScan) any { return &x.s.CardURL }},
	{0, "f.card_inline", func(x *feedScan) any { return &x.s.CardInline }},
	{FactServer, "f.card_sha256", func(x *feedScan) any { return &x.s.CardSHA256 }},
	{0, "f.name", func(x *feedScan) any { return &x.s.Name }},
	{0, "f.title", func(x *feedScan) any { return &x.s.Title }},
	{0, "f.version", func(x *feedScan) any { return &x.s.Version }},
	{FactCardText, "f.description", func(x *feedScan) any { return &x.s.Description }},
	{FactCardText, "f.website_url", func(x *feedScan) any { return &x.s.WebsiteURL }},
	{FactCardText, "f.repository", func(x *feedScan) any { return &x.s.Repository }},
	{0, "f.grade", func(x *feedScan) any { return &x.s.Grade }},
	{FactFindings, "f.findings", func(x *feedScan) any { return &x.findings }},
	{0, "f.first_seen", func(x *feedScan) any { return &x.s.FirstSeen }},
	{0, "f.last_seen", func(x *feedScan) any { return &x.s.LastSeen }},
	{FactProbe, "f.probe_outcome", func(x *feedScan) any { return &x.outcome }},
	{FactProbe, "f.probed_at", func(x *feedScan) any { return &x.probedAt }},
	{FactProbe, "f.probe_transport", func(x *feedScan) any { return &x.p.Transport }},
	{FactProbe, "f.probe_protocol", func(x *feedScan) any { return &x.p.Protocol }},
	{FactProbe, "f.probe_server_name", func(x *feedScan) any { return &x.p.ServerName }},
	{FactProbe, "f.probe_server_version", func(x *feedScan) any { return &x.p.ServerVersion }},
	{FactProbe, "f.probe_tool_count", func(x *feedScan) any { return &x.tools }},
	{FactProbe, "f.probe_partial", func(x *feedScan) any { return &x.p.Partial }},
	{FactDecision, "f.decision", func(x *feedScan) any { return &x.decision }},
	{FactDecision, "f.decision_reason", func(x *feedScan) any { return &x.reason }},
	{FactChange, "f.updated_at", func(x *feedScan) any { return &x.s.UpdatedAt }},
	{FactChange, "f.removed_at", func(x *feedScan) any { return &x.removed }},
	{FactChange, "f.removed_reason", func(x *feedScan) any { return &x.s.RemovedReason }},
	{factEntryFirst, "f.entry_first", func(x *feedScan) any { return &x.s.entryFirst }},
	{FactCardParts, "f.remote", func(x *feedScan) any { return &x.s.Remote }},
	{FactCardParts, "f.icons", func(x *feedScan) any { return &x.s.Icons }},
	{FactCatalogCard, "f.catalog_card", func(x *feedScan) any { return &x.s.CatalogCard }},
	// Few cards pair with a Registry entry: a lookup in the row's own
	// query tells which, and only theirs are read (attachServerFacts); a
	// query per page for the pairs among all the page's cards cost half
	// again as much.
	{FactReconcile, "EXISTS (SELECT 1 FROM reconcile_results r WHERE r.card_key = f.card_key AND r.kind = 'pair')",
		func(x *feedScan) any { return &x.s.paired }},
	// A record's category is no column of its row: a walk reads the
	// categories of a page's records by their range (attachCategories), on
	// its second connection, where the join cost the record query a lookup
	// per record (a fifth of its CPU at 100,000 servers).
}

// feedColumns are every column of a record (feedColumnsOf).
var feedColumns = feedColumnsOf(allFacts)

// feedColumnsOf are the columns of the parts want selects: those of a
// non-text type one by one, then the text ones packed into one column
// (packText).
func feedColumnsOf(want Facts) string {
	want = wantAll(want)
	var cols, text []string
	for _, c := range feedCols {
		switch {
		case c.part != 0 && want&c.part == 0:
		case c.isText():
			text = append(text, c.sql)
		default:
			cols = append(cols, c.sql)
		}
	}
	return strings.Join(append(cols, packText(text...)), ", ")
}

// packText selects text columns that are never NULL as one: each value
// behind its length in bytes, concatenated; unpackText splits it.
//
// Each column of each row is two or three calls into SQLite, each under
// the connection's mutex (modernc.org/sqlite opens connections
// SQLITE_OPEN_FULLMUTEX): most of a JSONL export's CPU was reading the
// feed's 37 columns and its facts' columns one by one. concat and
// octet_length are SQL both databases have; the length before each value
// makes the packing hold any text.
func packText(cols ...string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = "octet_length(" + c + "), ':', " + c
	}
	return "concat(" + strings.Join(parts, ", ") + ")"
}

// isText: the column is text and never NULL (scanned into a string).
func (c feedCol) isText() bool {
	_, ok := c.dest(&feedScan{}).(*string)
	return ok
}

// unpackText splits a packed text column (packText) into dests, in
// order.
func unpackText(packed string, dests []*string) error {
	for _, d := range dests {
		i := strings.IndexByte(packed, ':')
		if i < 0 {
			return errors.New("packed columns: no length")
		}
		n, err := strconv.Atoi(packed[:i])
		if err != nil || n < 0 || n > len(packed)-i-1 {
			return fmt.Errorf("packed columns: bad length %q", packed[:i])
		}
		*d, packed = packed[i+1:i+1+n], packed[i+1+n:]
	}
	if packed != "" {
		return errors.New("packed columns: more than asked for")
	}
	return nil
}

// wantAll reads zero as every part.
func wantAll(want Facts) Facts {
	if want == 0 {
		return allFacts
	}
	return want
}

// feedFrom is the read model with each record's category, kept by the
// category recompute in server_categories and joined on its primary key
// (a card that declares no remote is kind 'card', subject its key).
const feedFrom = `feed_servers f LEFT JOIN server_categories sc
	ON sc.kind = CASE WHEN f.kind = 0 THEN '` + KindEndpoint + `' ELSE '` + KindCard + `' END
	AND sc.registry = '' AND sc.subject = f.key`

// feedFromOf is feedFrom when a read filters by category, and the read
// model alone otherwise: the join is a lookup per record, and the records
// read have their categories a page at a time (attachCategories).
func feedFromOf(f FeedFilter) string {
	if f.Category == "" && !f.NoCategory {
		return "feed_servers f"
	}
	return feedFrom
}

// feedScanner scans rows of feedColumnsOf(want) into a record; the parts
// not read are left empty. A scanner reuses its destinations row after
// row: a read builds one and scans all its rows with it, never
// concurrently.
func feedScanner(want Facts) func(*sql.Rows, *FeedServer) error {
	want = wantAll(want)
	var x feedScan
	var dests []any
	var text []*string
	var packed string
	for _, c := range feedCols {
		switch {
		case c.part != 0 && want&c.part == 0:
		case c.isText():
			text = append(text, c.dest(&x).(*string))
		default:
			dests = append(dests, c.dest(&x))
		}
	}
	dests = append(dests, &packed)
	return func(rows *sql.Rows, s *FeedServer) error {
		x = feedScan{}
		if err := rows.Scan(dests...); err != nil {
			return err
		}
		if err := unpackText(packed, text); err != nil {
			return err
		}
		*s = x.s
		s.stored = true
		if s.kind == kindEndpoint {
			s.EndpointNorm = x.key
		}
		s.Findings = findingCodes(x.findings)
		x.p.Outcome, x.p.ProbedAt = x.outcome, x.probedAt
		s.setProbe(x.p, x.tools, x.decision, x.reason)
		s.RemovedAt = x.removed.String
		return nil
	}
}

// noFindings is the findings of a card that has none: most cards, so
// their records share it (nothing appends to a record's findings).
var noFindings = []string{}

// findingCodes decodes a record's finding codes as findingCodesJSON
// wrote them ("" when not read).
func findingCodes(stored string) []string {
	if stored == "" || stored == "[]" {
		return noFindings
	}
	var codes []string
	_ = json.Unmarshal([]byte(stored), &codes) // written by findingCodesJSON
	if codes == nil {
		return noFindings
	}
	return codes
}

// setProbe gives a record its latest probe (none when p has no outcome)
// and latest probe decision (none when decision is ""), as scanned.
func (s *FeedServer) setProbe(p ProbeRow, tools sql.NullInt64, decision, reason string) {
	if p.Outcome != "" {
		p.RemoteNorm, p.URL = s.EndpointNorm, s.Endpoint
		if tools.Valid {
			n := int(tools.Int64)
			p.ToolCount = &n
		}
		s.Probe = &p
	}
	if decision != "" {
		s.Decision = &ProbeDecision{RemoteNorm: s.EndpointNorm, URL: s.Endpoint, Decision: decision, Reason: reason}
	}
}

// where is a FeedQuery's filter as SQL over feed_servers f.
func (q FeedQuery) where() (string, []any) {
	conds, args := liveOrSince(nil, nil, q.Since, q.Search)
	return q.FeedFilter.and(strings.Join(conds, " AND "), args)
}

// liveOrSince adds the conditions every feed read shares: the records
// changed since a time (tombstones included) or else the live ones, and a
// case-insensitive substring of the name.
func liveOrSince(conds []string, args []any, since, search string) ([]string, []any) {
	if since != "" {
		conds = append(conds, "f.updated_at > ?")
		args = append(args, since)
	} else {
		conds = append(conds, "f.removed_at IS NULL")
	}
	if search != "" {
		conds = append(conds, `lower(f.name) LIKE lower(?) ESCAPE '\'`)
		args = append(args, "%"+likeEscape(search)+"%")
	}
	return conds, args
}

// likeEscape makes s match itself in a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// readFeed runs fn in one read transaction: a walk of many pages sees
// one state of the database even while a crawl writes.
// The statements it met unprepared are prepared on the handle afterwards,
// for the next reads (readTx).
func (db *DB) readFeed(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read the feed: %w", err)
	}
	// Outside the transaction: preparing takes a connection of the pool.
	defer db.stmts.prepareMissing(ctx, db.sql)
	// Deferred: serve recovers a panic in a walk, and the connection must
	// go back to the pool then too.
	defer tx.Rollback()
	return fn(tx)
}

// readTx runs a feed read's queries on prepared statements: the handle's
// (prepared after an earlier read met them), or else the transaction's own,
// for as long as it lasts. Every page of a walk and every request for a
// list page repeats a few query texts, and preparing one took a tenth of
// a list page's time.
type readTx struct {
	tx    *sql.Tx
	stmts *stmtCache
	local map[string]*sql.Stmt
}

func (db *DB) reader(tx *sql.Tx) *readTx {
	return &readTx{tx: tx, stmts: &db.stmts, local: map[string]*sql.Stmt{}}
}

func (r *readTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// stmt is query's prepared statement for the transaction.
func (r *readTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := r.stmts.get(query); st != nil {
		return r.tx.StmtContext(ctx, st), nil
	}
	st := r.local[query]
	if st == nil {
		var err error
		if st, err = r.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		r.local[query] = st
	}
	return st, nil
}

// EachFeedServer calls fn for each record q selects, in feed order
// (endpoints by normalised URL, then cards without remotes by key), a page
// at a time in one read transaction: memory holds one page, however many
// servers there are. fn must not use the database, nor keep s past its
// return (a copy of *s is the caller's): the page's records are reused.
func (db *DB) EachFeedServer(ctx context.Context, q FeedQuery, fn func(s *FeedServer) error) error {
	if !validSource(q.Source) {
		return fmt.Errorf("read the feed: %w: source %q", ErrBadFilter, q.Source)
	}
	// A walk of the whole feed reads its records' listings and facts on
	// a second connection while it reads the next page's records.
	return db.readFeedSplit(ctx, q.Limit == 0, func(tx, attachTx *sql.Tx) error {
		rtx, atx := db.splitReaders(tx, attachTx)
		cols, from, scan := feedColumnsOf(q.Facts), feedFromOf(q.FeedFilter), feedScanner(q.Facts)
		where, args := q.where()
		query := `SELECT ` + cols + ` FROM ` + from + `
				WHERE (f.kind, f.key) > (?, ?) AND ` + where + ` ORDER BY f.kind, f.key LIMIT ?`
		// The cards' records, the endpoints only the Registry declares and
		// a delta's tombstones of those are streams in one order, each
		// read from where it stopped.
		// Reading both from the end of the page they made re-read the one
		// the other outpaced: for a Registry whose endpoints few cards
		// declare, every record after each page's end (3 s to export
		// 16,867 Registry servers beside 100,000 cards, where this reads
		// each once).
		streams := []*feedStream{{after: q.After, read: func(dst []FeedServer, after FeedCursor, size int) ([]FeedServer, error) {
			rows, err := appendRows(ctx, rtx, dst, scan, query, append(append([]any{after.Kind, after.Key}, args...), size)...)
			if err != nil {
				return nil, fmt.Errorf("read the feed: %w", err)
			}
			return rows, nil
		}}}
		if q.withRegistryOnly() {
			// And, in a delta, the tombstones of those that left it.
			for _, page := range registryPages {
				streams = append(streams, &feedStream{after: q.After, read: func(dst []FeedServer, after FeedCursor, size int) ([]FeedServer, error) {
					more, err := page(ctx, tx, q, after, size)
					return append(dst, more...), err
				}})
			}
		}
		n := 0
		next := func(page []FeedServer) ([]FeedServer, bool, error) {
			size := cmp.Or(db.feedPage, feedReadPage)
			if q.Limit > 0 {
				size = min(size, q.Limit-n)
			}
			if size <= 0 {
				return page[:0], true, nil
			}
			for _, st := range streams {
				if err := st.fill(size); err != nil {
					return page, true, err
				}
			}
			page = takeMerged(page[:0], size, streams)
			n += len(page)
			return page, len(page) < size, nil
		}
		var facts factScratch
		attach := func(page []FeedServer) error {
			if err := attachListings(ctx, atx, page, q.whole()); err != nil {
				return err
			}
			return facts.attachServerFacts(ctx, atx, page, q.Facts, q.whole())
		}
		return readAheadOn(attachTx != nil, next, attach, func(page []FeedServer) error {
			for i := range page {
				if err := fn(&page[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// feedStream is one of a walk's streams of records in feed order, read a
// page at a time from where it last stopped; buf holds what the walk has
// not taken yet.
type feedStream struct {
	read  func(dst []FeedServer, after FeedCursor, size int) ([]FeedServer, error)
	buf   []FeedServer
	after FeedCursor
	done  bool // read to its end
}

// fill reads a page more when fewer than size records are held.
func (s *feedStream) fill(size int) error {
	if s.done || len(s.buf) >= size {
		return nil
	}
	held := len(s.buf)
	buf, err := s.read(s.buf, s.after, size)
	if err != nil {
		return err
	}
	s.buf = buf
	if len(buf)-held < size {
		s.done = true
	}
	if len(buf) > held {
		s.after = buf[len(buf)-1].Cursor()
	}
	return nil
}

// takeMerged appends to page the first size records the streams hold, in
// feed order, and drops them from the streams. Each stream holds at least
// size or all it has left (fill), so those are the walk's next size.
func takeMerged(page []FeedServer, size int, streams []*feedStream) []FeedServer {
	next := make([]int, len(streams))
	for len(page) < size {
		best := -1
		for i, st := range streams {
			if next[i] < len(st.buf) && (best < 0 || compareCursors(st.buf[next[i]].Cursor(), streams[best].buf[next[best]].Cursor()) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		page = append(page, streams[best].buf[next[best]])
		next[best]++
	}
	for i, st := range streams {
		st.buf = append(st.buf[:0], st.buf[next[i]:]...)
	}
	return page
}

// compareCursors orders cursors as the feed does.
func compareCursors(a, b FeedCursor) int {
	if a.Kind != b.Kind {
		return a.Kind - b.Kind
	}
	return strings.Compare(a.Key, b.Key)
}

// appendRows runs a query and scans every row into the next element of
// dst, appended: a walk reuses one page's records.
func appendRows[T any](ctx context.Context, db rowsQuerier, dst []T, scan func(*sql.Rows, *T) error, query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	var zero T
	for rows.Next() {
		dst = append(dst, zero)
		if err := scan(rows, &dst[len(dst)-1]); err != nil {
			return dst, err
		}
	}
	return dst, rows.Err()
}

// whole reports whether a walk reads every listed record in key order: a
// page of it holds every endpoint between its first and last, so what it
// reads by endpoint it may read by that range (queryKeys).
func (q FeedQuery) whole() bool {
	f := q.FeedFilter
	return q.Since == "" && q.Search == "" && f.Grade == "" && f.Category == "" && !f.NoCategory && f.Outcome == "" &&
		!f.NotProbed && f.Source != FeedSourceRegistry && f.ListingFinding == ""
}

// attachListings reads the listing chain of a page of records: two
// queries, whatever the page holds; with span, the endpoints' by their
// range (queryKeys).
func attachListings(ctx context.Context, tx *readTx, page []FeedServer, span bool) error {
	var norms, cards []any
	at := map[FeedCursor][]int{}
	for i := range page {
		c := page[i].Cursor()
		at[c] = append(at[c], i)
		if c.Kind == kindEndpoint {
			norms = append(norms, c.Key)
		} else {
			cards = append(cards, c.Key)
		}
	}
	read := func(kind int, query string, keys []any) error {
		if len(keys) == 0 {
			return nil
		}
		rows, err := queryKeys(ctx, tx, query, keys, span && kind == kindEndpoint)
		if err != nil {
			return fmt.Errorf("listing chains: %w", err)
		}
		defer rows.Close()
		var key, norm, codes, packed string
		var l Listing
		dests := []*string{&key, &norm, &l.Domain, &l.CatalogURL, &l.Identifier, &l.CardKey, &codes}
		for rows.Next() {
			if err := rows.Scan(&packed); err != nil {
				return fmt.Errorf("listing chains: %w", err)
			}
			if err := unpackText(packed, dests); err != nil {
				return fmt.Errorf("listing chains: %w", err)
			}
			if kind == kindCard && norm != "" {
				continue
			}
			l.Codes = listingCodes(codes)
			for _, i := range at[FeedCursor{kind, key}] {
				page[i].Listings = append(page[i].Listings, l)
			}
		}
		return rows.Err()
	}
	if err := read(kindEndpoint, listingsByRemote, norms); err != nil {
		return err
	}
	return read(kindCard, listingsByCard, cards)
}

// The listing chains of records, by endpoint and by card; %s is the keys'
// placeholders. Each is read from its index alone (migration 0010). By card
// key only, remote_norm filtered in Go: asking SQL for an empty remote_norm, the
// planner walks every card-without-remote listing there is. By endpoint,
// the chain is read in the index's order, active included (always 1 here),
// and active is tested as "active + 0" so SQLite does not take it as an
// index constraint: with it, a read over a range of endpoints (queryKeys)
// sorts each endpoint's chain.
// Their columns are packed (packText): the key, remote_norm, domain,
// catalog_url, identifier, card_key, entry_codes (in the indexes since
// migration 0024).
var (
	listingsByRemote = `SELECT ` + packText("remote_norm", "remote_norm", "domain", "catalog_url", "identifier", "card_key", "entry_codes") +
		` FROM listings WHERE active + 0 = 1 AND remote_norm IN (%s) ORDER BY remote_norm, active, domain, catalog_url, identifier`
	listingsByCard = `SELECT ` + packText("card_key", "remote_norm", "domain", "catalog_url", "identifier", "card_key", "entry_codes") +
		` FROM listings WHERE active = 1 AND card_key IN (%s) ORDER BY card_key, domain, catalog_url, identifier`
)

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// inList is the placeholders and arguments of an IN list of keys, padded
// to a power of two by repeating the last key: a few query texts, each
// prepared once, serve lists of every length (an IN list is a set, so a
// repeat selects nothing more).
func inList[K any](keys []K) (string, []any) {
	n := 1
	for n < len(keys) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = keys[min(i, len(keys)-1)]
	}
	return placeholders(n), args
}

// keysAfter is the part of sorted keys that follows key.
func keysAfter[K any](keys []K, key K, cmp func(K, K) int) []K {
	i, found := slices.BinarySearchFunc(keys, key, cmp)
	if found {
		i++
	}
	return keys[i:]
}

// FeedEntry is one card with the records it describes: an entry of the
// Registry-shaped feed and of the AI Catalog.
type FeedEntry struct {
	CardKey string
	Records []FeedServer
	// Registry is set, and CardKey empty, on an entry of servers only the
	// Registry declares (source registry or all): the latest, undeleted entry
	// declaring them, and Records those of its endpoints no listed card
	// declares; in FeedEntriesNamed, also that name's other versions,
	// without records; or, in a delta (EntryQuery.Since), the version that last
	// declared endpoints that left the Registry, and Records their
	// tombstones.
	Registry *FeedEntryRegistry
	// Repeats, asked for with FactRepeats, is set on a card's entry whose
	// publisher identifier (PublisherIdentifier of its first record) and
	// version an earlier entry of the same walk has: the AI Catalog gives
	// it an identifier of its own.
	Repeats bool
}

// Removed reports whether the entry has records and every one is a
// tombstone (an older Registry version, FeedEntriesNamed, has none).
func (e *FeedEntry) Removed() bool {
	if len(e.Records) == 0 {
		return false
	}
	for i := range e.Records {
		if !e.Records[i].Removed() {
			return false
		}
	}
	return true
}

// EachFeedEntry calls fn for each card that describes a listed record, in
// the order of each card's first record, with its records in feed order.
// It reads a page of records at a time in one read transaction; an entry
// is held whole (its records), nothing more. fn must not use the
// database.
//
// The filter keeps the records it matches: an entry holds those, and a
// card none of whose records match is no entry.
//
// want selects the parts each record carries (FeedQuery.Facts), of the
// columns only: facts beyond the card are not read here. With
// FactRepeats, each card's entry says whether an earlier one has its
// publisher identifier and version (FeedEntry.Repeats).
func (db *DB) EachFeedEntry(ctx context.Context, filter FeedFilter, want Facts, fn func(*FeedEntry) error) error {
	return db.eachFeedEntry(ctx, filter, want, cmp.Or(db.feedPage, feedReadPage), fn)
}

// eachFeedEntry is EachFeedEntry reading pages of size records.
func (db *DB) eachFeedEntry(ctx context.Context, filter FeedFilter, want Facts, size int, fn func(*FeedEntry) error) error {
	want = wantAll(want) | factEntryFirst
	cols, from, scan := feedColumnsOf(want), feedFromOf(filter), feedScanner(want)
	return db.readFeedSplit(ctx, true, func(sqlTx, attachTx *sql.Tx) error {
		tx, atx := db.splitReaders(sqlTx, attachTx)
		var cur *FeedEntry
		type key struct {
			first string
			kind  int
			key   string
		}
		var last struct{ card, first string } // the record before the page
		var starts []int
		var after key
		var cats categoryScratch
		// Each page is new (an entry keeps its records), so the pages
		// readAhead hands back are not reused.
		err := readAheadOn(attachTx != nil, func([]FeedServer) ([]FeedServer, bool, error) {
			where, args := filter.and(`f.removed_at IS NULL AND (f.entry_first, f.kind, f.key) > (?, ?, ?)`,
				[]any{after.first, after.kind, after.key})
			page, err := appendRows(ctx, tx, nil, scan, `SELECT `+cols+` FROM `+from+`
				WHERE `+where+` ORDER BY f.entry_first, f.kind, f.key LIMIT ?`, append(args, size)...)
			if err != nil {
				return nil, true, fmt.Errorf("read the feed: %w", err)
			}
			if len(page) > 0 {
				s := page[len(page)-1]
				after = key{s.entryFirst, s.kind, s.key()}
			}
			return page, len(page) < size, nil
		}, func(page []FeedServer) error {
			if err := attachListings(ctx, atx, page, false); err != nil {
				return err
			}
			// In entry order a page's keys are no range.
			if want&FactCategory != 0 {
				if err := cats.attachCategories(ctx, atx, page, false); err != nil {
					return err
				}
			}
			if want&FactRepeats == 0 {
				return nil
			}
			starts = starts[:0]
			for i := range page {
				if page[i].CardKey != last.card || page[i].entryFirst != last.first {
					starts = append(starts, i)
				}
				last.card, last.first = page[i].CardKey, page[i].entryFirst
			}
			return markRepeats(ctx, atx, page, starts, filter)
		}, func(page []FeedServer) error {
			for _, s := range page {
				if cur != nil && cur.CardKey == s.CardKey && cur.Records[0].entryFirst == s.entryFirst {
					cur.Records = append(cur.Records, s)
					continue
				}
				if cur != nil {
					if err := fn(cur); err != nil {
						return err
					}
				}
				cur = &FeedEntry{CardKey: s.CardKey, Records: []FeedServer{s}, Repeats: s.repeats}
			}
			return nil
		})
		if err == nil && cur != nil {
			err = fn(cur)
		}
		if err != nil || !filter.withRegistryOnly() {
			return err
		}
		return eachRegistryEntry(ctx, sqlTx, registryEntryQuery{FeedFilter: filter}, subjectKey{}, feedReadPage,
			func(e FeedEntry) (bool, error) { return true, fn(&e) })
	})
}

// EntryQuery selects a page of entries for the Registry list API, in card
// key order.
type EntryQuery struct {
	// After continues after the entry of this card key.
	After string
	// Name keeps entries of this exact name.
	Name string
	// Search keeps entries whose name contains it, case-insensitively.
	Search string
	// Since keeps entries with a record changed after it, and then entries
	// whose records are all gone are included (as the Registry includes
	// deleted servers with updated_since).
	Since string
	// FeedFilter keeps entries with a record it matches, and of each
	// entry the records it matches.
	FeedFilter
	Limit int
}

// FeedEntries returns up to q.Limit entries and whether more follow.
func (db *DB) FeedEntries(ctx context.Context, q EntryQuery) (entries []FeedEntry, more bool, err error) {
	if !validSource(q.Source) {
		return nil, false, fmt.Errorf("read the feed: %w: source %q", ErrBadFilter, q.Source)
	}
	after, inRegistry := registryCursor(q.After)
	if inRegistry && !q.withRegistryOnly() {
		return nil, false, fmt.Errorf("read the feed: %w: a cursor of the Registry's entries needs source registry or all", ErrBadFilter)
	}
	err = db.readFeed(ctx, func(tx *sql.Tx) error {
		if !inRegistry {
			var err error
			if entries, more, _, err = db.feedCardEntries(ctx, db.reader(tx), q); err != nil || more || !q.withRegistryOnly() {
				return err
			}
		}
		// Then the Registry's entries, one more than fits to tell whether
		// more follow.
		need := max(q.Limit-len(entries), 0)
		rq := registryEntryQuery{FeedFilter: q.FeedFilter, Search: q.Search, Since: q.Since, Name: q.Name}
		return eachRegistryEntry(ctx, tx, rq, after, need+1, func(e FeedEntry) (bool, error) {
			if need == 0 {
				more = true
				return false, nil
			}
			entries = append(entries, e)
			need--
			return true, nil
		})
	})
	return entries, more, err
}

// feedCardEntries reads a page of the cards' entries, whether more
// follow, and if so the card key of the next entry (the page's answer
// depends on it being there: EntryRange).
func (db *DB) feedCardEntries(ctx context.Context, tx *readTx, q EntryQuery) ([]FeedEntry, bool, string, error) {
	conds, args := liveOrSince([]string{"f.card_key > ?", "f.name <> ''"}, []any{q.After}, q.Since, q.Search)
	if q.Name != "" {
		conds = append(conds, "f.name = ?")
		args = append(args, q.Name)
	}
	where, args := q.FeedFilter.and(strings.Join(conds, " AND "), args)
	keys, err := db.feedEntryKeys(ctx, tx, q, where, args)
	if err != nil {
		return nil, false, "", fmt.Errorf("read the feed: %w", err)
	}
	more, next := len(keys) > q.Limit, ""
	if more {
		keys, next = keys[:q.Limit], keys[q.Limit]
	}
	entries, err := readEntries(ctx, tx, keys, q.Since != "", q.FeedFilter)
	return entries, more, next, err
}

// feedEntryKeys reads the card keys of up to q.Limit+1 entries after
// q.After whose records match where. The walk reads every record from the
// keyset position on, which for a search few names hold or a category few
// servers have read all of them (0.2-0.34 s at 100,000 servers); where the
// candidates are known (entryCandidates), only theirs are read, still
// through where.
func (db *DB) feedEntryKeys(ctx context.Context, tx *readTx, q EntryQuery, where string, args []any) ([]string, error) {
	const query = `SELECT DISTINCT f.card_key FROM ` + feedFrom + ` WHERE `
	cands, ok, err := db.entryCandidates(ctx, tx, q)
	if err != nil {
		return nil, err
	}
	if !ok {
		return collect(ctx, tx, scanString, query+where+` ORDER BY f.card_key LIMIT ?`, append(args, q.Limit+1)...)
	}
	cands = keysAfter(cands, q.After, strings.Compare)
	var keys []string
	for len(keys) <= q.Limit && len(cands) > 0 {
		chunk := cands[:min(len(cands), siteSearchChunk)]
		cands = cands[len(chunk):]
		list, in := inList(chunk)
		got, err := collect(ctx, tx, scanString, query+where+` AND f.card_key IN (`+list+`) ORDER BY f.card_key LIMIT ?`,
			append(append(slices.Clip(args), in...), q.Limit+1-len(keys))...)
		if err != nil {
			return nil, err
		}
		keys = append(keys, got...)
	}
	return keys, nil
}

// entryCandidates proposes, sorted, the card keys of every entry a page of
// q may hold, or says it cannot (ok false: the page walks): those the
// site's search index proposes for a search (SearchIndex.feedCardKeys),
// and those holding a record the filter's category, outcome or source
// names in an index (entryProposers); where several can, the keys all of
// them propose. A delta page (Since) holds tombstones, which none knows.
func (db *DB) entryCandidates(ctx context.Context, tx *readTx, q EntryQuery) ([]string, bool, error) {
	if q.Since != "" {
		return nil, false, nil
	}
	var sets [][]string
	if ix := db.search.Load(); ix != nil && q.Search != "" {
		_, seq, err := scanFeedState(ctx, tx.queryRow)
		if err != nil {
			return nil, false, err
		}
		cands, ok, err := ix.feedCardKeys(ctx, tx, q.Search, seq)
		if err != nil {
			return nil, false, err
		}
		if ok {
			sets = append(sets, cands)
		}
	}
	most := db.facetBound()
	for _, propose := range entryProposers {
		keys, ok, err := propose(ctx, tx, q.FeedFilter, most)
		if err != nil {
			return nil, false, err
		}
		if ok {
			sets = append(sets, keys)
		}
	}
	if len(sets) == 0 {
		return nil, false, nil
	}
	out := sets[0]
	for _, s := range sets[1:] {
		out = slices.DeleteFunc(out, func(k string) bool {
			_, found := slices.BinarySearch(s, k)
			return !found
		})
	}
	return out, true, nil
}

// An entryProposer returns, sorted, the card keys of the live records an
// index names for one of the filter's fields, a superset of those the
// field keeps; ok is false when the filter does not set the field or more
// than most records are named: a walk in card order then fills a page
// sooner.
type entryProposer func(ctx context.Context, tx *readTx, f FeedFilter, most int) (keys []string, ok bool, err error)

var entryProposers = []entryProposer{categoryCardKeys, outcomeCardKeys, registryCardKeys, listingFindingCardKeys}

// namedCardKeys counts the subjects of named (a query of one column,
// whose arguments are args) up to most+1, and when there are no more than
// most, returns the card keys of the live records of those subjects:
// feed_servers' (kind, key) joined on kind's and key's expressions over
// named's columns. Counted from the index alone first: a common value's
// candidates joined with their records cost more (45 ms for 5,000 at
// 100,000 servers) than the walk that fills a page at once.
func namedCardKeys(ctx context.Context, tx *readTx, named, kind, key string, most int, args ...any) ([]string, bool, error) {
	var n int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM (`+named+` LIMIT ?) n`, append(slices.Clip(args), most+1)...).
		Scan(&n); err != nil || n > most {
		return nil, false, err
	}
	keys, err := collect(ctx, tx, scanString, `SELECT f.card_key FROM (`+named+`) x JOIN feed_servers f
		ON f.kind = `+kind+` AND f.key = `+key+` WHERE f.removed_at IS NULL`, args...)
	if err != nil {
		return nil, false, err
	}
	slices.Sort(keys)
	return slices.Compact(keys), true, nil
}

// categoryCardKeys proposes the records whose category is the filter's,
// read from server_categories_category; for no category, those whose row
// says so while every server has a row (categoriesComplete), and since
// that mark, while few records were written, those records without a row
// of their own that names one too (as sinceMark; an endpoint
// only the Registry declares has no entry here).
func categoryCardKeys(ctx context.Context, tx *readTx, f FeedFilter, most int) ([]string, bool, error) {
	category := f.Category
	var since []string
	switch {
	case f.NoCategory:
		complete, mark, err := categoriesComplete(ctx, tx.queryRow)
		if err != nil {
			return nil, false, err
		}
		if !complete {
			if mark < 0 {
				return nil, false, nil
			}
			recs, common, err := recordsSince(ctx, tx, sinceRead{seq: mark, most: most,
				holds: lacksOwnCategory + ` AND f.removed_at IS NULL`, cards: true})
			if err != nil || common {
				return nil, false, err
			}
			for _, r := range recs {
				since = append(since, r.cardKey)
			}
		}
		category = ""
	case category == "":
		return nil, false, nil
	}
	keys, ok, err := namedCardKeys(ctx, tx, `SELECT sc.kind, sc.subject FROM server_categories sc
		WHERE sc.category = ? AND sc.kind IN ('`+KindEndpoint+`', '`+KindCard+`') AND sc.registry = ''`,
		`CASE WHEN x.kind = '`+KindEndpoint+`' THEN 0 ELSE 1 END`, "x.subject", most, category)
	if err != nil || !ok || len(since) == 0 {
		return keys, ok, err
	}
	keys = append(keys, since...)
	slices.Sort(keys)
	if keys = slices.Compact(keys); len(keys) > most {
		return nil, false, nil
	}
	return keys, true, nil
}

// outcomeCardKeys proposes the endpoints with a probe of the filter's
// outcome (probe_outcomes_outcome): a record's is its latest probe's.
func outcomeCardKeys(ctx context.Context, tx *readTx, f FeedFilter, most int) ([]string, bool, error) {
	if f.Outcome == "" || f.NotProbed {
		return nil, false, nil
	}
	return namedCardKeys(ctx, tx, `SELECT p.remote_norm FROM probe_outcomes p WHERE p.outcome = ?`,
		"0", "x.remote_norm", most, f.Outcome)
}

// listingFindingCardKeys proposes the records a listing with the filter's
// code reaches, read from the coded listings' index (listings_coded).
func listingFindingCardKeys(ctx context.Context, tx *readTx, f FeedFilter, most int) ([]string, bool, error) {
	if f.ListingFinding == "" {
		return nil, false, nil
	}
	return namedCardKeys(ctx, tx, `SELECT DISTINCT CASE WHEN l.remote_norm = '' THEN 1 ELSE 0 END AS kind,
		CASE WHEN l.remote_norm = '' THEN l.card_key ELSE l.remote_norm END AS subject
		FROM listings l WHERE l.active = 1 AND `+codedListing("l"), "x.kind", "x.subject", most, codeLike(f.ListingFinding))
}

// registryCardKeys proposes, for the Registry's servers, the endpoints
// its latest, undeleted entries declare (registry_remotes_norm) that a card
// declares too. Most of the Registry's servers have no card, so they are
// counted with their records, in one read: the Registry's size says little
// about how many records hold one of its endpoints.
func registryCardKeys(ctx context.Context, tx *readTx, f FeedFilter, most int) ([]string, bool, error) {
	if f.Source != FeedSourceRegistry {
		return nil, false, nil
	}
	keys, err := collect(ctx, tx, scanString, `SELECT f.card_key FROM (SELECT DISTINCT url_norm FROM registry_remotes) x
		JOIN feed_servers f ON f.kind = 0 AND f.key = x.url_norm WHERE f.removed_at IS NULL LIMIT ?`, most+1)
	if err != nil || len(keys) > most {
		return nil, false, err
	}
	slices.Sort(keys)
	return slices.Compact(keys), true, nil
}

// readEntries reads the entries of the given card keys, in that order:
// their listed records, or, with tombstones true, their tombstones when
// every record is gone.
func readEntries(ctx context.Context, tx *readTx, keys []string, tombstones bool, filter FeedFilter) ([]FeedEntry, error) {
	if len(keys) == 0 {
		return []FeedEntry{}, nil
	}
	list, args := inList(keys)
	where, args := filter.and(`f.card_key IN (`+list+`)`, args)
	recs, err := appendRows(ctx, tx, nil, feedScanner(allFacts), `SELECT `+feedColumns+` FROM `+feedFromOf(filter)+`
		WHERE `+where+` ORDER BY f.card_key, f.kind, f.key`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the feed: %w", err)
	}
	if err := attachListings(ctx, tx, recs, false); err != nil {
		return nil, err
	}
	var cats categoryScratch
	if err := cats.attachCategories(ctx, tx, recs, false); err != nil {
		return nil, err
	}
	by := map[string]*FeedEntry{}
	for _, r := range recs {
		e := by[r.CardKey]
		if e == nil {
			e = &FeedEntry{CardKey: r.CardKey}
			by[r.CardKey] = e
		}
		e.Records = append(e.Records, r)
	}
	out := make([]FeedEntry, 0, len(keys))
	for _, k := range keys {
		e := by[k]
		if e == nil {
			continue
		}
		if !e.Removed() {
			// Listed records only; a tombstone of one endpoint is not part
			// of the card's entry.
			live := e.Records[:0]
			for _, r := range e.Records {
				if !r.Removed() {
					live = append(live, r)
				}
			}
			e.Records = live
		} else if !tombstones {
			continue
		}
		out = append(out, *e)
	}
	return out, nil
}

// NamedQuery selects the entries of one name (FeedEntriesNamed).
type NamedQuery struct {
	Name string
	FeedFilter
	// IncludeDeleted adds the Registry's deleted versions of a name only
	// it declares, as its include_deleted does.
	IncludeDeleted bool
}

// FeedEntriesNamed returns the listed entries whose card has this name, in
// the order of each card's first record (the first is what
// .../versions/latest serves), of the records the filter keeps; with
// source registry or all, then for each registry whose latest, undeleted
// entry of the name declares endpoints no listed card declares, that
// entry (as FeedEntries gives it) and the name's other versions there,
// newest published first as the Registry lists them (registryVersions).
// When nothing of that kind names it, a registry whose latest version of
// the name is deleted (or deprecated, declaring no server of its own)
// gives its versions the same way, none with records.
func (db *DB) FeedEntriesNamed(ctx context.Context, q NamedQuery) ([]FeedEntry, error) {
	filter := q.FeedFilter
	if !validSource(filter.Source) {
		return nil, fmt.Errorf("read the feed: %w: source %q", ErrBadFilter, filter.Source)
	}
	var out []FeedEntry
	err := db.readFeed(ctx, func(sqlTx *sql.Tx) error {
		tx := db.reader(sqlTx)
		where, args := filter.and(`f.name = ? AND f.removed_at IS NULL`, []any{q.Name})
		keys, err := collect(ctx, tx, scanString, `SELECT f.card_key FROM `+feedFrom+`
			WHERE `+where+` GROUP BY f.card_key ORDER BY MIN(f.entry_first), f.card_key`, args...)
		if err != nil {
			return fmt.Errorf("read the feed: %w", err)
		}
		if out, err = readEntries(ctx, tx, keys, false, filter); err != nil || !filter.withRegistryOnly() {
			return err
		}
		var latest []FeedEntry
		err = eachRegistryEntry(ctx, sqlTx, registryEntryQuery{FeedFilter: filter, Name: q.Name}, subjectKey{}, feedReadPage,
			func(e FeedEntry) (bool, error) { latest = append(latest, e); return true, nil })
		if err != nil {
			return err
		}
		for _, e := range latest {
			versions, err := registryVersions(ctx, sqlTx, e, q.IncludeDeleted)
			if err != nil {
				return err
			}
			out = append(out, versions...)
		}
		if len(out) > 0 {
			return nil
		}
		// A name no card claims whose latest version is not active and
		// gave the feed no server: deleted (its servers are gone from
		// the feed) or deprecated with no remote of its own. The
		// Registry still lists its versions, deprecated ones by default.
		inactive, err := collect(ctx, sqlTx, func(rows *sql.Rows) (FeedEntry, error) {
			e := FeedEntryRegistry{Name: q.Name, Latest: true}
			err := rows.Scan(&e.Source, &e.Version, &e.ChangedAt, &e.ServerJSON, &e.Status, &e.PublishedAt)
			return FeedEntry{Registry: &e}, err
		}, `SELECT source, version, changed_at, server_json, status, published_at FROM registry_entries
			WHERE is_latest = 1 AND name = ? AND status <> 'active' ORDER BY source`, q.Name)
		if err != nil {
			return fmt.Errorf("registry versions of %s: %w", q.Name, err)
		}
		for _, e := range inactive {
			versions, err := registryVersions(ctx, sqlTx, e, q.IncludeDeleted)
			if err != nil {
				return err
			}
			for _, v := range versions {
				if q.IncludeDeleted || v.Registry.Status != "deleted" {
					out = append(out, v)
				}
			}
		}
		return nil
	})
	return out, err
}

// registryVersions returns a latest Registry entry of servers only it
// declares with the other versions of its name in its registry (deleted
// ones only when asked), newest published first, as the Registry's
// .../versions orders them; those others have no records: the servers
// found are their latest version's.
func registryVersions(ctx context.Context, tx *sql.Tx, latest FeedEntry, includeDeleted bool) ([]FeedEntry, error) {
	r := latest.Registry
	cond := ""
	if !includeDeleted {
		cond = " AND status <> 'deleted'"
	}
	others, err := collect(ctx, tx, func(rows *sql.Rows) (FeedEntry, error) {
		e := FeedEntryRegistry{Source: r.Source, Name: r.Name}
		err := rows.Scan(&e.Version, &e.ChangedAt, &e.ServerJSON, &e.Status, &e.PublishedAt)
		return FeedEntry{Registry: &e}, err
	}, `SELECT version, changed_at, server_json, status, published_at FROM registry_entries
		WHERE source = ? AND name = ? AND version <> ?`+cond, r.Source, r.Name, r.Version)
	if err != nil {
		return nil, fmt.Errorf("registry versions of %s: %w", r.Name, err)
	}
	// Each publish time parsed once, not once a comparison.
	type dated struct {
		at time.Time
		e  FeedEntry
	}
	all := make([]dated, 0, len(others)+1)
	for _, e := range append([]FeedEntry{latest}, others...) {
		at, _ := time.Parse(time.RFC3339Nano, e.Registry.PublishedAt)
		all = append(all, dated{at, e})
	}
	slices.SortStableFunc(all, func(a, b dated) int { return b.at.Compare(a.at) })
	out := make([]FeedEntry, len(all))
	for i, d := range all {
		out[i] = d.e
	}
	return out, nil
}

// FeedVersion names the feed's current state: the database's identity and
// its change counter. It changes whenever anything the feed says changes,
// so it makes an ETag.
func (db *DB) FeedVersion(ctx context.Context) (string, error) {
	id, seq, err := scanFeedState(ctx, db.queryRow)
	if err != nil {
		return "", err
	}
	return formatFeedVersion(id, seq), nil
}

// CountFeedServers counts the records q selects (its After and Limit
// aside). Every listed record is counted by the writes that list or remove
// one (feed_state.live): the count of the whole feed is one row's read;
// a search, a filter or a delta is counted by its query.
func (db *DB) CountFeedServers(ctx context.Context, q FeedQuery) (int, error) {
	if !validSource(q.Source) {
		return 0, fmt.Errorf("count the feed: %w: source %q", ErrBadFilter, q.Source)
	}
	if q.Source == FeedSourceCard {
		q.Source = ""
	}
	extra := 0
	if q.withRegistryOnly() {
		err := db.readFeed(ctx, func(tx *sql.Tx) error {
			for _, page := range registryPages {
				err := eachPage(feedReadPage, func(after FeedCursor) ([]FeedServer, error) {
					return page(ctx, tx, q, after, feedReadPage)
				}, func(s FeedServer) FeedCursor { return s.Cursor() }, func(FeedServer) error { extra++; return nil })
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("count the feed: %w", err)
		}
	}
	query, args := `SELECT live FROM feed_state WHERE id = 1`, []any(nil)
	if q.Search != "" || q.Since != "" || q.FeedFilter != (FeedFilter{}) {
		var where string
		where, args = q.where()
		query = `SELECT COUNT(*) FROM ` + feedFrom + ` WHERE ` + where
	}
	var n int
	if err := db.queryRow(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the feed: %w", err)
	}
	return n + extra, nil
}

// FormatTime writes t as the store's timestamp columns hold it (RFC 3339,
// UTC, fixed fraction), for FeedQuery.Since and EntryQuery.Since.
func FormatTime(t time.Time) string { return ts(t) }

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// DomainResult is everything one domain's crawl produced. It is written in a
// single transaction together with the domain's new state, so a crash leaves
// the domain either untouched (still pending, redone next run) or complete.
type DomainResult struct {
	Domain     string
	RunID      int64
	Outcome    string // OutcomeCatalog, OutcomeNoCatalog, OutcomeFailed
	Class      string
	Reason     string
	CatalogURL string
	// NextFetchAfter is the earliest time the domain is due again.
	NextFetchAfter time.Time
	// Definitive says the result replaces what the domain listed before: a
	// catalog was read, or the server said it has none (404/410). After a
	// transient failure the earlier listings stay active.
	Definitive bool
	// KeepCards and KeepCatalogs name documents that could not be read this
	// time for a passing reason (a 503, a timeout): what the domain listed
	// through them stays active rather than vanishing until the next crawl.
	// A kept catalog keeps everything nested below it too.
	KeepCards    []string
	KeepCatalogs []string
	// Capped names the per-domain bounds the crawl hit (CapRemotes, …).
	Capped []string
	// Fetches are the domain's fetch attempts not written yet: written
	// with the result, they cost no write of their own.
	Fetches []Fetched
	// Decisions are probe decisions about the domain's remotes made
	// before its result was saved (all of them skips: with --probe never
	// nothing saved decides them), written with it. The feed's records
	// of the domain, all refreshed by this write, carry them. One the run
	// already has for its endpoint (another domain lists it too) is not
	// written: SaveDomain sets its Repeated, in the caller's slice.
	Decisions []ProbeDecision

	// Bodies are documents the domain's records name by hash that no
	// fetch brought: the data of inline cards and catalogs. They are kept
	// as fetched bodies are, so crawl --revalidate can re-judge them.
	Bodies []Body

	Catalogs []CatalogRecord
	Entries  []EntryRecord
	Cards    []CardRecord
	Remotes  []RemoteRecord
	Listings []ListingRecord
}

// CatalogRecord is one catalog document reached from the domain.
type CatalogRecord struct {
	URL         string
	ParentURL   string
	Depth       int
	BaseURL     string
	SpecVersion string
	SHA256      string
	EntryCount  int
	Findings    finding.List
	// JudgedBy is the version of the rules that produced Findings
	// (catalog.RulesVersion), so a rules change can re-judge the document.
	JudgedBy string
}

// EntryRecord is one catalog entry.
type EntryRecord struct {
	CatalogURL  string
	Identifier  string
	Version     string
	Type        string
	URL         string
	ResolvedURL string
	Inline      bool
	DisplayName string
	Raw         []byte
}

// CardRecord is one Server Card, fetched or inline.
type CardRecord struct {
	Key         string
	SourceURL   string
	Inline      bool
	SHA256      string
	Schema      string
	Name        string
	Title       string
	Version     string
	Description string
	WebsiteURL  string
	Grade       string
	Findings    finding.List
	JSON        []byte
	// JudgedBy is the version of the rules that produced Grade and
	// Findings (servercard.RulesVersion).
	JudgedBy string
}

// RemoteRecord is one remote endpoint declared by a card.
type RemoteRecord struct {
	URLNorm   string
	URL       string
	Type      string
	Templated bool
	CardKey   string
	JSON      []byte
}

// ListingRecord is one link of the listing chain for the domain.
type ListingRecord struct {
	CatalogURL string
	Identifier string
	CardKey    string
	RemoteNorm string // "" for a card without remotes
	// Codes are what the listing catalog found of this entry and of its
	// own signature (catalog.EntryFindings), as CodesText writes them. They
	// describe the listing; they are not part of what identifies it.
	Codes string
	// Entry is the index of the entry that listed the card in its
	// catalog's entries, for a server's page to pick that entry's findings
	// from the catalog's. Neither identity nor shown in the feed.
	Entry int
}

// id is the listing without what it says: what identifies it in the
// table (its primary key, with the domain).
func (l ListingRecord) id() ListingRecord {
	l.Codes, l.Entry = "", 0
	return l
}

// shown is the listing as the feed's records show it: what a change of
// moves a record's updated_at.
func (l ListingRecord) shown() ListingRecord {
	l.Entry = 0
	return l
}

// CodesText is how a listing's codes are stored: distinct, sorted,
// space-separated ("" for none). listingCodes reads them back.
func CodesText(codes []string) string {
	codes = slices.Clone(codes)
	slices.Sort(codes)
	return strings.Join(slices.Compact(codes), " ")
}

// codedListing is the condition that the listing aliased l holds a code:
// its argument is codeLike's. It reads the coded listings' own index
// (listings_coded), which its first term lets the planners use.
func codedListing(l string) string {
	return l + `.entry_codes <> '' AND ' ' || ` + l + `.entry_codes || ' ' LIKE ? ESCAPE '\'`
}

// codeLike is codedListing's argument for code.
func codeLike(code string) string { return "% " + likeEscaper.Replace(code) + " %" }

// listingCodes reads a listing's stored codes (CodesText); nil for none.
func listingCodes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// SaveDomain writes a domain's result and marks it done.
func (db *DB) SaveDomain(ctx context.Context, r DomainResult) error {
	at := db.now()
	capped, err := capsText(r.Capped)
	if err != nil {
		return err
	}
	// PostgreSQL may abort a transaction that deadlocked with another
	// worker's; retryTx runs it again.
	if err := db.retryTx(ctx, func() error {
		return db.write(func(tx *txw) error { return saveDomain(tx, r, at, capped) })
	}); err != nil {
		return fmt.Errorf("save %s: %w", r.Domain, err)
	}
	db.grew(ctx, 1)
	return nil
}

// saveDomain is SaveDomain's transaction.
// cardChanged reports whether a stored card reads differently in c: as
// another document, grade, findings or judge, or from another place. Only
// then can the records of other domains' listings of it change; a new
// card has none, and a card saved again as it was changes only the records
// of this domain's listings, which feedAfterDomain refreshes anyway.
func cardChanged(tx *txw, c CardRecord, findings string) (bool, error) {
	var sha, grade, stored, source, judge string
	var inline bool
	err := tx.queryRow(`SELECT sha256, grade, findings, source_url, inline, judged_by FROM cards WHERE key = ?`, c.Key).
		Scan(&sha, &grade, &stored, &source, &inline, &judge)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stored card %s: %w", c.Key, err)
	}
	return sha != c.SHA256 || grade != c.Grade || stored != findings || source != c.SourceURL || inline != c.Inline ||
		judge != c.JudgedBy, nil
}

func saveDomain(tx *txw, r DomainResult, at time.Time, capped string) error {
	now := ts(at)
	if err := addObservations(tx, r.Fetches); err != nil {
		return err
	}
	for _, b := range r.Bodies {
		if err := addDocument(tx, b.SHA256, b.ContentType, b.Data, now); err != nil {
			return err
		}
	}
	// What the domain listed before, read in this transaction: a retried
	// write reads it again.
	before, err := activeListings(tx, r.Domain)
	if err != nil {
		return err
	}
	for _, c := range r.Catalogs {
		findings, err := findingsText(c.Findings)
		if err != nil {
			return err
		}
		if _, err := tx.exec(`INSERT INTO catalogs
			(url, domain, parent_url, depth, base_url, spec_version, sha256, entry_count, findings, first_seen, last_seen, changed_at,
			 judged_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (url) DO UPDATE SET
			  changed_at = CASE WHEN catalogs.sha256 <> excluded.sha256 THEN excluded.last_seen ELSE catalogs.changed_at END,
			  domain = excluded.domain, parent_url = excluded.parent_url, depth = excluded.depth,
			  base_url = excluded.base_url, spec_version = excluded.spec_version, sha256 = excluded.sha256,
			  entry_count = excluded.entry_count, findings = excluded.findings, last_seen = excluded.last_seen,
			  judged_by = excluded.judged_by`,
			c.URL, r.Domain, c.ParentURL, c.Depth, c.BaseURL, c.SpecVersion, c.SHA256, c.EntryCount, findings,
			now, now, now, c.JudgedBy); err != nil {
			return fmt.Errorf("save catalog %s: %w", c.URL, err)
		}
		if _, err := tx.exec(`INSERT INTO domain_catalogs
			(domain, catalog_url, parent_url, depth, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (domain, catalog_url) DO UPDATE SET
			  parent_url = excluded.parent_url, depth = excluded.depth, last_seen = excluded.last_seen`,
			r.Domain, c.URL, c.ParentURL, c.Depth, now, now); err != nil {
			return fmt.Errorf("save catalog %s of %s: %w", c.URL, r.Domain, err)
		}
	}
	for _, e := range r.Entries {
		if _, err := tx.exec(`INSERT INTO entries
			(catalog_url, identifier, version, type, url, resolved_url, inline, display_name, raw, first_seen, last_seen, changed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (catalog_url, identifier, version) DO UPDATE SET
			  changed_at = CASE WHEN entries.raw <> excluded.raw THEN excluded.last_seen ELSE entries.changed_at END,
			  type = excluded.type, url = excluded.url, resolved_url = excluded.resolved_url, inline = excluded.inline,
			  display_name = excluded.display_name, raw = excluded.raw, last_seen = excluded.last_seen`,
			e.CatalogURL, e.Identifier, e.Version, e.Type, e.URL, e.ResolvedURL, e.Inline, e.DisplayName,
			string(e.Raw), now, now, now); err != nil {
			return fmt.Errorf("save entry %s in %s: %w", e.Identifier, e.CatalogURL, err)
		}
	}
	var changedCards []string
	for _, c := range r.Cards {
		findings, err := findingsText(c.Findings)
		if err != nil {
			return err
		}
		changed, err := cardChanged(tx, c, findings)
		if err != nil {
			return err
		}
		if changed {
			changedCards = append(changedCards, c.Key)
		}
		if _, err := tx.exec(`INSERT INTO cards
			(key, source_url, inline, sha256, schema, name, title, version, description, website_url, grade, findings, json,
			 first_seen, last_seen, changed_at, judged_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET
			  changed_at = CASE WHEN cards.sha256 <> excluded.sha256 THEN excluded.last_seen ELSE cards.changed_at END,
			  source_url = excluded.source_url, inline = excluded.inline, sha256 = excluded.sha256, schema = excluded.schema,
			  name = excluded.name, title = excluded.title, version = excluded.version, description = excluded.description,
			  website_url = excluded.website_url, grade = excluded.grade, findings = excluded.findings, json = excluded.json,
			  last_seen = excluded.last_seen, judged_by = excluded.judged_by`,
			c.Key, c.SourceURL, c.Inline, c.SHA256, c.Schema, c.Name, c.Title, c.Version, c.Description,
			c.WebsiteURL, c.Grade, findings, string(c.JSON), now, now, now, c.JudgedBy); err != nil {
			return fmt.Errorf("save card %s: %w", c.Key, err)
		}
	}
	for _, m := range r.Remotes {
		if _, err := tx.exec(`INSERT INTO remotes
			(url_norm, url, type, templated, card_key, json, first_seen, last_seen, changed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (url_norm) DO UPDATE SET
			  changed_at = CASE WHEN remotes.json <> excluded.json OR remotes.type <> excluded.type
			                    THEN excluded.last_seen ELSE remotes.changed_at END,
			  url = excluded.url, type = excluded.type, templated = excluded.templated, card_key = excluded.card_key,
			  json = excluded.json, last_seen = excluded.last_seen`,
			m.URLNorm, m.URL, m.Type, m.Templated, m.CardKey, string(m.JSON), now, now, now); err != nil {
			return fmt.Errorf("save remote %s: %w", m.URL, err)
		}
	}
	// What the domain lists after this write follows from what it listed
	// before: a definitive result keeps only the kept listings and the new
	// ones, any other adds the new ones. Working it out here spares
	// reading the listings again (and a statement when nothing retires).
	after := before
	if r.Definitive {
		kept, err := keptListings(tx, r, before)
		if err != nil {
			return err
		}
		after = kept
		if retiring(before, kept, r.Listings) {
			if _, err := tx.exec(`UPDATE listings SET active = FALSE WHERE domain = ? AND active = TRUE`, r.Domain); err != nil {
				return fmt.Errorf("retire listings of %s: %w", r.Domain, err)
			}
			for _, k := range kept {
				if _, err := tx.exec(`UPDATE listings SET active = TRUE WHERE domain = ? AND catalog_url = ?
					AND identifier = ? AND card_key = ? AND remote_norm = ?`,
					r.Domain, k.CatalogURL, k.Identifier, k.CardKey, k.RemoteNorm); err != nil {
					return fmt.Errorf("keep listing of %s: %w", r.Domain, err)
				}
			}
		}
	}
	after = unionListings(after, r.Listings)
	for _, l := range r.Listings {
		if _, err := tx.exec(`INSERT INTO listings
			(domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen, entry_codes, entry_index)
			VALUES (?, ?, ?, ?, ?, TRUE, ?, ?, ?, ?)
			ON CONFLICT (domain, catalog_url, identifier, card_key, remote_norm) DO UPDATE SET
			  active = TRUE, last_seen = excluded.last_seen, entry_codes = excluded.entry_codes,
			  entry_index = excluded.entry_index`,
			r.Domain, l.CatalogURL, l.Identifier, l.CardKey, l.RemoteNorm, now, now, l.Codes, l.Entry); err != nil {
			return fmt.Errorf("save listing for %s: %w", r.Domain, err)
		}
	}
	cards, remotes := countListings(after)
	// Consecutive failures are counted, and from the second on the domain
	// is left for longer (Backoff); any answer resets the count.
	attempts := 0
	if r.Outcome == OutcomeFailed {
		if err := tx.queryRow(`UPDATE domains SET attempts = attempts + 1 WHERE domain = ? RETURNING attempts`,
			r.Domain).Scan(&attempts); err != nil {
			return fmt.Errorf("count attempts of %s: %w", r.Domain, err)
		}
	}
	nextAt := r.NextFetchAfter
	if wait := Backoff(r.Domain, attempts); wait > 0 && at.Add(wait).After(nextAt) {
		nextAt = at.Add(wait)
	}
	var next any
	if !nextAt.IsZero() {
		next = ts(nextAt)
	}
	if _, err := tx.exec(`UPDATE domains SET state = ?, outcome = ?, class = ?, reason = ?, catalog_url = ?,
		cards = ?, remotes = ?, last_run_id = ?, last_crawled_at = ?, next_fetch_after = ?, capped = ?, attempts = ?,
		lease_owner = '' WHERE domain = ?`,
		StateDone, r.Outcome, r.Class, r.Reason, r.CatalogURL, cards, remotes, r.RunID, now, next, capped, attempts,
		r.Domain); err != nil {
		return fmt.Errorf("save domain %s: %w", r.Domain, err)
	}
	for i := range r.Decisions {
		// Set on every attempt: a retried write decides afresh.
		repeated, err := insertDecisionOnce(tx, now, r.Decisions[i])
		if err != nil {
			return err
		}
		r.Decisions[i].Repeated = repeated
	}
	return feedAfterDomain(tx, now, r, before, after, changedCards)
}

const domainCatalogsQuery = `SELECT catalog_url, parent_url FROM domain_catalogs WHERE domain = ?`

// keptListings returns the domain's active listings (before) that reach a
// kept card, or come through a kept catalog or any catalog nested below one.
func keptListings(tx *txw, r DomainResult, before []ListingRecord) ([]ListingRecord, error) {
	if len(r.KeepCards) == 0 && len(r.KeepCatalogs) == 0 {
		return nil, nil
	}
	catalogs := map[string]bool{}
	children := map[string][]string{}
	if len(r.KeepCatalogs) > 0 {
		if err := func() error {
			rows, err := tx.query(domainCatalogsQuery, r.Domain)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var u, parent string
				if err := rows.Scan(&u, &parent); err != nil {
					return err
				}
				children[parent] = append(children[parent], u)
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("catalogs of %s: %w", r.Domain, err)
		}
	}
	queue := append([]string(nil), r.KeepCatalogs...)
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if catalogs[u] {
			continue
		}
		catalogs[u] = true
		queue = append(queue, children[u]...)
	}
	cards := map[string]bool{}
	for _, k := range r.KeepCards {
		cards[k] = true
	}
	var out []ListingRecord
	for _, l := range before {
		if cards[l.CardKey] || catalogs[l.CatalogURL] {
			out = append(out, l)
		}
	}
	return out, nil
}

// retiring says whether a definitive result leaves some of the domain's
// active listings (before) neither kept nor listed again.
func retiring(before, kept, listed []ListingRecord) bool {
	if len(before) == 0 {
		return false
	}
	stay := make(map[ListingRecord]bool, len(kept)+len(listed))
	for _, l := range kept {
		stay[l.id()] = true
	}
	for _, l := range listed {
		stay[l.id()] = true
	}
	for _, l := range before {
		if !stay[l.id()] {
			return true
		}
	}
	return false
}

// unionListings is a set union by identity: have (distinct, as read or
// derived from the table) plus those of add not in it yet. A listing in
// both takes add's codes and entry, as the table does when add is written.
func unionListings(have, add []ListingRecord) []ListingRecord {
	if len(add) == 0 {
		return have
	}
	out := slices.Clone(have)
	at := make(map[ListingRecord]int, len(have)+len(add))
	for i, l := range have {
		at[l.id()] = i
	}
	for _, l := range add {
		if i, ok := at[l.id()]; ok {
			out[i] = l
			continue
		}
		at[l.id()] = len(out)
		out = append(out, l)
	}
	return out
}

// countListings counts the distinct cards and endpoints listings reach, as
// domains.cards and domains.remotes hold them.
func countListings(ls []ListingRecord) (cards, remotes int) {
	cs := make(map[string]bool, len(ls))
	rs := make(map[string]bool, len(ls))
	for _, l := range ls {
		cs[l.CardKey] = true
		if l.RemoteNorm != "" {
			rs[l.RemoteNorm] = true
		}
	}
	return len(cs), len(rs)
}

// Caps a domain can hit, as stored in domains.capped.
const (
	CapRemotes  = "remotes"  // remotes per card
	CapCards    = "cards"    // cards per domain
	CapCatalogs = "catalogs" // catalogs per domain
	CapProbes   = "probes"   // probes per domain per run
	CapTime     = "time"     // time per domain, probes included
)

func capsText(caps []string) (string, error) {
	caps = slices.Clone(caps)
	sort.Strings(caps)
	b, err := json.Marshal(nonNil(slices.Compact(caps)))
	if err != nil {
		return "", fmt.Errorf("encode caps: %w", err)
	}
	return string(b), nil
}

// AddDomainCaps records caps a domain hit after its result was saved (its
// probes run then), next to those already recorded for its last crawl.
func (db *DB) AddDomainCaps(ctx context.Context, domain string, caps []string) error {
	if len(caps) == 0 {
		return nil
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record caps of %s: %w", domain, err)
	}
	defer tx.Rollback()
	var raw string
	if err := tx.QueryRowContext(ctx, `SELECT capped FROM domains WHERE domain = ?`, domain).Scan(&raw); err != nil {
		return fmt.Errorf("record caps of %s: %w", domain, err)
	}
	var have []string
	_ = json.Unmarshal([]byte(raw), &have) // written by capsText; a bad value is replaced
	text, err := capsText(append(have, caps...))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE domains SET capped = ? WHERE domain = ?`, text, domain); err != nil {
		return fmt.Errorf("record caps of %s: %w", domain, err)
	}
	return tx.Commit()
}

// DomainRow is a domain's last outcome, as `cardcrawl domains` shows it.
type DomainRow struct {
	Domain         string `json:"domain"`
	State          string `json:"state"`
	Outcome        string `json:"outcome,omitempty"`
	Class          string `json:"class,omitempty"`
	Reason         string `json:"reason,omitempty"`
	CatalogURL     string `json:"catalogUrl,omitempty"`
	Cards          int    `json:"cards"`
	Remotes        int    `json:"remotes"`
	LastCrawledAt  string `json:"lastCrawledAt,omitempty"`
	NextFetchAfter string `json:"nextFetchAfter,omitempty"`
	// CatalogFindings are the distinct finding codes of the domain's
	// catalogs (spec_version_missing, entries_truncated, catalog_cycle, …).
	CatalogFindings []string `json:"catalogFindings,omitempty"`
	// Capped names the per-domain bounds its last crawl hit (remotes,
	// cards, catalogs, probes, time).
	Capped []string `json:"capped,omitempty"`
	// Attempts counts the consecutive failed crawls up to the last one (0
	// once a crawl got an answer); see Backoff.
	Attempts int `json:"attempts,omitempty"`
}

// domainPage is how many domains EachDomain reads per query.
const domainPage = 500

// EachDomain calls fn for every known domain, in name order, reading them a
// page at a time (keyset on the primary key), so memory does not grow with
// the number of domains. An error from fn stops the walk and is returned.
func (db *DB) EachDomain(ctx context.Context, fn func(DomainRow) error) error {
	return eachPage(domainPage, func(after string) ([]DomainRow, error) { return db.domainPage(ctx, after) },
		func(d DomainRow) string { return d.Domain }, fn)
}

// Domains lists every known domain, in name order. Tests and small tools
// use it; commands stream with EachDomain.
func (db *DB) Domains(ctx context.Context) ([]DomainRow, error) {
	var out []DomainRow
	err := db.EachDomain(ctx, func(d DomainRow) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

func (db *DB) domainPage(ctx context.Context, after string) ([]DomainRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT domain, state, outcome, class, reason, catalog_url, cards, remotes,
		last_crawled_at, next_fetch_after, capped, attempts FROM domains WHERE domain > ? ORDER BY domain LIMIT ?`, after, domainPage)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	defer rows.Close()
	var out []DomainRow
	for rows.Next() {
		var d DomainRow
		var outcome, class, reason, catURL, last, next sql.NullString
		var capped string
		if err := rows.Scan(&d.Domain, &d.State, &outcome, &class, &reason, &catURL, &d.Cards, &d.Remotes, &last, &next,
			&capped, &d.Attempts); err != nil {
			return nil, fmt.Errorf("list domains: %w", err)
		}
		d.Outcome, d.Class, d.Reason, d.CatalogURL = outcome.String, class.String, reason.String, catURL.String
		d.LastCrawledAt, d.NextFetchAfter = last.String, next.String
		_ = json.Unmarshal([]byte(capped), &d.Capped) // written by capsText; a bad value shows no caps
		if len(d.Capped) == 0 {
			d.Capped = nil
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	rows.Close()
	if len(out) == 0 {
		return out, nil
	}
	findings, err := db.catalogFindingCodes(ctx, out[0].Domain, out[len(out)-1].Domain)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].CatalogFindings = findings[out[i].Domain]
	}
	return out, nil
}

const catalogFindingsQuery = `SELECT dc.domain, c.findings FROM domain_catalogs dc
	JOIN catalogs c ON c.url = dc.catalog_url WHERE dc.domain >= ? AND dc.domain <= ?`

// catalogFindingCodes maps each domain in [first, last] to the sorted,
// distinct finding codes of its catalogs.
func (db *DB) catalogFindingCodes(ctx context.Context, first, last string) (map[string][]string, error) {
	rows, err := db.sql.QueryContext(ctx, catalogFindingsQuery, first, last)
	if err != nil {
		return nil, fmt.Errorf("catalog findings: %w", err)
	}
	defer rows.Close()
	seen := map[string]map[string]bool{}
	for rows.Next() {
		var domain string
		var fs finding.List
		if err := rows.Scan(&domain, findingsScan{&fs}); err != nil {
			return nil, fmt.Errorf("catalog findings: %w", err)
		}
		for _, f := range fs {
			if seen[domain] == nil {
				seen[domain] = map[string]bool{}
			}
			seen[domain][f.Code] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog findings: %w", err)
	}
	out := map[string][]string{}
	for d, codes := range seen {
		for c := range codes {
			out[d] = append(out[d], c)
		}
		sort.Strings(out[d])
	}
	return out, nil
}

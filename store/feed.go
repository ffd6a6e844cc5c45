package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// Why a feed record went away, as its tombstone says.
const (
	// RemovedNotListed: no catalog lists the card, or no listed card
	// declares the endpoint, any more.
	RemovedNotListed = "not_listed"
	// RemovedCatalogGone: the last domain listing it no longer has a
	// catalog (it answered 404/410 for it).
	RemovedCatalogGone = "catalog_gone"
)

// Kinds of feed record.
const (
	kindEndpoint = 0
	kindCard     = 1
)

// feedKey names one feed record.
type feedKey struct {
	kind int
	key  string
}

// feedRow is one feed_servers row: what the record says (meaning), plus
// what changes on every crawl without changing its meaning.
type feedRow struct {
	meaning feedMeaning
	// Not meaning: a re-fetch or a re-decision changes these only.
	firstSeen, lastSeen, probedAt, decision, decisionReason string
}

// feedMeaning is what a mirror must hear about: a change here moves
// updated_at.
type feedMeaning struct {
	endpoint, transport                                          string
	templated                                                    bool
	cardKey, cardURL                                             string
	cardInline                                                   bool
	cardSHA, name, title, version, description, website, repo    string
	grade, findings                                              string
	probeOutcome, probeTransport, probeProtocol, probeServerName string
	probeServerVersion                                           string
	probeTools                                                   sql.NullInt64
	probePartial                                                 bool
	remote, icons                                                string
	catalogCard                                                  string
}

// feedTx keeps the read model in step within one write transaction.
type feedTx struct {
	tx  *txw
	now string
	seq int64 // this transaction's change number; 0 until something changed
	// parts caches what records take from the cards read in this
	// transaction: a card with thousands of remotes is decoded once.
	parts map[string]cardParts
	// cards are the describing cards of records written in this
	// transaction, before and after: their entries' order is redone where
	// the value is true. False marks a card whose one live record came to
	// life here as its first: its entry_first is right as inserted.
	cards map[string]bool
	// live is how far this transaction moved the count of listed records
	// and not yet wrote: one statement per transaction, not per record.
	live int
}

func newFeedTx(tx *txw, now string) *feedTx {
	return &feedTx{tx: tx, now: now, parts: map[string]cardParts{}, cards: map[string]bool{}}
}

// bumpFeedSeq takes the next change number.
const bumpFeedSeq = `UPDATE feed_state SET seq = seq + 1 WHERE id = 1 RETURNING seq`

// bump returns this transaction's change number, taking the next one from
// feed_state the first time.
func (f *feedTx) bump() (int64, error) {
	err := takeFeedSeq(f.tx, &f.seq)
	return f.seq, err
}

// takeFeedSeq sets *seq to the transaction's change number, taking the
// next one from feed_state when it has none yet (0).
func takeFeedSeq(tx *txw, seq *int64) error {
	if *seq != 0 {
		return nil
	}
	if err := tx.queryRow(bumpFeedSeq).Scan(seq); err != nil {
		return fmt.Errorf("feed change counter: %w", err)
	}
	return nil
}

// domainListings are the (kind, key) records a domain's active listings
// reach, each with its listings in listingOrder, to tell afterwards which
// changed.
type domainListings map[feedKey][]ListingRecord

// activeListings reads a domain's active listings, in no particular order.
func activeListings(tx *txw, domain string) ([]ListingRecord, error) {
	rows, err := tx.query(`SELECT catalog_url, identifier, card_key, remote_norm, entry_codes FROM listings
		WHERE domain = ? AND active = TRUE`, domain)
	if err != nil {
		return nil, fmt.Errorf("listings of %s: %w", domain, err)
	}
	defer rows.Close()
	var out []ListingRecord
	for rows.Next() {
		var l ListingRecord
		if err := rows.Scan(&l.CatalogURL, &l.Identifier, &l.CardKey, &l.RemoteNorm, &l.Codes); err != nil {
			return nil, fmt.Errorf("listings of %s: %w", domain, err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// recordOf is the record a listing reaches: its endpoint's, or for a card
// without remotes the card's.
func recordOf(remoteNorm, cardKey string) feedKey {
	if remoteNorm == "" {
		return feedKey{kindCard, cardKey}
	}
	return feedKey{kindEndpoint, remoteNorm}
}

// groupListings groups listings by the record they reach. The order within
// a group is byte order, done here rather than in SQL, so a comparison
// does not depend on a database's collation.
func groupListings(ls []ListingRecord) domainListings {
	out := domainListings{}
	for _, l := range ls {
		k := recordOf(l.RemoteNorm, l.CardKey)
		out[k] = append(out[k], l)
	}
	for _, g := range out {
		slices.SortFunc(g, listingOrder)
	}
	return out
}

// sameShown: the feed shows the two listings alike.
func sameShown(a, b ListingRecord) bool { return a.shown() == b.shown() }

func listingOrder(a, b ListingRecord) int {
	if c := cmpString(a.RemoteNorm, b.RemoteNorm); c != 0 {
		return c
	}
	if c := cmpString(a.CardKey, b.CardKey); c != 0 {
		return c
	}
	if c := cmpString(a.CatalogURL, b.CatalogURL); c != 0 {
		return c
	}
	return cmpString(a.Identifier, b.Identifier)
}

// feedAfterDomain brings every record SaveDomain may have changed up to
// date: those the domain listed before or lists now, and those described
// by a stored card it changed (other domains may list that card too:
// changedCards, cardChanged). before and after are the domain's active
// listings before and after SaveDomain.
func feedAfterDomain(tx *txw, now string, r DomainResult, beforeList, afterList []ListingRecord, changedCards []string) error {
	before, after := groupListings(beforeList), groupListings(afterList)
	reason := RemovedNotListed
	if r.Definitive && r.Outcome != OutcomeCatalog {
		reason = RemovedCatalogGone
	}
	touched := map[feedKey]bool{} // value: the record's listing chain changed
	for k, ls := range before {
		touched[k] = !slices.EqualFunc(ls, after[k], sameShown)
	}
	for k, ls := range after {
		touched[k] = !slices.EqualFunc(ls, before[k], sameShown)
	}
	for _, c := range changedCards {
		ks, err := cardRecords(tx, c)
		if err != nil {
			return err
		}
		for _, k := range ks {
			if _, ok := touched[k]; !ok {
				touched[k] = false
			}
		}
	}
	f := newFeedTx(tx, now)
	for _, c := range r.Cards {
		inline := !CardByURL(c.SourceURL, c.Inline)
		f.parts[cardPartsKey(c.Key, c.SHA256, inline)] = decodeCardParts(string(c.JSON), inline)
	}
	return f.refreshAll(touched, reason)
}

// cardRecords are the records a card's active listings reach: those it may
// describe (other domains may list it too).
func cardRecords(tx *txw, card string) ([]feedKey, error) {
	rows, err := tx.query(`SELECT DISTINCT remote_norm FROM listings WHERE card_key = ? AND active = TRUE`, card)
	if err != nil {
		return nil, fmt.Errorf("records of card %s: %w", card, err)
	}
	defer rows.Close()
	var out []feedKey
	for rows.Next() {
		var norm string
		if err := rows.Scan(&norm); err != nil {
			return nil, fmt.Errorf("records of card %s: %w", card, err)
		}
		out = append(out, recordOf(norm, card))
	}
	return out, rows.Err()
}

// refreshAll refreshes records in a fixed order, which keeps concurrent
// writers from locking rows in opposite orders (PostgreSQL); listingChanged
// says whose listing chain changed.
func (f *feedTx) refreshAll(listingChanged map[feedKey]bool, reason string) error {
	keys := make([]feedKey, 0, len(listingChanged))
	for k := range listingChanged {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b feedKey) int {
		if a.kind != b.kind {
			return a.kind - b.kind
		}
		return cmpString(a.key, b.key)
	})
	for _, k := range keys {
		if err := f.refresh(k, listingChanged[k], reason); err != nil {
			return err
		}
	}
	return f.finish()
}

// entryKey is a record's own entry_first value, as entryFirst computes
// it: its kind as text, then its key.
func entryKey(k feedKey) string { return strconv.Itoa(k.kind) + k.key }

// entryFirst is the first live record of a card's entry, as entry_first
// holds it.
const entryFirst = `SELECT MIN(CAST(g.kind AS TEXT) || g.key) FROM feed_servers g WHERE g.card_key = ? AND g.removed_at IS NULL`

// finish redoes entry_first for the cards whose records changed: the
// first record of each card's entry.
func (f *feedTx) finish() error {
	if f.live != 0 {
		if _, err := f.tx.exec(`UPDATE feed_state SET live = live + ? WHERE id = 1`, f.live); err != nil {
			return fmt.Errorf("feed count: %w", err)
		}
		f.live = 0
	}
	keys := make([]string, 0, len(f.cards))
	for k := range f.cards {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, card := range keys {
		if !f.cards[card] {
			continue
		}
		res, err := f.tx.exec(`UPDATE feed_servers SET entry_first = (`+entryFirst+`)
			WHERE card_key = ? AND removed_at IS NULL AND entry_first <> (`+entryFirst+`)`, card, card, card)
		if err != nil {
			return fmt.Errorf("feed entry of %s: %w", card, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			if _, err := f.bump(); err != nil {
				return err
			}
		}
	}
	clear(f.cards)
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// feedAfterDecision records a new probe decision in the endpoint's
// record. A decision never changes a record's meaning, and every remote
// gets one on every run, so this is one targeted update rather than a
// recomputation (compute reads the same latest decision).
func feedAfterDecision(f *feedTx, d ProbeDecision) error {
	if d.RemoteNorm == "" {
		return nil
	}
	if f.seq != 0 {
		// The transaction's change number is known: one statement.
		if _, err := f.tx.exec(`UPDATE feed_servers SET decision = ?, decision_reason = ?, seq = ?
			WHERE kind = 0 AND key = ? AND removed_at IS NULL AND (decision <> ? OR decision_reason <> ?)`,
			d.Decision, d.Reason, f.seq, d.RemoteNorm, d.Decision, d.Reason); err != nil {
			return fmt.Errorf("feed record %s: %w", d.RemoteNorm, err)
		}
		return nil
	}
	res, err := f.tx.exec(`UPDATE feed_servers SET decision = ?, decision_reason = ?
		WHERE kind = 0 AND key = ? AND removed_at IS NULL AND (decision <> ? OR decision_reason <> ?)`,
		d.Decision, d.Reason, d.RemoteNorm, d.Decision, d.Reason)
	if err != nil {
		return fmt.Errorf("feed record %s: %w", d.RemoteNorm, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	seq, err := f.bump()
	if err != nil {
		return err
	}
	if _, err := f.tx.exec(`UPDATE feed_servers SET seq = ? WHERE kind = 0 AND key = ?`, seq, d.RemoteNorm); err != nil {
		return fmt.Errorf("feed record %s: %w", d.RemoteNorm, err)
	}
	return nil
}

// feedAfterProbe brings an endpoint's record up to date after a probe was
// recorded.
func feedAfterProbe(tx *txw, now, remoteNorm string) error {
	if remoteNorm == "" {
		return nil
	}
	f := newFeedTx(tx, now)
	if err := f.refresh(feedKey{kindEndpoint, remoteNorm}, false, RemovedNotListed); err != nil {
		return err
	}
	return f.finish()
}

// refresh recomputes one record from the crawl's tables and writes it if
// anything changed: updated_at moves when its meaning changed (or its
// listing chain did, listingChanged), and a record no longer listed becomes
// a tombstone with reason.
func (f *feedTx) refresh(k feedKey, listingChanged bool, reason string) error {
	now, c, err := f.compute(k)
	if err != nil {
		return err
	}
	live := c.live
	// A live record compute found no row for (one new in this crawl) has
	// nothing stored to read.
	var old feedRow
	var oldLive, exists bool
	if !live || c.recorded {
		if old, oldLive, exists, err = f.stored(k); err != nil {
			return err
		}
	}
	if exists && oldLive {
		f.cards[old.meaning.cardKey] = true
	}
	if live {
		card := now.meaning.cardKey
		_, seen := f.cards[card]
		// The first live record of its card is its entry's first as
		// inserted (entryKey): finish has nothing to redo for the card
		// unless another of its records changes in this transaction.
		f.cards[card] = seen || (exists && oldLive) || c.cardLive
	}
	switch {
	case !live && (!exists || !oldLive):
		return nil
	case !live:
		seq, err := f.bump()
		if err != nil {
			return err
		}
		if _, err := f.tx.exec(`UPDATE feed_servers SET removed_at = ?, removed_reason = ?, updated_at = ?, seq = ?,
			entry_first = '' WHERE kind = ? AND key = ?`, f.now, reason, f.now, seq, k.kind, k.key); err != nil {
			return fmt.Errorf("remove feed record %s: %w", k.key, err)
		}
		f.live--
		return nil
	case exists && oldLive && old == now && !listingChanged:
		return nil
	}
	seq, err := f.bump()
	if err != nil {
		return err
	}
	// A re-fetch or re-decision that changed nothing a mirror must hear
	// about keeps updated_at. A record that comes (back) to life starts
	// as the first of its card's entry: finish puts right what that gets
	// wrong, but for the usual card of one record, new in this crawl,
	// there is then nothing to put right, where an empty entry_first
	// cost a second write of the row and its index.
	keep := exists && oldLive && old.meaning == now.meaning && !listingChanged
	m := now.meaning
	_, err = f.tx.exec(`INSERT INTO feed_servers (kind, key, endpoint, transport, templated, card_key, card_url,
		card_inline, card_sha256, name, title, version, description, website_url, repository, grade, findings, first_seen,
		last_seen, probe_outcome, probed_at, probe_transport, probe_protocol, probe_server_name, probe_server_version,
		probe_tool_count, probe_partial, decision, decision_reason, updated_at, removed_at, removed_reason, seq, remote,
		icons, catalog_card, entry_first)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, '', ?, ?, ?, ?, ?)
		ON CONFLICT (kind, key) DO UPDATE SET endpoint = excluded.endpoint, transport = excluded.transport,
		  templated = excluded.templated, card_key = excluded.card_key, card_url = excluded.card_url,
		  card_inline = excluded.card_inline, card_sha256 = excluded.card_sha256, name = excluded.name,
		  title = excluded.title, version = excluded.version, description = excluded.description,
		  website_url = excluded.website_url, repository = excluded.repository, grade = excluded.grade,
		  findings = excluded.findings, first_seen = excluded.first_seen, last_seen = excluded.last_seen,
		  probe_outcome = excluded.probe_outcome, probed_at = excluded.probed_at,
		  probe_transport = excluded.probe_transport, probe_protocol = excluded.probe_protocol,
		  probe_server_name = excluded.probe_server_name, probe_server_version = excluded.probe_server_version,
		  probe_tool_count = excluded.probe_tool_count, probe_partial = excluded.probe_partial,
		  decision = excluded.decision, decision_reason = excluded.decision_reason,
		  updated_at = CASE WHEN ? = 1 THEN feed_servers.updated_at ELSE excluded.updated_at END,
		  removed_at = NULL, removed_reason = '', seq = excluded.seq, remote = excluded.remote, icons = excluded.icons,
		  catalog_card = excluded.catalog_card,
		  entry_first = CASE WHEN feed_servers.removed_at IS NULL THEN feed_servers.entry_first ELSE excluded.entry_first END`,
		k.kind, k.key, m.endpoint, m.transport, m.templated, m.cardKey, m.cardURL, m.cardInline,
		m.cardSHA, m.name, m.title, m.version, m.description, m.website, m.repo, m.grade, m.findings, now.firstSeen,
		now.lastSeen, m.probeOutcome, now.probedAt, m.probeTransport, m.probeProtocol, m.probeServerName,
		m.probeServerVersion, m.probeTools, m.probePartial, now.decision, now.decisionReason,
		f.now, seq, m.remote, m.icons, m.catalogCard, entryKey(k), keep)
	if err != nil {
		return fmt.Errorf("write feed record %s: %w", k.key, err)
	}
	if exists && oldLive {
		return nil
	}
	f.live++
	return nil
}

// An endpoint's record is described by the best-graded card of its active
// listings (gradeRank), ties going to the smallest card key, so the record
// does not depend on crawl order. endpointRecordQuery reads the record with
// the card given, or with its first card in key order when that is NULL
// (listings_remote_card): one look-up however many domains list the
// endpoint, and the answer whenever that card is conformant. Otherwise
// bestCardOf ranks them all, as every record's refresh did before: a
// save of a domain listing a popular endpoint read all of its listings
// (8,000 domains listing one: 46 s to save them).
const endpointRecordQuery = `SELECT r.url, r.type, r.templated, r.first_seen, r.last_seen,
	c.key, c.source_url, c.inline, c.sha256, c.name, c.title, c.version, c.description, c.website_url, c.grade,
	c.findings, COALESCE(p.outcome, ''), COALESCE(p.probed_at, ''), COALESCE(p.transport, ''),
	COALESCE(p.protocol, ''), COALESCE(p.server_name, ''), COALESCE(p.server_version, ''), p.tool_count,
	COALESCE(p.result, ''), COALESCE(d.decision, ''), COALESCE(d.reason, ''),
	EXISTS (SELECT 1 FROM feed_servers s WHERE s.kind = 0 AND s.key = r.url_norm),
	EXISTS (SELECT 1 FROM feed_servers s WHERE s.card_key = c.key AND s.removed_at IS NULL)
	FROM remotes r JOIN cards c ON c.key = COALESCE(CAST(? AS TEXT), (SELECT l.card_key FROM listings l
	  WHERE l.remote_norm = r.url_norm AND l.active = TRUE ORDER BY l.card_key LIMIT 1))
	LEFT JOIN probes p ON p.id = (SELECT MAX(id) FROM probes WHERE remote_norm = r.url_norm)
	LEFT JOIN probe_decisions d ON d.id = (SELECT MAX(id) FROM probe_decisions WHERE remote_norm = r.url_norm)
	WHERE r.url_norm = ?`

var bestCardQuery = bestCardOf("?")

// computed is what compute learns besides the record.
type computed struct {
	live     bool // something lists the record
	recorded bool // feed_servers has a row for it (live or a tombstone)
	cardLive bool // its describing card has a live record in feed_servers
}

// compute builds the record as the crawl's tables say it is now; when
// nothing lists it, c.live is false and the rest is unset.
func (f *feedTx) compute(k feedKey) (r feedRow, c computed, err error) {
	m := &r.meaning
	var findings, cardJSON sql.NullString
	if k.kind == kindEndpoint {
		// The endpoint, its best card, its latest probe and decision: one
		// query in the usual case, as this runs for every record a crawl
		// touches.
		var result string
		read := func(card sql.NullString) error {
			return f.tx.queryRow(endpointRecordQuery, card, k.key).Scan(&m.endpoint, &m.transport, &m.templated,
				&r.firstSeen, &r.lastSeen, &m.cardKey, &m.cardURL, &m.cardInline, &m.cardSHA, &m.name, &m.title, &m.version,
				&m.description, &m.website, &m.grade, &findings, &m.probeOutcome, &r.probedAt, &m.probeTransport,
				&m.probeProtocol, &m.probeServerName, &m.probeServerVersion, &m.probeTools, &result, &r.decision,
				&r.decisionReason, &c.recorded, &c.cardLive)
		}
		err = read(sql.NullString{})
		if err == nil && gradeRank[m.grade] > 0 {
			var best string
			if err = f.tx.queryRow(bestCardQuery, k.key).Scan(&best); err == nil && best != m.cardKey {
				err = read(sql.NullString{String: best, Valid: true})
			}
		}
		m.probePartial = partial(result)
	} else {
		err = f.tx.queryRow(`SELECT c.key, c.source_url, c.inline, c.sha256, c.name, c.title, c.version,
			c.description, c.website_url, c.grade, c.findings, c.first_seen, c.last_seen,
			EXISTS (SELECT 1 FROM feed_servers s WHERE s.kind = 1 AND s.key = c.key),
			EXISTS (SELECT 1 FROM feed_servers s WHERE s.card_key = c.key AND s.removed_at IS NULL)
			FROM cards c WHERE c.key = ? AND EXISTS (SELECT 1 FROM listings l
			  WHERE l.card_key = c.key AND l.remote_norm = '' AND l.active = TRUE)`, k.key).Scan(&m.cardKey, &m.cardURL,
			&m.cardInline, &m.cardSHA, &m.name, &m.title, &m.version, &m.description, &m.website, &m.grade, &findings,
			&r.firstSeen, &r.lastSeen, &c.recorded, &c.cardLive)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return r, computed{}, nil
	}
	if err != nil {
		return r, computed{}, fmt.Errorf("feed record %s: %w", k.key, err)
	}
	c.live = true
	m.findings = findingCodesJSON(findings.String)
	inline := !CardByURL(m.cardURL, m.cardInline)
	partsKey := cardPartsKey(m.cardKey, m.cardSHA, inline)
	parts, ok := f.parts[partsKey]
	if !ok {
		if err := f.tx.queryRow(`SELECT json FROM cards WHERE key = ?`, m.cardKey).Scan(&cardJSON); err != nil {
			return r, computed{}, fmt.Errorf("card %s: %w", m.cardKey, err)
		}
		parts = decodeCardParts(cardJSON.String, inline)
		f.parts[partsKey] = parts
	}
	m.repo, m.icons, m.remote, m.catalogCard = parts.repo, parts.icons, parts.remoteJSON(m.endpoint), parts.catalogCard
	return r, c, nil
}

// stored reads the record as feed_servers holds it.
func (f *feedTx) stored(k feedKey) (r feedRow, live, exists bool, err error) {
	m := &r.meaning
	var removed sql.NullString
	err = f.tx.queryRow(`SELECT endpoint, transport, templated, card_key, card_url, card_inline, card_sha256,
		name, title, version, description, website_url, repository, grade, findings, first_seen, last_seen, probe_outcome,
		probed_at, probe_transport, probe_protocol, probe_server_name, probe_server_version, probe_tool_count,
		probe_partial, decision, decision_reason, removed_at, remote, icons, catalog_card FROM feed_servers
		WHERE kind = ? AND key = ?`,
		k.kind, k.key).
		Scan(&m.endpoint, &m.transport, &m.templated, &m.cardKey, &m.cardURL, &m.cardInline, &m.cardSHA, &m.name, &m.title,
			&m.version, &m.description, &m.website, &m.repo, &m.grade, &m.findings, &r.firstSeen, &r.lastSeen,
			&m.probeOutcome, &r.probedAt, &m.probeTransport, &m.probeProtocol, &m.probeServerName, &m.probeServerVersion,
			&m.probeTools, &m.probePartial, &r.decision, &r.decisionReason, &removed, &m.remote, &m.icons,
			&m.catalogCard)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, false, nil
	}
	if err != nil {
		return r, false, false, fmt.Errorf("stored feed record %s: %w", k.key, err)
	}
	return r, !removed.Valid, true, nil
}

// findingCodesJSON reduces stored findings to their distinct codes,
// sorted, as a JSON array.
func findingCodesJSON(raw string) string {
	var fs []struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal([]byte(raw), &fs) // written by SaveDomain; a bad value has no codes
	codes := make([]string, 0, len(fs))
	for _, f := range fs {
		codes = append(codes, f.Code)
	}
	slices.Sort(codes)
	b, _ := json.Marshal(slices.Compact(codes))
	return string(b)
}

// cardParts is what a card gives the records it describes: its repository
// object and icons as JSON ("" when none), its remotes, from which each
// endpoint's record takes its own, and, for a card the AI Catalog carries
// inline, the card as it carries it (catalogCardJSON).
type cardParts struct {
	repo, icons string
	remotes     []servercard.Remote
	catalogCard string
}

// cardPartsKey names a card's parts in feedTx.parts: its key and hash,
// and whether the AI Catalog carries it inline (which adds a part).
func cardPartsKey(key, sha string, inline bool) string {
	return key + "\x00" + sha + "\x00" + strconv.FormatBool(inline)
}

// decodeCardParts decodes a card's parts into the card's own types, which
// keeps exactly what the feed publishes; with inline, also the card as the
// AI Catalog carries it, from the same decode.
func decodeCardParts(card string, inline bool) cardParts {
	// As the feed always read cards: what decodes is kept.
	if inline {
		var c servercard.Card
		_ = json.Unmarshal([]byte(card), &c)
		// Republish drops links from the arrays in place: the parts get
		// their own.
		p := newCardParts(c.Repository, slices.Clone(c.Icons), slices.Clone(c.Remotes))
		p.catalogCard = servercard.CompactJSON(servercard.Republish(&c))
		return p
	}
	var c struct {
		Repository *servercard.Repository `json:"repository"`
		Icons      []servercard.Icon      `json:"icons"`
		Remotes    []servercard.Remote    `json:"remotes"`
	}
	_ = json.Unmarshal([]byte(card), &c)
	return newCardParts(c.Repository, c.Icons, c.Remotes)
}

// newCardParts is a card's parts from its decoded fields; icons is
// filtered in place.
func newCardParts(repo *servercard.Repository, icons []servercard.Icon, remotes []servercard.Remote) cardParts {
	p := cardParts{remotes: remotes, icons: feedIcons(icons)}
	if repo != nil {
		b, _ := json.Marshal(repo)
		p.repo = string(b)
	}
	return p
}

// CardByURL reports whether the AI Catalog points at a record's card where
// it was found (it has a URL of its own and did not come inline), rather
// than carrying it inline: a record of a card it carries keeps the card as
// it carries it (FeedServer.CatalogCard).
func CardByURL(cardURL string, inline bool) bool { return cardURL != "" && !inline }

// catalogCardJSON is a stored card as the AI Catalog carries it inline:
// as the feed republishes it, encoded as its writers encode JSON.
func catalogCardJSON(card string) string { return servercard.CompactJSON(servercard.Republished(card)) }

// remoteJSON is the card's first remote whose URL is endpoint, as the feed
// republishes it (feedRemote); "" when none.
func (p cardParts) remoteJSON(endpoint string) string {
	if endpoint == "" {
		return ""
	}
	for _, rm := range p.remotes {
		if rm.URL == endpoint {
			return feedRemote(rm)
		}
	}
	return ""
}

// The feed republishes a card's icons and remotes as stored (migration
// 0013): only those whose links it may republish (servercard.IsHTTPSURL for
// an icon, IsWebRemoteURL for a remote, as internal/feed's links.go says),
// encoded as its writers encode JSON (compact, HTML left unescaped), so an
// export copies them without decoding or checking them again.

// feedIcons are the icons the feed republishes, as JSON; "" when none.
func feedIcons(icons []servercard.Icon) string {
	icons = slices.DeleteFunc(icons, func(ic servercard.Icon) bool { return !servercard.IsHTTPSURL(ic.Src) })
	if len(icons) == 0 {
		return ""
	}
	return servercard.CompactJSON(icons)
}

// feedRemote is a remote as the feed republishes it, as JSON; "" when its
// URL may not be republished.
func feedRemote(rm servercard.Remote) string {
	if !servercard.IsWebRemoteURL(rm.URL) {
		return ""
	}
	return servercard.CompactJSON(rm)
}

func partial(result string) bool {
	var flags struct {
		Partial bool `json:"partial"`
	}
	_ = json.Unmarshal([]byte(result), &flags) // a record without the field is not partial
	return flags.Partial
}

// afterMigration runs Go steps a migration needs, in its transaction.
// They run once every migration's SQL has been applied, so each is
// written against the latest schema (buildFeed writes columns added after
// 0005).
var afterMigration = map[string]func(ctx context.Context, db *DB, tx *sql.Tx, now string) error{
	"0005_feed_servers":      buildFeed,
	"0010_feed_card_parts":   fillCardParts,
	"0012_probe_meaning":     fillProbeMeaning,
	"0013_feed_safe_parts":   safeCardParts,
	"0014_feed_catalog_card": fillCatalogCards,
}

// feedPage is how many keys one backfill query reads.
const feedPage = 500

// buildFeed fills the read model of a database that had none, inside the
// migration's transaction, and gives the database its identity.
func buildFeed(ctx context.Context, db *DB, tx *sql.Tx, now string) error {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return fmt.Errorf("database identity: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO feed_state (id, db_id, seq) VALUES (1, ?, 0)`, hex.EncodeToString(id[:])); err != nil {
		return fmt.Errorf("feed state: %w", err)
	}
	f := newFeedTx(&txw{ctx: ctx, tx: tx, stmts: &db.stmts}, now)
	for _, kind := range []int{kindEndpoint, kindCard} {
		query := `SELECT DISTINCT remote_norm FROM listings WHERE active = TRUE AND remote_norm <> '' AND remote_norm > ?
			ORDER BY remote_norm LIMIT ?`
		if kind == kindCard {
			query = `SELECT DISTINCT card_key FROM listings WHERE active = TRUE AND remote_norm = '' AND card_key > ?
				ORDER BY card_key LIMIT ?`
		}
		err := eachPage(feedPage, func(after string) ([]string, error) {
			return collect(ctx, tx, scanString, query, after, feedPage)
		}, func(k string) string { return k }, func(k string) error {
			if err := f.refresh(feedKey{kind, k}, false, RemovedNotListed); err != nil {
				return err
			}
			if len(f.cards) >= feedPage {
				clear(f.parts)
				return f.finish()
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("build the feed: %w", err)
		}
		if err := f.finish(); err != nil {
			return err
		}
		clear(f.parts)
	}
	return nil
}

// eachFeedRecord walks every record of the read model in key order, a
// page at a time, for a migration's backfill step: cols are read after
// kind and key, into what dests gives for a row's values.
func eachFeedRecord[T any](ctx context.Context, tx *sql.Tx, cols string, dests func(*T) []any, fn func(feedKey, T) error) error {
	type rec struct {
		k feedKey
		v T
	}
	return eachPage(feedPage, func(after feedKey) ([]rec, error) {
		return collect(ctx, tx, func(rows *sql.Rows) (rec, error) {
			var r rec
			err := rows.Scan(append([]any{&r.k.kind, &r.k.key}, dests(&r.v)...)...)
			return r, err
		}, `SELECT kind, key, `+cols+` FROM feed_servers WHERE (kind, key) > (?, ?) ORDER BY kind, key LIMIT ?`,
			after.kind, after.key, feedPage)
	}, func(r rec) feedKey { return r.k }, func(r rec) error { return fn(r.k, r.v) })
}

// fillCardParts gives every record of a database built before 0010 what
// it takes from its describing card (remote, icons), a page at a time;
// nothing a mirror sees changes, so neither seq nor updated_at moves.
func fillCardParts(ctx context.Context, _ *DB, tx *sql.Tx, _ string) error {
	type rec struct{ endpoint, card, remote, icons string }
	parts := map[string]cardParts{} // a page's cards at most
	err := eachFeedRecord(ctx, tx, "endpoint, card_key, remote, icons", func(r *rec) []any {
		return []any{&r.endpoint, &r.card, &r.remote, &r.icons}
	}, func(k feedKey, r rec) error {
		p, ok := parts[r.card]
		if !ok {
			card, err := storedCard(ctx, tx, r.card)
			if err != nil {
				return err
			}
			if len(parts) >= feedPage {
				clear(parts)
			}
			p = decodeCardParts(card, false) // 0014 fills the catalog's cards
			parts[r.card] = p
		}
		remote := p.remoteJSON(r.endpoint)
		if remote == r.remote && p.icons == r.icons {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE feed_servers SET remote = ?, icons = ? WHERE kind = ? AND key = ?`,
			remote, p.icons, k.kind, k.key)
		return err
	})
	if err != nil {
		return fmt.Errorf("fill the feed's card parts: %w", err)
	}
	return nil
}

// safeCardParts rewrites the remote and icons of every record written
// before 0013 (as the card decoded, links unchecked, HTML escaped) as the
// feed republishes them, from what the record holds; nothing a mirror sees
// changes, so neither seq nor updated_at moves.
func safeCardParts(ctx context.Context, _ *DB, tx *sql.Tx, _ string) error {
	type rec struct{ remote, icons string }
	err := eachFeedRecord(ctx, tx, "remote, icons", func(r *rec) []any {
		return []any{&r.remote, &r.icons}
	}, func(k feedKey, r rec) error {
		remote, icons := "", ""
		if r.remote != "" {
			var rm servercard.Remote
			if json.Unmarshal([]byte(r.remote), &rm) == nil {
				remote = feedRemote(rm)
			}
		}
		if r.icons != "" {
			var ics []servercard.Icon
			_ = json.Unmarshal([]byte(r.icons), &ics) // what decodes is kept, as the feed read it
			icons = feedIcons(ics)
		}
		if remote == r.remote && icons == r.icons {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE feed_servers SET remote = ?, icons = ? WHERE kind = ? AND key = ?`,
			remote, icons, k.kind, k.key)
		return err
	})
	if err != nil {
		return fmt.Errorf("make the feed's card parts safe: %w", err)
	}
	return nil
}

// fillCatalogCards gives every record written before 0014 whose card the
// AI Catalog carries inline the card as it carries it, a page at a time;
// nothing a mirror sees changes, so neither seq nor updated_at moves.
func fillCatalogCards(ctx context.Context, _ *DB, tx *sql.Tx, _ string) error {
	type rec struct {
		card, cardURL, catalogCard string
		inline                     bool
	}
	cards := map[string]string{} // a page's cards at most
	err := eachFeedRecord(ctx, tx, "card_key, card_url, card_inline, catalog_card", func(r *rec) []any {
		return []any{&r.card, &r.cardURL, &r.inline, &r.catalogCard}
	}, func(k feedKey, r rec) error {
		want := ""
		if !CardByURL(r.cardURL, r.inline) {
			var ok bool
			if want, ok = cards[r.card]; !ok {
				card, err := storedCard(ctx, tx, r.card)
				if err != nil {
					return err
				}
				if len(cards) >= feedPage {
					clear(cards)
				}
				want = catalogCardJSON(card)
				cards[r.card] = want
			}
		}
		if want == r.catalogCard {
			return nil
		}
		_, err := tx.ExecContext(ctx, `UPDATE feed_servers SET catalog_card = ? WHERE kind = ? AND key = ?`,
			want, k.kind, k.key)
		return err
	})
	if err != nil {
		return fmt.Errorf("fill the feed's catalog cards: %w", err)
	}
	return nil
}

// storedCard is a card as parsed, "" when there is none of that key: the
// migrations' steps read records' cards as the feed always has.
func storedCard(ctx context.Context, tx *sql.Tx, key string) (string, error) {
	var card sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT json FROM cards WHERE key = ?`, key).Scan(&card)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("card %s: %w", key, err)
	}
	return card.String, nil
}

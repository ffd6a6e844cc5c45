package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// Server is one discovered server: a remote endpoint (merged on its
// normalised URL across every card and domain that declares it), or a card
// that declares no remote at all (Endpoint empty).
type Server struct {
	EndpointNorm string
	Endpoint     string
	Transport    string
	Templated    bool
	RemoteJSON   string
	FirstSeen    string
	LastSeen     string

	Card     CardRow
	Listings []Listing
	Probe    *ProbeRow // latest probe, nil when never probed
	// Decision is the latest decision to probe the endpoint or not, and why.
	Decision *ProbeDecision
	// Category is the server's stored category, nil before one is computed.
	Category *CategoryRow
}

// CardRow is a stored card, as the server list needs it.
type CardRow struct {
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
	JSON        string
	FirstSeen   string
	LastSeen    string
	ChangedAt   string
}

// Listing is one active link of the listing chain.
type Listing struct {
	Domain     string
	CatalogURL string
	Identifier string
	CardKey    string
	// Codes: what the listing catalog found of this entry and of its own
	// signature (ListingRecord.Codes, read back); nil for none.
	Codes []string
}

const cardColumns = `c.key, c.source_url, c.inline, c.sha256, c.schema, c.name, c.title, c.version, c.description,
	c.website_url, c.grade, c.findings, c.json, c.first_seen, c.last_seen, c.changed_at`

func scanCard(dst *CardRow) []any {
	return []any{&dst.Key, &dst.SourceURL, &dst.Inline, &dst.SHA256, &dst.Schema, &dst.Name, &dst.Title, &dst.Version,
		&dst.Description, &dst.WebsiteURL, &dst.Grade, findingsScan{&dst.Findings}, &dst.JSON, &dst.FirstSeen, &dst.LastSeen, &dst.ChangedAt}
}

// Servers returns every server some domain currently lists, endpoints first
// (in normalised-URL order), then cards without remotes. When several cards
// declare one endpoint, the server shows the best-graded of them (ties go to
// the smallest card key), so the answer does not depend on crawl order.
func (db *DB) Servers(ctx context.Context) ([]Server, error) {
	listings, err := db.activeListings(ctx)
	if err != nil {
		return nil, err
	}
	cards, err := db.listedCards(ctx)
	if err != nil {
		return nil, err
	}
	probes, err := db.latestProbes(ctx)
	if err != nil {
		return nil, err
	}
	decisions, err := db.latestDecisions(ctx)
	if err != nil {
		return nil, err
	}
	byEndpoint, err := db.Categories(ctx, KindEndpoint)
	if err != nil {
		return nil, err
	}
	cardCategories, err := db.Categories(ctx, KindCard)
	if err != nil {
		return nil, err
	}

	var out []Server
	rows, err := db.sql.QueryContext(ctx, `SELECT r.url_norm, r.url, r.type, r.templated, r.json, r.first_seen, r.last_seen
		FROM remotes r
		WHERE EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = r.url_norm AND l.active = 1)
		ORDER BY r.url_norm`)
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s Server
		if err := rows.Scan(&s.EndpointNorm, &s.Endpoint, &s.Transport, &s.Templated, &s.RemoteJSON, &s.FirstSeen, &s.LastSeen); err != nil {
			return nil, fmt.Errorf("list servers: %w", err)
		}
		s.Listings = listings[s.EndpointNorm]
		s.Card = bestCard(s.Listings, cards)
		if p, ok := probes[s.EndpointNorm]; ok {
			s.Probe = &p
		}
		if d, ok := decisions[s.EndpointNorm]; ok {
			s.Decision = &d
		}
		if c, ok := byEndpoint[s.EndpointNorm]; ok {
			s.Category = &c
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}

	byCard := map[string][]Listing{}
	for _, l := range listings[""] {
		byCard[l.CardKey] = append(byCard[l.CardKey], l)
	}
	keys := make([]string, 0, len(byCard))
	for k := range byCard {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := cards[k]
		srv := Server{Card: c, Listings: byCard[k], FirstSeen: c.FirstSeen, LastSeen: c.LastSeen}
		if cat, ok := cardCategories[k]; ok {
			srv.Category = &cat
		}
		out = append(out, srv)
	}
	return out, nil
}

// gradeRank orders grades, best first; a grade it does not name ranks
// with conformant.
var gradeRank = map[string]int{"conformant": 0, "near_conformant": 1, "non_conformant": 2}

// gradeRankSQL is gradeRank as an SQL expression over a grade column.
func gradeRankSQL(col string) string {
	grades := slices.Sorted(maps.Keys(gradeRank))
	var b strings.Builder
	b.WriteString("CASE " + col)
	for _, g := range grades {
		if r := gradeRank[g]; r > 0 {
			fmt.Fprintf(&b, " WHEN '%s' THEN %d", g, r)
		}
	}
	b.WriteString(" ELSE 0 END")
	return b.String()
}

// bestCardOf selects the card that describes the endpoint norm (a column
// or a placeholder): of its active listings' cards, the best by gradeRank,
// then the smallest key (Servers' rule).
func bestCardOf(norm string) string {
	return `SELECT l.card_key FROM listings l JOIN cards c2 ON c2.key = l.card_key
	WHERE l.remote_norm = ` + norm + ` AND l.active = TRUE ORDER BY ` + gradeRankSQL("c2.grade") + `, c2.key LIMIT 1`
}

func bestCard(ls []Listing, cards map[string]CardRow) CardRow {
	var best CardRow
	found := false
	for _, l := range ls {
		c, ok := cards[l.CardKey]
		if !ok {
			continue
		}
		if !found || gradeRank[c.Grade] < gradeRank[best.Grade] ||
			(gradeRank[c.Grade] == gradeRank[best.Grade] && c.Key < best.Key) {
			best, found = c, true
		}
	}
	return best
}

// listedCards loads every card some active listing reaches.
func (db *DB) listedCards(ctx context.Context) (map[string]CardRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+cardColumns+` FROM cards c
		WHERE EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = 1)`)
	if err != nil {
		return nil, fmt.Errorf("list cards: %w", err)
	}
	defer rows.Close()
	out := map[string]CardRow{}
	for rows.Next() {
		var c CardRow
		if err := rows.Scan(scanCard(&c)...); err != nil {
			return nil, fmt.Errorf("list cards: %w", err)
		}
		out[c.Key] = c
	}
	return out, rows.Err()
}

// activeListings maps remote_norm to the active listings that reach it.
func (db *DB) activeListings(ctx context.Context) (map[string][]Listing, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT remote_norm, domain, catalog_url, identifier, card_key, entry_codes
		FROM listings WHERE active = 1 ORDER BY remote_norm, domain, catalog_url, identifier`)
	if err != nil {
		return nil, fmt.Errorf("list listings: %w", err)
	}
	defer rows.Close()
	out := map[string][]Listing{}
	for rows.Next() {
		var norm, codes string
		var l Listing
		if err := rows.Scan(&norm, &l.Domain, &l.CatalogURL, &l.Identifier, &l.CardKey, &codes); err != nil {
			return nil, fmt.Errorf("list listings: %w", err)
		}
		l.Codes = listingCodes(codes)
		out[norm] = append(out[norm], l)
	}
	return out, rows.Err()
}

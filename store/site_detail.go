package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// Bounds on what one server's page reads: an endpoint hundreds of domains
// list, or one probed every hour for a year, still makes a page of a few
// hundred rows.
const (
	siteMaxCards    = 50
	siteMaxListings = 200
	siteMaxRegistry = 50
	siteMaxProbes   = 50
	siteMaxChain    = 8 // catalogs nest at most 4 deep; a few spare for a cycle's sake
)

// SiteDetail is everything a server's page shows.
type SiteDetail struct {
	SiteRow
	Cards     []SiteCard    // the listed cards declaring it, best first
	Listings  []SiteListing // the listing chains, by domain
	Registry  []RegistryEntry
	Reconcile []ReconcileRow // results about its cards and its Registry entries
	Namespace *NamespaceRow
	Category  *CategoryRow
	ToolNames []string // of the latest ok probe
	ToolCount int
	Probes    []ProbeRow // newest first
	Decision  *ProbeDecision
	// More* are true when a list was cut at its bound.
	MoreCards, MoreListings, MoreProbes bool
}

// SiteCard is a card and whether its bytes are stored.
type SiteCard struct {
	CardRow
	HasDocument bool
}

// SiteListing is one listing and the catalogs from the domain's own down
// to the one that listed the card.
type SiteListing struct {
	Listing
	// Entry is the index of the entry that listed the card in the chain's
	// last catalog; -1 when not known (stored before migration 0026).
	Entry int
	Chain []SiteCatalog
}

// SiteCatalog is one catalog of a listing chain.
type SiteCatalog struct {
	URL         string
	BaseURL     string // what its relative URLs resolve against
	SHA256      string
	Depth       int
	HasDocument bool
	// Findings are what the crawl found in it, its entries' digests and
	// signatures among them (paths into its document); read for the
	// chain's last catalog only, the one that lists the card.
	Findings finding.List
}

// SiteServer returns one server's page, ok=false when no such server is
// listed now.
func (db *DB) SiteServer(ctx context.Context, key SiteKey) (d SiteDetail, ok bool, err error) {
	var seg []siteSegment
	switch key.Kind {
	case KindCard:
		seg = []siteSegment{siteCards}
	case KindEndpoint:
		seg = siteEndpoints
	default:
		return d, false, nil
	}
	rows, err := db.sitePage(ctx, noSiteFilter, nil, seg, siteSpan{in: []string{key.Subject}}, 1)
	if err != nil {
		return d, false, fmt.Errorf("server %s: %w", key.Subject, err)
	}
	if len(rows) == 0 {
		return d, false, nil
	}
	d.SiteRow = rows[0]
	steps := []func(context.Context, *SiteDetail) error{db.siteCards, db.siteListings, db.siteRegistry,
		db.siteReconcile, db.siteNamespace, db.siteCategory, db.siteProbes}
	for _, step := range steps {
		if err := step(ctx, &d); err != nil {
			return d, false, fmt.Errorf("server %s: %w", key.Subject, err)
		}
	}
	return d, true, nil
}

// listingCond selects the active listings of d's server (alias l).
func listingCond(d *SiteDetail) (string, []any) {
	if d.Kind == KindCard {
		return `l.active = 1 AND l.card_key = ? AND l.remote_norm = ''`, []any{d.Subject}
	}
	return `l.active = 1 AND l.remote_norm = ?`, []any{d.Subject}
}

func (db *DB) siteCards(ctx context.Context, d *SiteDetail) error {
	cond, args := listingCond(d)
	cards, err := collect(ctx, db.sql, func(rows *sql.Rows) (SiteCard, error) {
		var c SiteCard
		err := rows.Scan(append(scanCard(&c.CardRow), &c.HasDocument)...)
		return c, err
	}, `SELECT `+cardColumns+`, CASE WHEN EXISTS (SELECT 1 FROM documents doc WHERE doc.sha256 = c.sha256) THEN 1 ELSE 0 END
		FROM cards c WHERE c.key IN (SELECT l.card_key FROM listings l WHERE `+cond+`)
		ORDER BY `+gradeRankSQL("c.grade")+`, c.key LIMIT ?`,
		append(args, siteMaxCards+1)...)
	if err != nil {
		return fmt.Errorf("cards: %w", err)
	}
	d.Cards, d.MoreCards = cut(cards, siteMaxCards)
	return nil
}

func (db *DB) siteListings(ctx context.Context, d *SiteDetail) error {
	cond, args := listingCond(d)
	ls, err := collect(ctx, db.sql, func(rows *sql.Rows) (SiteListing, error) {
		var l SiteListing
		var entry sql.NullInt64
		err := rows.Scan(&l.Domain, &l.CatalogURL, &l.Identifier, &l.CardKey, &entry)
		l.Entry = -1
		if entry.Valid {
			l.Entry = int(entry.Int64)
		}
		return l, err
	}, `SELECT l.domain, l.catalog_url, l.identifier, l.card_key, l.entry_index FROM listings l WHERE `+cond+`
		ORDER BY l.domain, l.catalog_url, l.identifier, l.card_key LIMIT ?`, append(args, siteMaxListings+1)...)
	if err != nil {
		return fmt.Errorf("listings: %w", err)
	}
	d.Listings, d.MoreListings = cut(ls, siteMaxListings)
	for i := range d.Listings {
		chain, err := db.catalogChain(ctx, d.Listings[i].CatalogURL)
		if err != nil {
			return err
		}
		d.Listings[i].Chain = chain
	}
	return nil
}

// catalogChain walks from a catalog up through its parents, and returns
// them root first.
func (db *DB) catalogChain(ctx context.Context, url string) ([]SiteCatalog, error) {
	var chain []SiteCatalog
	seen := map[string]bool{}
	for url != "" && !seen[url] && len(chain) < siteMaxChain {
		seen[url] = true
		var c SiteCatalog
		var parent, findings string
		err := db.sql.QueryRowContext(ctx, `SELECT url, base_url, sha256, depth, parent_url, findings,
			CASE WHEN EXISTS (SELECT 1 FROM documents doc WHERE doc.sha256 = catalogs.sha256) THEN 1 ELSE 0 END
			FROM catalogs WHERE url = ?`, url).Scan(&c.URL, &c.BaseURL, &c.SHA256, &c.Depth, &parent, &findings, &c.HasDocument)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", url, err)
		}
		if len(chain) == 0 {
			// Only the listing's own catalog's are shown; the crawl wrote
			// them, and unreadable ones show as none.
			_ = json.Unmarshal([]byte(findings), &c.Findings)
		}
		chain = append(chain, c)
		url = parent
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

func (db *DB) siteRegistry(ctx context.Context, d *SiteDetail) error {
	if d.Kind != KindEndpoint {
		return nil
	}
	entries, err := collect(ctx, db.sql, scanRegistryEntry, `SELECT `+registryColumns+` FROM registry_entries e
		WHERE EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = ? AND rr.source = e.source AND rr.name = e.name
		              AND rr.version = e.version)
		ORDER BY source, name, version LIMIT ?`, d.Subject, siteMaxRegistry)
	if err != nil {
		return fmt.Errorf("registry entries: %w", err)
	}
	d.Registry = entries
	return nil
}

// siteReconcile reads the reconciliation results about the server's cards
// and about the Registry entries declaring it.
func (db *DB) siteReconcile(ctx context.Context, d *SiteDetail) error {
	var conds []string
	var args []any
	for _, c := range d.Cards {
		conds = append(conds, "card_key = ?")
		args = append(args, c.Key)
	}
	for _, e := range d.Registry {
		conds = append(conds, "(source = ? AND name = ? AND version = ?)")
		args = append(args, e.Source, e.Name, e.Version)
	}
	if len(conds) == 0 {
		return nil
	}
	rows, err := collect(ctx, db.sql, func(rows *sql.Rows) (ReconcileRow, error) {
		var r ReconcileRow
		err := rows.Scan(&r.Kind, &r.CardKey, &r.CardName, &r.Source, &r.Name, &r.Version, &r.Status, &r.Basis, &r.Detail,
			&r.Diffs, &r.ComputedAt)
		return r, err
	}, `SELECT kind, card_key, card_name, source, name, version, status, basis, detail, diffs, computed_at
		FROM reconcile_results WHERE `+strings.Join(conds, " OR ")+` ORDER BY id LIMIT ?`, append(args, siteMaxRegistry)...)
	if err != nil {
		return fmt.Errorf("reconciliation: %w", err)
	}
	d.Reconcile = rows
	return nil
}

func (db *DB) siteNamespace(ctx context.Context, d *SiteDetail) error {
	ns, _, found := strings.Cut(d.Name, "/")
	if !found || ns == "" {
		return nil
	}
	row, ok, err := db.Namespace(ctx, ns)
	if err != nil {
		return err
	}
	if ok {
		d.Namespace = &row
	}
	return nil
}

func (db *DB) siteCategory(ctx context.Context, d *SiteDetail) error {
	kind, registry, subject := d.Kind, "", d.Subject
	if !d.InCards && len(d.Registry) > 0 {
		// An endpoint only the Registry declares is filed under its entry.
		kind, registry, subject = KindRegistry, d.Registry[0].Source, d.Registry[0].Name
	}
	rows, err := collect(ctx, db.sql, scanCategory, `SELECT kind, registry, subject, category, source, reason, evidence,
		inputs, computed_at FROM server_categories WHERE kind = ? AND registry = ? AND subject = ?`, kind, registry, subject)
	if err != nil {
		return fmt.Errorf("category: %w", err)
	}
	if len(rows) > 0 {
		d.Category = &rows[0]
	}
	return nil
}

func (db *DB) siteProbes(ctx context.Context, d *SiteDetail) error {
	if d.Kind != KindEndpoint {
		return nil
	}
	probes, err := collect(ctx, db.sql, scanProbeRow, `SELECT remote_norm, url, probed_at, outcome, transport, protocol, server_name, server_version, tool_count,
		card_sha256, result FROM probes WHERE remote_norm = ? ORDER BY id DESC LIMIT ?`, d.Subject, siteMaxProbes+1)
	if err != nil {
		return fmt.Errorf("probes: %w", err)
	}
	d.Probes, d.MoreProbes = cut(probes, siteMaxProbes)

	var names string
	err = db.sql.QueryRowContext(ctx, `SELECT tool_names, tool_count FROM endpoint_tools WHERE remote_norm = ?`,
		d.Subject).Scan(&names, &d.ToolCount)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("tools: %w", err)
	default:
		_ = json.Unmarshal([]byte(names), &d.ToolNames) // written by SaveEndpointTools
	}

	var dec ProbeDecision
	var run sql.NullInt64
	err = db.sql.QueryRowContext(ctx, `SELECT run_id, remote_norm, url, decision, reason, declared_by FROM probe_decisions
		WHERE remote_norm = ? ORDER BY id DESC LIMIT 1`, d.Subject).Scan(&run, &dec.RemoteNorm, &dec.URL, &dec.Decision,
		&dec.Reason, &dec.DeclaredBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("probe decision: %w", err)
	default:
		dec.RunID = run.Int64
		d.Decision = &dec
	}
	return nil
}

// scanProbeRow scans the columns remote_norm, url, probed_at, outcome,
// transport, protocol, server_name, server_version, tool_count,
// card_sha256, result of a probe.
func scanProbeRow(rows *sql.Rows) (ProbeRow, error) {
	var p ProbeRow
	var tools sql.NullInt64
	err := rows.Scan(&p.RemoteNorm, &p.URL, &p.ProbedAt, &p.Outcome, &p.Transport, &p.Protocol, &p.ServerName,
		&p.ServerVersion, &tools, &p.CardSHA256, &p.Result)
	if tools.Valid {
		n := int(tools.Int64)
		p.ToolCount = &n
	}
	p.Partial = partialResult(p.Result)
	return p, err
}

// SiteDocument returns up to max bytes of a stored body, its size and
// content type; ok=false when no body has that hash.
func (db *DB) SiteDocument(ctx context.Context, sha256 string, max int) (body []byte, size int64, contentType string, ok bool, err error) {
	var ct sql.NullString
	err = db.sql.QueryRowContext(ctx, `SELECT substr(body, 1, ?), size, content_type FROM documents WHERE sha256 = ?`,
		max, sha256).Scan(&body, &size, &ct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, "", false, nil
	}
	if err != nil {
		return nil, 0, "", false, fmt.Errorf("document %s: %w", sha256, err)
	}
	return body, size, ct.String, true, nil
}

// cut returns s cut to n elements, and whether anything was cut.
func cut[T any](s []T, n int) ([]T, bool) {
	if len(s) > n {
		return s[:n], true
	}
	return s, false
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// CatalogRow is a stored catalog as `cardcrawl catalogs` shows it: where it
// sits, what it holds, and everything found in it (the parser's findings
// and the crawl's: bounds, digests, signatures).
type CatalogRow struct {
	URL         string       `json:"url"`
	ParentURL   string       `json:"parentUrl,omitempty"`
	Depth       int          `json:"depth"`
	SpecVersion string       `json:"specVersion"`
	EntryCount  int          `json:"entryCount"`
	SHA256      string       `json:"sha256"`
	Findings    finding.List `json:"findings"`
	JudgedBy    string       `json:"judgedBy"`
	FirstSeen   string       `json:"firstSeen"`
	LastSeen    string       `json:"lastSeen"`
	ChangedAt   string       `json:"changedAt"`
}

// catalogPage is how many catalogs a read of EachCatalog takes.
const catalogPage = 200

// EachCatalog streams the stored catalogs in URL order, or, when domain is
// not empty, the catalogs that domain reaches (with its parent and depth
// in that domain's tree).
func (db *DB) EachCatalog(ctx context.Context, domain string, fn func(CatalogRow) error) error {
	return db.eachCatalog(ctx, domain, catalogPage, fn)
}

func (db *DB) eachCatalog(ctx context.Context, domain string, size int, fn func(CatalogRow) error) error {
	const cols = `c.url, %s, c.spec_version, c.entry_count, c.sha256, c.findings, c.judged_by, c.first_seen, c.last_seen, c.changed_at`
	page := func(after string) ([]CatalogRow, error) {
		q, args := `SELECT `+fmt.Sprintf(cols, `c.parent_url, c.depth`)+` FROM catalogs c WHERE c.url > ? ORDER BY c.url LIMIT ?`,
			[]any{after, size}
		if domain != "" {
			q, args = `SELECT `+fmt.Sprintf(cols, `dc.parent_url, dc.depth`)+` FROM domain_catalogs dc
				JOIN catalogs c ON c.url = dc.catalog_url
				WHERE dc.domain = ? AND dc.catalog_url > ? ORDER BY dc.catalog_url LIMIT ?`, []any{domain, after, size}
		}
		rows, err := collect(ctx, db.sql, func(rows *sql.Rows) (CatalogRow, error) {
			var c CatalogRow
			var findings string
			err := rows.Scan(&c.URL, &c.ParentURL, &c.Depth, &c.SpecVersion, &c.EntryCount, &c.SHA256, &findings, &c.JudgedBy,
				&c.FirstSeen, &c.LastSeen, &c.ChangedAt)
			if err == nil {
				// Written by the crawl from a finding.List; a value that does
				// not read shows no findings rather than stopping the list.
				_ = json.Unmarshal([]byte(findings), &c.Findings)
			}
			if c.Findings == nil {
				c.Findings = finding.List{}
			}
			return c, err
		}, q, args...)
		if err != nil {
			return nil, fmt.Errorf("list catalogs: %w", err)
		}
		return rows, nil
	}
	return eachPage(size, page, func(c CatalogRow) string { return c.URL }, fn)
}

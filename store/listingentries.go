package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Listings stored before migration 0026 do not say which entry of their
// catalog listed the card, and have no codes (migration 0024): a crawl
// names both, but only for the listings it writes again, and a catalog
// answered 304 keeps its listings as they were. Re-judging names them from
// the catalogs' stored documents (revalidate.Listings) through these two.

// EachUnnamedListingCatalog calls fn for every catalog with an active
// listing that names no entry, in URL order, a page at a time: its stored
// body (nil when none is stored, or when the catalog is no longer stored)
// and its findings. It reads the unnamed listings' own index
// (listings_unnamed, migration 0028).
func (db *DB) EachUnnamedListingCatalog(ctx context.Context, fn func(Judged) error) error {
	return eachPage(judgePage, func(after string) ([]Judged, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (Judged, error) {
			var j Judged
			err := rows.Scan(&j.Key, &j.SHA256, &j.BaseURL, &j.Body, findingsScan{&j.Findings}, &j.JudgedBy)
			return j, err
		}, `SELECT u.url, COALESCE(c.sha256, ''), COALESCE(c.base_url, ''), d.body, c.findings, COALESCE(c.judged_by, '')
			FROM (SELECT DISTINCT l.catalog_url AS url FROM listings l
			      WHERE l.entry_index IS NULL AND l.active = TRUE AND l.catalog_url > ? ORDER BY l.catalog_url LIMIT ?) u
			LEFT JOIN catalogs c ON c.url = u.url
			LEFT JOIN documents d ON d.sha256 = c.sha256
			ORDER BY u.url`, after, judgePage)
		if err != nil {
			return nil, fmt.Errorf("listings without their entry: %w", err)
		}
		return page, nil
	}, func(j Judged) string { return j.Key }, fn)
}

// ListingEntries names the entries of the listings catalog Key made
// before listings named theirs.
type ListingEntries struct {
	Key, SHA256 string
	// Entry is the index of the catalog's entry that listed card cardKey
	// under identifier (catalog.ListedEntry), or -1 when none can be told.
	Entry func(identifier, cardKey string) int
	// Codes are the codes (CodesText) a listing of the entry at index
	// carries; index -1 for one whose entry cannot be told.
	Codes func(entry int) string
}

// NameListingEntries gives each active listing of catalog e.Key that names
// no entry the entry e.Entry finds and the codes e.Codes gives, and brings
// the records of those whose codes changed up to date, in one transaction,
// while the stored catalog still has hash e.SHA256 (a crawl that stored
// another since wrote its listings itself). A listing whose entry cannot be
// told gets the catalog's own codes (e.Codes(-1), as a server's page shows
// it) and stays unnamed. It returns how many listings it named.
func (db *DB) NameListingEntries(ctx context.Context, e ListingEntries) (named int, err error) {
	now := db.Now()
	err = db.retryTx(ctx, func() error {
		named = 0
		return db.write(func(tx *txw) error {
			var stored int
			if err := tx.queryRow(`SELECT COUNT(*) FROM catalogs WHERE url = ? AND sha256 = ?`, e.Key, e.SHA256).
				Scan(&stored); err != nil || stored == 0 {
				return err
			}
			var ls []domainListing
			rows, err := tx.query(`SELECT domain, identifier, card_key, remote_norm, entry_codes FROM listings
				WHERE catalog_url = ? AND entry_index IS NULL AND active = TRUE`, e.Key)
			if err != nil {
				return err
			}
			err = scanEach(rows, func() error {
				l := domainListing{ListingRecord: ListingRecord{CatalogURL: e.Key}}
				if err := rows.Scan(&l.domain, &l.Identifier, &l.CardKey, &l.RemoteNorm, &l.Codes); err != nil {
					return err
				}
				ls = append(ls, l)
				return nil
			})
			if err != nil {
				return err
			}
			touched := map[feedKey]bool{}
			for _, l := range ls {
				entry := e.Entry(l.Identifier, l.CardKey)
				codes := e.Codes(entry)
				var index any
				if entry >= 0 {
					index = entry
					named++
				} else if codes == l.Codes {
					continue
				}
				if err := l.describe(tx, index, codes); err != nil {
					return err
				}
				if codes != l.Codes {
					touched[recordOf(l.RemoteNorm, l.CardKey)] = true
				}
			}
			return newFeedTx(tx, now).refreshAll(touched, RemovedNotListed)
		})
	})
	if err != nil {
		return 0, fmt.Errorf("name the entries of %s's listings: %w", e.Key, err)
	}
	return named, nil
}

package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// Judged is a stored document whose findings were made by rules of
// another version than the current one, with what re-judging it needs:
// its body, read from the documents table by hash (nil when the body was
// never stored there on its own, as for an inline card or catalog, which
// is re-judged when its parent is read again), and its findings.
type Judged struct {
	Key      string // card key or catalog URL
	SHA256   string
	BaseURL  string // catalogs: the URL entries resolve against
	Body     []byte
	Findings finding.List
	JudgedBy string
}

// Judgement is a document's new findings (and, for a card, its grade) under
// the rules of version JudgedBy. It applies only while the stored
// document still has hash SHA256: a crawl that stored a newer one since
// has judged that one itself.
type Judgement struct {
	Key      string
	SHA256   string
	Grade    string // cards only
	Findings finding.List
	JudgedBy string
	// EntryCodes, for a catalog, gives the codes (CodesText) that a
	// listing of the entry at an index carries under Findings; nil leaves
	// the listings' codes as they are.
	EntryCodes func(entry int) string
}

// judgePage is how many documents one EachStale* query reads: bodies may be
// up to a few megabytes.
const judgePage = 32

// EachStaleCard calls fn for every stored card judged by rules other than
// version, in key order, a page at a time.
func (db *DB) EachStaleCard(ctx context.Context, version string, fn func(Judged) error) error {
	return db.eachStale(ctx, `SELECT c.key, c.sha256, '', d.body, c.findings, c.judged_by FROM cards c
		LEFT JOIN documents d ON d.sha256 = c.sha256
		WHERE c.judged_by <> ? AND c.key > ? ORDER BY c.key LIMIT ?`, version, fn)
}

// EachStaleCatalog calls fn for every stored catalog judged by rules other
// than version, in URL order, a page at a time.
func (db *DB) EachStaleCatalog(ctx context.Context, version string, fn func(Judged) error) error {
	return db.eachStale(ctx, `SELECT c.url, c.sha256, c.base_url, d.body, c.findings, c.judged_by FROM catalogs c
		LEFT JOIN documents d ON d.sha256 = c.sha256
		WHERE c.judged_by <> ? AND c.url > ? ORDER BY c.url LIMIT ?`, version, fn)
}

func (db *DB) eachStale(ctx context.Context, query, version string, fn func(Judged) error) error {
	return eachPage(judgePage, func(after string) ([]Judged, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (Judged, error) {
			var j Judged
			err := rows.Scan(&j.Key, &j.SHA256, &j.BaseURL, &j.Body, findingsScan{&j.Findings}, &j.JudgedBy)
			return j, err
		}, query, version, after, judgePage)
		if err != nil {
			return nil, fmt.Errorf("documents to re-judge: %w", err)
		}
		return page, nil
	}, func(j Judged) string { return j.Key }, fn)
}

// SaveCardJudgement records a card's new grade and findings, and brings
// the feed's records the card may describe up to date with them, in one
// transaction: a record shows its card's grade and findings, and it is
// the best-graded card that describes an endpoint.
func (db *DB) SaveCardJudgement(ctx context.Context, j Judgement) error {
	return db.saveJudgement(ctx, `UPDATE cards SET grade = ?, findings = ?, judged_by = ? WHERE key = ? AND sha256 = ?`,
		`SELECT COUNT(*) FROM cards WHERE grade = ? AND findings = ? AND key = ? AND sha256 = ?`, j, func(tx *txw, f *feedTx) error {
			ks, err := cardRecords(tx, j.Key)
			if err != nil {
				return err
			}
			touched := map[feedKey]bool{}
			for _, k := range ks {
				touched[k] = false
			}
			return f.refreshAll(touched, RemovedNotListed)
		}, j.Grade)
}

// SaveCatalogJudgement records a catalog's new findings and, with
// j.EntryCodes, the codes of the active listings it made that name their
// entry (those stored before listings named one keep theirs), and brings
// the records of those whose codes changed up to date, in one transaction.
func (db *DB) SaveCatalogJudgement(ctx context.Context, j Judgement) error {
	return db.saveJudgement(ctx, `UPDATE catalogs SET findings = ?, judged_by = ? WHERE url = ? AND sha256 = ?`,
		`SELECT COUNT(*) FROM catalogs WHERE findings = ? AND url = ? AND sha256 = ?`, j,
		func(tx *txw, f *feedTx) error {
			if j.EntryCodes == nil {
				return nil
			}
			touched, err := recodeListings(tx, j)
			if err != nil {
				return fmt.Errorf("listing codes of %s: %w", j.Key, err)
			}
			return f.refreshAll(touched, RemovedNotListed)
		})
}

// recodeListings gives the active listings catalog j.Key made that name
// their entry the codes j.EntryCodes says, and returns the records of
// those whose codes changed. The listings are read by the identifiers of
// the catalog's entries: no index of the listings leads with their catalog
// (one would cost every crawl), and a nested catalog may be listed by many
// domains.
func recodeListings(tx *txw, j Judgement) (map[feedKey]bool, error) {
	var changed []domainListing
	rows, err := tx.query(`SELECT l.domain, l.identifier, l.card_key, l.remote_norm, l.entry_index, l.entry_codes
		FROM listings l WHERE l.identifier IN (SELECT e.identifier FROM entries e WHERE e.catalog_url = ?)
		AND l.catalog_url = ? AND l.active = TRUE AND l.entry_index IS NOT NULL`, j.Key, j.Key)
	if err != nil {
		return nil, err
	}
	err = scanEach(rows, func() error {
		l := domainListing{ListingRecord: ListingRecord{CatalogURL: j.Key}}
		if err := rows.Scan(&l.domain, &l.Identifier, &l.CardKey, &l.RemoteNorm, &l.Entry, &l.Codes); err != nil {
			return err
		}
		if codes := j.EntryCodes(l.Entry); codes != l.Codes {
			l.Codes = codes
			changed = append(changed, l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	touched := map[feedKey]bool{}
	for _, l := range changed {
		if err := l.describe(tx, nil, l.Codes); err != nil {
			return nil, err
		}
		touched[recordOf(l.RemoteNorm, l.CardKey)] = true
	}
	return touched, nil
}

// domainListing is a listing with the domain whose it is: what identifies
// its row.
type domainListing struct {
	ListingRecord
	domain string
}

// describe sets what the listing's row says of it: its codes, and its
// entry when entry is not nil (nil keeps the one stored).
func (l domainListing) describe(tx *txw, entry any, codes string) error {
	_, err := tx.exec(`UPDATE listings SET entry_index = COALESCE(?, entry_index), entry_codes = ? WHERE domain = ?
		AND catalog_url = ? AND identifier = ? AND card_key = ? AND remote_norm = ?`,
		entry, codes, l.domain, l.CatalogURL, l.Identifier, l.CardKey, l.RemoteNorm)
	return err
}

// saveJudgement runs update (its arguments: lead, then the findings,
// version, key and hash) and, when it changed what the row says (same,
// given the same arguments but the version, counts the rows that already
// say it), then, in the same transaction. After a change of rules most
// documents are judged as before: their records need no refresh.
func (db *DB) saveJudgement(ctx context.Context, update, same string, j Judgement, then func(*txw, *feedTx) error, lead ...any) error {
	findings, err := findingsText(j.Findings)
	if err != nil {
		return err
	}
	args := append(slices.Clip(lead), findings, j.JudgedBy, j.Key, j.SHA256)
	sameArgs := append(slices.Clip(lead), findings, j.Key, j.SHA256)
	now := db.Now()
	err = db.retryTx(ctx, func() error {
		return db.write(func(tx *txw) error {
			var unchanged int
			if err := tx.queryRow(same, sameArgs...).Scan(&unchanged); err != nil {
				return err
			}
			res, err := tx.exec(update, args...)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 0 || unchanged > 0 {
				return err
			}
			return then(tx, newFeedTx(tx, now))
		})
	})
	if err != nil {
		return fmt.Errorf("re-judge %s: %w", j.Key, err)
	}
	return nil
}

// StaleRegistryEntry is a stored Registry entry judged by another version
// of the validator.
type StaleRegistryEntry struct {
	Source, Name, Version string
	ServerJSON            string
	Findings              finding.List
}

// EachStaleRegistryEntry calls fn for every stored entry judged by a
// validator other than version, a page at a time.
func (db *DB) EachStaleRegistryEntry(ctx context.Context, version string, fn func(StaleRegistryEntry) error) error {
	type key struct{ source, name, version string }
	return eachPage(registryPage, func(after key) ([]StaleRegistryEntry, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (StaleRegistryEntry, error) {
			var e StaleRegistryEntry
			err := rows.Scan(&e.Source, &e.Name, &e.Version, &e.ServerJSON, findingsScan{&e.Findings})
			return e, err
		}, `SELECT source, name, version, server_json, findings FROM registry_entries
			WHERE judged_by <> ? AND (source, name, version) > (?, ?, ?)
			ORDER BY source, name, version LIMIT ?`, version, after.source, after.name, after.version, registryPage)
		if err != nil {
			return nil, fmt.Errorf("registry entries to re-validate: %w", err)
		}
		return page, nil
	}, func(e StaleRegistryEntry) key { return key{e.Source, e.Name, e.Version} }, fn)
}

// SaveRegistryJudgement records an entry's new findings; the entry's
// content is unchanged, so changed_at stays.
func (db *DB) SaveRegistryJudgement(ctx context.Context, e StaleRegistryEntry, judgedBy string) error {
	findings, err := findingsText(e.Findings)
	if err != nil {
		return err
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE registry_entries SET findings = ?, judged_by = ?
		WHERE source = ? AND name = ? AND version = ?`, findings, judgedBy, e.Source, e.Name, e.Version); err != nil {
		return fmt.Errorf("re-validate %s %s: %w", e.Name, e.Version, err)
	}
	return nil
}

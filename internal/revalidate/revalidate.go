// Package revalidate re-judges stored documents with the current rules,
// without fetching them again: every stored catalog, card and Registry
// entry carries the version of the rules that judged it (catalog,
// servercard and registry RulesVersion), and the ones judged by another
// version get new findings (and, for cards, a new grade) from their stored
// bodies. Findings the crawl itself added (truncations, nesting, fallbacks)
// are kept; they do not depend on the rules. What the feed shows of them
// follows in the same write: a record's grade and findings, and the codes
// of the listings a catalog made (discover.ListingCodes).
package revalidate

import (
	"context"
	"fmt"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Documents is what re-judging crawled documents needs from the store.
type Documents interface {
	EachStaleCard(ctx context.Context, version string, fn func(store.Judged) error) error
	EachStaleCatalog(ctx context.Context, version string, fn func(store.Judged) error) error
	SaveCardJudgement(ctx context.Context, j store.Judgement) error
	SaveCatalogJudgement(ctx context.Context, j store.Judgement) error
	EachUnnamedListingCatalog(ctx context.Context, fn func(store.Judged) error) error
	NameListingEntries(ctx context.Context, e store.ListingEntries) (int, error)
}

// Entries is what re-validating Registry entries needs from the store.
type Entries interface {
	EachStaleRegistryEntry(ctx context.Context, version string, fn func(store.StaleRegistryEntry) error) error
	SaveRegistryJudgement(ctx context.Context, e store.StaleRegistryEntry, judgedBy string) error
}

// Summary counts what was re-judged. NoBody counts documents judged by
// older rules whose body is not stored: inline cards and catalogs that a
// build from before their data was kept crawled. They are re-judged when
// the document around them is next fetched. Listings counts the listings
// stored before they named their catalog's entry (migration 0026) that
// were given it (Listings); those of a catalog without a stored body are
// in NoBody, once per catalog.
type Summary struct {
	Cards    int `json:"cards"`
	Catalogs int `json:"catalogs"`
	NoBody   int `json:"noBody"`
	Listings int `json:"listings"`
}

// Crawled re-judges the stored cards and catalogs that older rules judged.
func Crawled(ctx context.Context, st Documents, v *servercard.Validator) (Summary, error) {
	var s Summary
	err := st.EachStaleCard(ctx, servercard.RulesVersion, func(j store.Judged) error {
		if j.Body == nil {
			s.NoBody++
			return nil
		}
		res := v.Check(j.Body)
		s.Cards++
		return st.SaveCardJudgement(ctx, store.Judgement{Key: j.Key, SHA256: j.SHA256, Grade: string(res.Grade),
			Findings: keepCrawl(j.Findings, res.Findings), JudgedBy: servercard.RulesVersion})
	})
	if err != nil {
		return s, fmt.Errorf("re-judge cards: %w", err)
	}
	err = st.EachStaleCatalog(ctx, catalog.RulesVersion, func(j store.Judged) error {
		if j.Body == nil {
			s.NoBody++
			return nil
		}
		_, fl, _ := catalog.Parse(j.Body, catalog.StoredBase(j.BaseURL, j.Key), catalog.Options{}) // a parse error is one of the findings
		s.Catalogs++
		fl = keepCrawl(j.Findings, fl)
		return st.SaveCatalogJudgement(ctx, store.Judgement{Key: j.Key, SHA256: j.SHA256, Findings: fl,
			JudgedBy: catalog.RulesVersion, EntryCodes: func(entry int) string { return discover.ListingCodes(fl, entry) }})
	})
	if err != nil {
		return s, fmt.Errorf("re-judge catalogs: %w", err)
	}
	// After the catalogs, so the listings take codes from their findings
	// under the current rules.
	named, noBody, err := Listings(ctx, st)
	s.Listings += named
	s.NoBody += noBody
	return s, err
}

// Listings names the entry, and sets the codes, of every active listing
// stored before listings named their catalog's entry (migration 0026):
// the entry is found in the catalog's stored document as a server's page
// finds it (catalog.ListedEntry), and the codes are what the catalog's
// stored findings say of that entry (discover.ListingCodes), as a crawl
// would have written them. A listing whose entry cannot be told apart from
// another of its identifier gets the catalog's own codes and is looked for
// again next time. It returns how many listings it named, and how many
// catalogs had no stored document to look in (left for their next crawl).
func Listings(ctx context.Context, st Documents) (named, noBody int, err error) {
	err = st.EachUnnamedListingCatalog(ctx, func(j store.Judged) error {
		if j.Body == nil {
			noBody++
			return nil
		}
		// nil when unreadable: no entry is told
		cat, _, _ := catalog.Parse(j.Body, catalog.StoredBase(j.BaseURL, j.Key), catalog.Options{})
		n, err := st.NameListingEntries(ctx, store.ListingEntries{Key: j.Key, SHA256: j.SHA256,
			Entry: func(identifier, cardKey string) int { return cat.ListedEntry(j.Key, identifier, cardKey) },
			Codes: func(entry int) string { return discover.ListingCodes(j.Findings, entry) }})
		named += n
		return err
	})
	if err != nil {
		return named, noBody, fmt.Errorf("name the entries of older listings: %w", err)
	}
	return named, noBody, nil
}

// keepCrawl is the parser's new findings plus the crawl's own old ones.
func keepCrawl(old, parsed finding.List) finding.List {
	out := append(finding.List(nil), parsed...)
	for _, f := range old {
		if discover.CrawlCode(f.Code) {
			out = append(out, f)
		}
	}
	return out
}

// Registry re-validates the stored Registry entries an older validator
// judged, and returns how many. A delta sync only fetches entries that
// changed, so without this a rules change would never reach the others.
func Registry(ctx context.Context, st Entries, v *registry.Validator) (int, error) {
	n := 0
	err := st.EachStaleRegistryEntry(ctx, registry.RulesVersion, func(e store.StaleRegistryEntry) error {
		e.Findings = registry.Revalidate(v, e.Findings, []byte(e.ServerJSON))
		n++
		return st.SaveRegistryJudgement(ctx, e, registry.RulesVersion)
	})
	if err != nil {
		return n, fmt.Errorf("re-validate registry entries: %w", err)
	}
	return n, nil
}

package site

import (
	"context"
	"slices"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// entryTrustMax is how many listings of a server's page stored before
// migration 0026, which do not say which entry of their catalog listed the
// card, have that entry looked for: one whose catalog has findings about
// some entry reads and parses that catalog (up to 1 MiB, ~25 ms), so a
// server hundreds of such domains list still gets its page in well under
// a second. A listing the crawl wrote since costs nothing of the kind.
const entryTrustMax = 20

// listingView is a listing chain with what the catalog that lists the card
// found about that entry and about its own signature.
type listingView struct {
	store.SiteListing
	Trust finding.List
}

// listingViews reads, for each listing, the findings of the catalog that
// lists the card about that entry and its signature. A listing that names
// its entry has them picked from the catalog's findings; one stored before
// listings named theirs has its entry found in the catalog's stored
// document (entryTrust), for the first entryTrustMax such listings and
// only when the catalog has findings about some entry; each such document
// is parsed once. more says some listing's were not looked for.
func (s *server) listingViews(ctx context.Context, ls []store.SiteListing) (out []listingView, more bool) {
	out = make([]listingView, len(ls))
	parsed := map[string]*catalog.Catalog{}
	looked := 0
	for i, l := range ls {
		out[i].SiteListing = l
		if len(l.Chain) == 0 {
			continue
		}
		c := l.Chain[len(l.Chain)-1]
		if c.URL != l.CatalogURL {
			continue
		}
		if l.Entry >= 0 {
			out[i].Trust = catalog.EntryFindings(c.Findings, l.Entry)
			continue
		}
		if looked == entryTrustMax {
			more = true
			continue
		}
		looked++
		var cat *catalog.Catalog
		if c.HasDocument && slices.ContainsFunc(c.Findings, func(f finding.Finding) bool { return catalog.Under(f.Path, "/entries") }) {
			var ok bool
			if cat, ok = parsed[c.SHA256]; !ok {
				cat = s.storedCatalog(ctx, c)
				parsed[c.SHA256] = cat
			}
		}
		out[i].Trust = entryTrust(cat, c, l.Identifier, l.CardKey)
	}
	return out, more
}

// storedCatalog parses c's stored document; nil when it cannot be read.
func (s *server) storedCatalog(ctx context.Context, c store.SiteCatalog) *catalog.Catalog {
	body, _, _, found, err := s.opts.Store.SiteDocument(ctx, c.SHA256, MaxRaw)
	if err != nil {
		s.opts.Logger.Warn("reading a catalog's document", "sha256", c.SHA256, "err", err)
	}
	if !found {
		return nil
	}
	cat, _, _ := catalog.Parse(body, catalog.StoredBase(c.BaseURL, c.URL), catalog.Options{})
	return cat
}

// entryTrust returns what catalog c (parsed: cat) found of the entry that
// led to card cardKey (catalog.ListedEntry) and of its own signature
// (catalog.EntryFindings); only the signature's when cat is nil.
func entryTrust(cat *catalog.Catalog, c store.SiteCatalog, identifier, cardKey string) finding.List {
	return catalog.EntryFindings(c.Findings, cat.ListedEntry(c.URL, identifier, cardKey))
}

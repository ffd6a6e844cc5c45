package catalog

import (
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// EntryFindings returns those of a catalog's findings that are about its
// entry at index: the ones at the entry or under it (its members, its
// digest, its trust manifests' signatures) but not under its inline data,
// whose findings are the artifact's own; and the ones about the catalog's
// own signature (/signature), which vouches for every entry. index < 0
// (no entry identified) keeps the signature's alone. The crawl stores
// their codes with each listing and a server's page shows them: one rule
// for both.
func EntryFindings(fs finding.List, index int) finding.List {
	var out finding.List
	entry, data := Entry{Index: index}.Path(), Entry{Index: index}.DataPath()
	for _, f := range fs {
		switch {
		case Under(f.Path, "/signature"):
		case index >= 0 && Under(f.Path, entry) && !Under(f.Path, data):
		default:
			continue
		}
		out = append(out, f)
	}
	return out
}

// Under reports whether JSON pointer p is ptr or below it.
func Under(p, ptr string) bool {
	return p == ptr || strings.HasPrefix(p, ptr+"/")
}

// ListedEntry is the index of the entry of c, the catalog with key
// catalogKey, that listed card cardKey under identifier: the one with the
// identifier whose URL or inline data is the card; else the only one with
// the identifier (the card was redirected, say); else -1, none can be told
// apart. Listings stored before they named their entry (migration 0026)
// find it this way, on a server's page and when re-judging names it; nil
// c has no entries.
func (c *Catalog) ListedEntry(catalogKey, identifier, cardKey string) int {
	if c == nil {
		return -1
	}
	entry, named, only := -1, 0, -1
	for _, e := range c.Entries {
		if e.Identifier != identifier {
			continue
		}
		named++
		only = e.Index
		if (e.ResolvedURL != "" && e.ResolvedURL == cardKey) || (e.Data != nil && e.InlineKey(catalogKey) == cardKey) {
			entry = e.Index
		}
	}
	if entry < 0 && named == 1 {
		entry = only
	}
	return entry
}

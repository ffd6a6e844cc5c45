package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// CatalogOptions say who aggregates the AI Catalog of what was found.
type CatalogOptions struct {
	// PublisherDomain is the operator's own domain: the host block names it,
	// and entries whose publisher gave no identifier get one minted under it
	// (urn:air:DOMAIN:mcp-server-card:HASH). Without it such entries are
	// left out.
	PublisherDomain string
	// HostName is the host block's displayName (default: "cardcrawl
	// directory at DOMAIN", or "cardcrawl discovered servers").
	HostName string
}

// errNoIdentifier: the publisher gave the card no identifier.
var errNoIdentifier = errors.New("no publisher identifier")

// DirectoryCatalog publishes the discovered cards as an AI Catalog that
// keeps each entry's original identifier: the publisher's, from the catalog
// entry that listed the card (how a client recognises one server across
// catalogs). Each entry points at the card where it was found (url), or
// carries an inline card (data). Where the publisher gave none (a card
// found at a legacy path, whose listing repeats the card URL) or the same
// identifier and version would appear twice, an identifier is minted under
// PublisherDomain; without one such entries are left out and counted in
// skipped. The host block says who aggregated the catalog.
func DirectoryCatalog(records []Record, o CatalogOptions) (catalog map[string]any, skipped int) {
	entries := []map[string]any{}
	seen := map[string]bool{} // card keys
	used := map[string]bool{} // identifier + version
	for _, r := range records {
		if seen[r.CardKey] {
			continue
		}
		seen[r.CardKey] = true
		e := map[string]any{"type": "application/mcp-server-card+json"}
		switch {
		case r.CardURL != "" && !r.CardInline:
			e["url"] = r.CardURL
		case r.card != nil:
			e["data"] = r.card
		default:
			continue
		}
		id, err := publisherIdentifier(r)
		if err != nil || used[id+"\x00"+r.Version] {
			if o.PublisherDomain == "" {
				skipped++
				continue
			}
			id = MintIdentifier(o.PublisherDomain, r.CardKey)
		}
		used[id+"\x00"+r.Version] = true
		e["identifier"] = id
		if r.Version != "" {
			e["version"] = r.Version
		}
		if name := firstNonEmpty(r.Title, r.Name); name != "" {
			e["displayName"] = name
		}
		if len(r.ListedBy) > 0 {
			e["extensions"] = map[string]any{MetaKey: map[string]any{"foundIn": r.ListedBy[0].CatalogURL, "cardKey": r.CardKey}}
		}
		entries = append(entries, e)
	}
	host := map[string]any{"displayName": "cardcrawl discovered servers"}
	if o.PublisherDomain != "" {
		host["displayName"] = "cardcrawl directory at " + o.PublisherDomain
		host["identifier"] = o.PublisherDomain
	}
	if o.HostName != "" {
		host["displayName"] = o.HostName
	}
	return map[string]any{"specVersion": "1.0", "host": host, "entries": entries}, skipped
}

// publisherIdentifier is the identifier the publisher's catalog gave the
// card: the first listing's (listings are in domain, catalog order). A
// listing that only repeats the card's own URL was made up by the crawler
// for a card found without a catalog.
func publisherIdentifier(r Record) (string, error) {
	for _, l := range r.ListedBy {
		if l.Identifier != "" && l.Identifier != r.CardKey && l.CatalogURL != r.CardKey {
			return l.Identifier, nil
		}
	}
	return "", errNoIdentifier
}

// MintIdentifier is the identifier an aggregator at domain gives a card
// whose publisher gave none: urn:air:DOMAIN:mcp-server-card: and the first 16
// hex digits of the SHA-256 of the card key (its URL, or catalog URL and
// JSON pointer). It is stable as long as the card stays where it is.
func MintIdentifier(domain, cardKey string) string {
	sum := sha256.Sum256([]byte(cardKey))
	return "urn:air:" + strings.ToLower(domain) + ":mcp-server-card:" + hex.EncodeToString(sum[:8])
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cardcrawl/cardcrawl/internal/jsonstream"
	"io"
	"net/url"
	"strings"

	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
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

// directoryCatalog builds the AI Catalog of the discovered cards an entry
// at a time, keeping each entry's original identifier: the publisher's,
// from the catalog entry that listed the card (how a client recognises one
// server across catalogs). Each entry points at the card where it was found
// (url), or carries an inline card (data). Where the publisher gave none (a
// card found at a legacy path, whose listing repeats the card URL), where
// an earlier entry has the same identifier and version (the store says so:
// store.FeedEntry.Repeats, nothing is remembered here), or where the
// publisher's identifier is one this catalog mints (under
// PublisherDomain: only this catalog names things there, so two entries
// never share one), an identifier is minted under PublisherDomain; without
// one such entries are left out and counted in skipped. The host block says
// who aggregated the catalog.
type directoryCatalog struct {
	o       CatalogOptions
	skipped int
}

func newDirectoryCatalog(o CatalogOptions) *directoryCatalog {
	return &directoryCatalog{o: o}
}

// catalogEntry is the AI Catalog entry of a card.
type catalogEntry struct {
	// URL is the card's, or Data the card inline (as the store keeps it:
	// compact JSON).
	URL         string
	Data        json.RawMessage
	Identifier  string
	Version     string
	DisplayName string
	// FoundIn and CardKey make its extensions, when it was listed.
	FoundIn, CardKey string
	Listed           bool
}

// entry is the catalog entry of a card, described by r (its first record),
// id (its publisher's identifier: store.PublisherIdentifier, "" when none),
// repeats (an earlier entry has id and r's version) and card (the card as
// the catalog carries it inline: store.FeedServer.CatalogCard); ok is
// false when it is left out.
func (c *directoryCatalog) entry(r *Record, id string, repeats bool, card json.RawMessage) (e catalogEntry, ok bool) {
	switch {
	case byURL(*r):
		e.URL = r.CardURL
	case card != nil:
		e.Data = card
	default:
		return e, false
	}
	if id == "" || repeats || c.minted(id) {
		if c.o.PublisherDomain == "" {
			c.skipped++
			return e, false
		}
		id = MintIdentifier(c.o.PublisherDomain, r.CardKey)
	}
	e.Identifier, e.Version, e.DisplayName = id, r.Version, firstNonEmpty(r.Title, r.Name)
	if len(r.ListedBy) > 0 {
		e.Listed, e.FoundIn, e.CardKey = true, r.ListedBy[0].CatalogURL, r.CardKey
	}
	return e, true
}

// errEmptyCard: an inline card the store kept no copy of.
var errEmptyCard = errors.New("inline card without its catalog copy")

// appendCatalogEntry appends e as encoding/json writes the entry's map
// (members in key order, HTML not escaped), without reflection: encoding
// the entries was a sixth of an AI Catalog export's CPU.
// TestCatalogEntryMatchesEncodingJSON holds the two to the same bytes.
func appendCatalogEntry(b []byte, e *catalogEntry) ([]byte, error) {
	o := startObject(b)
	if e.Data != nil {
		if len(e.Data) == 0 {
			return b, errEmptyCard
		}
		o.raw("data", e.Data)
	}
	o.strOmit("displayName", e.DisplayName)
	if e.Listed {
		ext := startObject(o.key("extensions").b)
		n := startObject(ext.key(MetaKey).b)
		n.str("cardKey", e.CardKey)
		n.str("foundIn", e.FoundIn)
		ext.b = n.close()
		o.b = ext.close()
	}
	o.str("identifier", e.Identifier)
	o.str("type", "application/mcp-server-card+json")
	if e.Data == nil {
		o.str("url", e.URL)
	}
	o.strOmit("version", e.Version)
	return o.close(), nil
}

// minted reports whether id is in the namespace this catalog mints in
// (MintIdentifier under PublisherDomain).
func (c *directoryCatalog) minted(id string) bool {
	return c.o.PublisherDomain != "" && strings.HasPrefix(id, mintPrefix(c.o.PublisherDomain))
}

// registryEntry is the catalog entry of a Registry entry of servers no
// listed card declares (source registry or all), or nil when it is left
// out. The Registry serves a server.json, not a Server Card, and no media
// type names a server.json, so an entry pointing at the Registry (url)
// would say it is something it is not. The entry carries instead, inline
// (data), the Server Card of what server.json and card share (the SEP
// keeps their names compatible: name, version, title, description, links,
// icons, remotes), marked as derived: extensions say where it was found
// (the Registry's URL of that version) and that its source is the
// Registry. The publisher gave it no AI Catalog identifier (a Registry name
// is not one), so one is minted under PublisherDomain; without one it is
// left out and counted.
func (c *directoryCatalog) registryEntry(r *store.FeedEntryRegistry) map[string]any {
	if c.o.PublisherDomain == "" {
		c.skipped++
		return nil
	}
	card := registryCard(r.ServerJSON)
	server := registryServerURL(r.Source, r.Name)
	id := MintIdentifier(c.o.PublisherDomain, server)
	e := map[string]any{"type": "application/mcp-server-card+json", "data": card, "identifier": id,
		"extensions": map[string]any{MetaKey: map[string]any{
			"foundIn":  server + "/versions/" + url.PathEscape(r.Version),
			"registry": r.Source, "sources": []string{SourceRegistry}}}}
	if card.Version != "" {
		e["version"] = card.Version
	}
	if name := firstNonEmpty(card.Title, card.Name); name != "" {
		e["displayName"] = name
	}
	return e
}

// registryCard is the Server Card made of the fields a Registry
// server.json shares with a card, links made safe as a card's are; the
// server.json's own _meta (the publisher's and the Registry's) is not
// the card's, and its packages are not a card's to carry.
func registryCard(serverJSON string) *servercard.Card {
	card := servercard.Republished(serverJSON)
	card.Schema, card.Meta = servercard.SchemaURL, nil
	return card
}

// registryServerURL is the Registry API's URL of a server's name (its
// versions are under it): what a minted identifier of a Registry-only
// server is made from, stable across its versions.
func registryServerURL(registry, name string) string {
	return strings.TrimSuffix(registry, "/") + "/v0.1/servers/" + url.PathEscape(name)
}

// byURL: the catalog points at the card where it was found; otherwise it
// carries the card inline.
func byURL(r Record) bool { return store.CardByURL(r.CardURL, r.CardInline) }

// host is the catalog's host block.
func (c *directoryCatalog) host() map[string]any {
	host := map[string]any{"displayName": "cardcrawl discovered servers"}
	if c.o.PublisherDomain != "" {
		host["displayName"] = "cardcrawl directory at " + c.o.PublisherDomain
		host["identifier"] = c.o.PublisherDomain
	}
	if c.o.HostName != "" {
		host["displayName"] = c.o.HostName
	}
	return host
}

// writeAICatalog streams the directory's AI Catalog: one entry per
// describing card, in the order of each card's first record, written as
// encoding/json writes the whole document (members in key order).
func writeAICatalog(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error {
	c := newDirectoryCatalog(opts.Catalog)
	if _, err := io.WriteString(w, "{\n  \"entries\": "); err != nil {
		return fmt.Errorf("write ai-catalog: %w", err)
	}
	arr := jsonstream.New(w, "  ")
	var raw []byte
	// The store keeps each inline card as the catalog carries it.
	err := src.EachFeedEntry(ctx, opts.Filter, store.FactsBase|store.FactCatalogCard|store.FactRepeats, func(e *store.FeedEntry) error {
		if e.Registry != nil {
			if entry := c.registryEntry(e.Registry); entry != nil {
				return arr.Add(entry)
			}
			return nil
		}
		first := &e.Records[0]
		r := NewRecord(first)
		var card json.RawMessage
		if !byURL(r) {
			card = json.RawMessage(first.CatalogCard)
		}
		entry, ok := c.entry(&r, store.PublisherIdentifier(first.CardKey, first.Listings), e.Repeats, card)
		if !ok {
			return nil
		}
		var err error
		if raw, err = appendCatalogEntry(raw[:0], &entry); err != nil {
			return err
		}
		return arr.AddRaw(raw)
	})
	if err == nil {
		err = arr.Close()
	}
	if err == nil {
		_, err = io.WriteString(w, ",\n")
	}
	if err == nil {
		err = writeMember(w, "host", c.host(), false)
	}
	if err == nil {
		err = writeMember(w, "specVersion", "1.0", true)
	}
	if err != nil {
		return fmt.Errorf("write ai-catalog: %w", err)
	}
	if opts.Skipped != nil {
		*opts.Skipped = c.skipped
	}
	return nil
}

// MintIdentifier is the identifier an aggregator at domain gives a card
// whose publisher gave none: urn:air:DOMAIN:mcp-server-card: and the first 16
// hex digits of the SHA-256 of the card key (its URL, or catalog URL and
// JSON pointer). It is stable as long as the card stays where it is.
func MintIdentifier(domain, cardKey string) string {
	sum := sha256.Sum256([]byte(cardKey))
	return mintPrefix(domain) + hex.EncodeToString(sum[:8])
}

// mintPrefix is what every identifier minted under domain starts with.
func mintPrefix(domain string) string {
	return "urn:air:" + strings.ToLower(domain) + ":mcp-server-card:"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

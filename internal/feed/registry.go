package feed

import (
	"encoding/json"

	"github.com/cardcrawl/cardcrawl/registry/wire"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// RegistrySchema is the server.json schema the Registry-compatible feed claims.
const RegistrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// MetaKey is the namespaced _meta key under which the feed says where each
// server was found.
const MetaKey = "io.github.cardcrawl/discovery"

// RegistryEntry is one server in the Registry v0.1 list shape.
type RegistryEntry = wire.ServerResponse[wire.Server, EntryMeta]

// EntryMeta is an entry's response-level _meta.
type EntryMeta struct {
	Discovery Discovery `json:"io.github.cardcrawl/discovery"`
}

// Discovery is what cardcrawl found about an entry's card (fields in the
// order the feed has always written them).
type Discovery struct {
	CardKey   string          `json:"cardKey"`
	CardURL   string          `json:"cardUrl"`
	Endpoints []FoundEndpoint `json:"endpoints"`
	Findings  []string        `json:"findings"`
	Grade     string          `json:"grade"`
	Removed   *RemovedEntry   `json:"removed,omitempty"`
	UpdatedAt string          `json:"updatedAt,omitempty"`
	// Sources is ["registry"] on the entry of servers only the Registry
	// declares (source all), whose server.json is the Registry's own and
	// Registry its registry's base URL; absent on a card's entry.
	Sources  []string `json:"sources,omitempty"`
	Registry string   `json:"registry,omitempty"`
	// RegistryVersion is, in the API's answers, that entry's status there
	// (a server's versions list the older ones too).
	RegistryVersion *RegistryVersion `json:"registryVersion,omitempty"`
}

// RegistryVersion is what the Registry says of one version of a server:
// its status, whether it is the latest (as cardcrawl elects it from the
// versions it holds, registry entries' isLatest) and when it was published.
type RegistryVersion struct {
	Status      string `json:"status"`
	IsLatest    bool   `json:"isLatest"`
	PublishedAt string `json:"publishedAt,omitempty"`
}

// RemovedEntry says an entry's card no longer describes any listed
// server: served with updated_since, as the Registry serves deleted
// servers.
type RemovedEntry struct {
	At     string `json:"at"`
	Reason string `json:"reason"`
}

// FoundEndpoint is one endpoint of an entry, where it was found.
type FoundEndpoint struct {
	Endpoint  string    `json:"endpoint"`
	FirstSeen string    `json:"firstSeen"`
	LastSeen  string    `json:"lastSeen"`
	ListedBy  []Listing `json:"listedBy"`
	Probe     *Probe    `json:"probe,omitempty"`
}

// registryEntryParts are the parts of its records a card's entry is made
// of (NewRegistryEntry without api).
const registryEntryParts = store.FactCardText | store.FactFindings | store.FactProbe | store.FactCardParts

// NewRegistryEntry builds the server.json-shaped entry of a card and the
// records it describes, carrying the remotes found for it, with the
// discovery facts under MetaKey. A card without a name has no entry (a
// server.json must have one): ok is false. With api, the entry also says
// when it last changed, and whether it is gone.
func NewRegistryEntry(e *store.FeedEntry, api bool) (entry RegistryEntry, ok bool) {
	return newRegistryEntry(e, api, nil)
}

// storedParts are a card entry's icons and remotes as the store keeps them,
// already as the feed republishes them (store.FeedServer's Icons and
// Remote): appendRegistryEntryParts copies them without decoding them.
type storedParts struct {
	icons   string
	remotes []string
}

// newRegistryEntry is NewRegistryEntry; with parts, a card entry's icons
// and remotes go there, as stored, rather than into the entry's server.
func newRegistryEntry(e *store.FeedEntry, api bool, parts *storedParts) (entry RegistryEntry, ok bool) {
	if parts != nil {
		*parts = storedParts{remotes: parts.remotes[:0]}
	}
	if e.Registry != nil {
		return newRegistryOnlyEntry(e, api), true
	}
	first := NewRecord(&e.Records[0])
	if first.Name == "" {
		// A nameless card stays in the JSONL/CSV feed with its grade, but
		// not in the Registry shape.
		return entry, false
	}
	srv := wire.Server{Schema: RegistrySchema, Name: first.Name, Description: first.Description, Version: first.Version,
		Title: first.Title, WebsiteURL: first.WebsiteURL, Repository: first.Repository}
	if parts != nil {
		parts.icons = e.Records[0].Icons
	} else {
		srv.Icons = cardIcons(&e.Records[0])
	}
	found := make([]FoundEndpoint, 0, len(e.Records))
	updated := ""
	for i := range e.Records {
		s := &e.Records[i]
		r := first
		if i > 0 {
			r = NewRecord(s)
		}
		updated = max(updated, s.UpdatedAt)
		found = append(found, FoundEndpoint{Endpoint: r.Endpoint, ListedBy: r.ListedBy, FirstSeen: r.FirstSeen,
			LastSeen: r.LastSeen, Probe: r.Probe})
		if parts != nil {
			if hasCardRemote(s) {
				parts.remotes = append(parts.remotes, s.Remote)
			}
		} else if rm, ok := cardRemote(s); ok {
			srv.Remotes = append(srv.Remotes, rm)
		}
	}
	d := Discovery{CardURL: first.CardURL, CardKey: first.CardKey, Grade: first.Grade, Findings: first.Findings,
		Endpoints: found}
	if api {
		d.UpdatedAt = updated
		d.Removed = removedEntry(e)
	}
	return RegistryEntry{Server: srv, Meta: EntryMeta{Discovery: d}}, true
}

// removedEntry says when and why an entry whose records are all gone went
// (its last record's removal), nil while it is listed.
func removedEntry(e *store.FeedEntry) *RemovedEntry {
	if !e.Removed() {
		return nil
	}
	last := &e.Records[0]
	for i := range e.Records {
		if e.Records[i].RemovedAt > last.RemovedAt {
			last = &e.Records[i]
		}
	}
	return &RemovedEntry{At: last.RemovedAt, Reason: last.RemovedReason}
}

// cardIcons are the icons of a record's describing card, as the entry
// republishes them (the store keeps only those, store/feed.go feedIcons).
func cardIcons(s *store.FeedServer) []servercard.Icon {
	if s.Icons == "" {
		return nil
	}
	var icons []servercard.Icon
	_ = json.Unmarshal([]byte(s.Icons), &icons) // written by the store from the decoded card
	return icons
}

// cardRemote is the describing card's remote for a record's endpoint, as
// the entry republishes it (as the store keeps it, feedRemote); ok is
// false when there is none.
func cardRemote(s *store.FeedServer) (rm servercard.Remote, ok bool) {
	if !hasCardRemote(s) {
		return rm, false
	}
	err := json.Unmarshal([]byte(s.Remote), &rm)
	return rm, err == nil
}

// hasCardRemote: the describing card declares a remote for the record's
// endpoint.
func hasCardRemote(s *store.FeedServer) bool { return s.Remote != "" && s.Endpoint != "" }

// newRegistryOnlyEntry republishes the Registry's own server.json of an
// entry whose endpoints no listed card declares, links made safe as a
// card's are, with where its endpoints stand (probes) under MetaKey. With
// api, it says when it last changed (the entry, or an endpoint's probe),
// and, on an entry of tombstones, that it went.
func newRegistryOnlyEntry(e *store.FeedEntry, api bool) RegistryEntry {
	var srv wire.Server
	_ = json.Unmarshal([]byte(e.Registry.ServerJSON), &srv) // stored as the Registry served it
	if srv.Name == "" {
		srv.Name, srv.Version = e.Registry.Name, e.Registry.Version
	}
	servercard.DropUnsafeLinks(&srv.WebsiteURL, &srv.Repository, &srv.Icons, &srv.Remotes)
	d := Discovery{Endpoints: make([]FoundEndpoint, 0, len(e.Records)), Findings: []string{},
		Sources: []string{SourceRegistry}, Registry: e.Registry.Source}
	updated := e.Registry.ChangedAt
	for i := range e.Records {
		r := NewRecord(&e.Records[i])
		updated = max(updated, e.Records[i].UpdatedAt)
		d.Endpoints = append(d.Endpoints, FoundEndpoint{Endpoint: r.Endpoint, ListedBy: r.ListedBy, FirstSeen: r.FirstSeen,
			LastSeen: r.LastSeen, Probe: r.Probe})
	}
	if api {
		d.UpdatedAt = updated
		d.Removed = removedEntry(e)
		d.RegistryVersion = &RegistryVersion{Status: e.Registry.Status, IsLatest: e.Registry.Latest,
			PublishedAt: e.Registry.PublishedAt}
	}
	return RegistryEntry{Server: srv, Meta: EntryMeta{Discovery: d}}
}

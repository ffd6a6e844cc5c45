// Package feed turns what the store knows about discovered servers into the
// published shapes: one JSON record per server (JSONL), CSV, a
// Registry-compatible server list, and an AI Catalog, written as rows
// stream from the store's read model, and the HTTP server that serves them.
// The record fields are a contract documented in README.md; add fields,
// never rename them.
package feed

import (
	"encoding/json"
	"strings"

	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Record is one discovered server: a remote endpoint merged across every
// card and domain that declares it, or a card with no remote (Endpoint "").
type Record struct {
	Endpoint           string                 `json:"endpoint"`
	EndpointNormalized string                 `json:"endpointNormalized"`
	Transport          string                 `json:"transport"`
	Templated          bool                   `json:"templated"`
	Name               string                 `json:"name"`
	Title              string                 `json:"title,omitempty"`
	Version            string                 `json:"version"`
	Description        string                 `json:"description"`
	WebsiteURL         string                 `json:"websiteUrl,omitempty"`
	Repository         *servercard.Repository `json:"repository,omitempty"`
	CardURL            string                 `json:"cardUrl,omitempty"`
	CardKey            string                 `json:"cardKey"`
	CardInline         bool                   `json:"cardInline"`
	CardSHA256         string                 `json:"cardSha256"`
	Grade              string                 `json:"grade"`
	Findings           []string               `json:"findings"`
	ListedBy           []Listing              `json:"listedBy"`
	FirstSeen          string                 `json:"firstSeen"`
	LastSeen           string                 `json:"lastSeen"`
	Probe              *Probe                 `json:"probe,omitempty"`
	ProbeDecision      *Decision              `json:"probeDecision,omitempty"`
	// Category and where it came from (name, description or tools); empty
	// when no rule matched.
	Category       string `json:"category,omitempty"`
	CategorySource string `json:"categorySource,omitempty"`
	// UpdatedAt is when the record's meaning last changed; it is written
	// in the delta feed (export --since) only.
	UpdatedAt string `json:"updatedAt,omitempty"`
	// Sources says where the server was found: "card" (a listed card
	// declares it), "registry" (a latest, undeleted Registry entry does), or
	// both. The rest is what else is known of it (records.go).
	Sources      []string        `json:"sources"`
	Registry     *RegistryFacts  `json:"registry,omitempty"`
	Reconcile    *ReconcileFacts `json:"reconcile,omitempty"`
	Namespace    *NamespaceFacts `json:"namespace,omitempty"`
	ProbeHistory *ProbeHistory   `json:"probeHistory,omitempty"`
}

// Tombstone is a record that went away, in the delta feed: the endpoint
// (or card) that is no longer listed, when, and why.
type Tombstone struct {
	Endpoint           string `json:"endpoint"`
	EndpointNormalized string `json:"endpointNormalized"`
	CardKey            string `json:"cardKey"`
	Removed            bool   `json:"removed"` // always true
	RemovedAt          string `json:"removedAt"`
	// RemovedReason is not_listed (no catalog lists the card, or no
	// listed card declares the endpoint, any more) or catalog_gone (the
	// last domain listing it no longer has a catalog).
	RemovedReason string `json:"removedReason"`
	UpdatedAt     string `json:"updatedAt"`
}

// Listing is one link of the listing chain: which domain's catalog listed
// it, and what that catalog found of the entry and of its own signature
// (finding codes: a digest mismatch, a signature verified, and so on),
// absent when nothing.
type Listing struct {
	Domain     string   `json:"domain"`
	CatalogURL string   `json:"catalogUrl"`
	Identifier string   `json:"identifier"`
	Findings   []string `json:"findings,omitempty"`
}

// Probe is the latest probe of the endpoint.
type Probe struct {
	Outcome       string `json:"outcome"`
	ProbedAt      string `json:"probedAt"`
	Transport     string `json:"transport,omitempty"`
	Protocol      string `json:"protocolVersion,omitempty"`
	ServerName    string `json:"serverName,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	ToolCount     *int   `json:"toolCount,omitempty"`
	// Partial: the handshake worked but a later step (tools/list) failed.
	Partial bool `json:"partial,omitempty"`
}

// Decision is the latest decision to probe the endpoint: "probe" or "skip",
// and the reason (warranted, fresh, placeholder, blocked_address, …).
type Decision struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// NewRecord builds the published record of a stored one, leaving out links
// that are not web URLs.
func NewRecord(s *store.FeedServer) Record {
	r := Record{
		Endpoint: s.Endpoint, EndpointNormalized: s.EndpointNorm, Transport: s.Transport, Templated: s.Templated,
		Name: s.Name, Title: s.Title, Version: s.Version, Description: s.Description, WebsiteURL: s.WebsiteURL,
		CardURL: s.CardURL, CardKey: s.CardKey, CardInline: s.CardInline, CardSHA256: s.CardSHA256, Grade: s.Grade,
		Findings: s.Findings, ListedBy: make([]Listing, 0, len(s.Listings)), FirstSeen: s.FirstSeen, LastSeen: s.LastSeen,
		Category: s.Category, CategorySource: s.CategorySource,
	}
	if s.Repository != "" {
		r.Repository = decodeRepository(s.Repository)
	}
	if r.Findings == nil {
		r.Findings = []string{}
	}
	for _, l := range s.Listings {
		r.ListedBy = append(r.ListedBy, Listing{Domain: l.Domain, CatalogURL: l.CatalogURL, Identifier: l.Identifier,
			Findings: l.Codes})
	}
	if d := s.Decision; d != nil {
		r.ProbeDecision = &Decision{Decision: d.Decision, Reason: d.Reason}
	}
	if p := s.Probe; p != nil {
		r.Probe = &Probe{Outcome: p.Outcome, ProbedAt: p.ProbedAt, Transport: p.Transport, Protocol: p.Protocol,
			ServerName: p.ServerName, ServerVersion: p.ServerVersion, ToolCount: p.ToolCount, Partial: p.Partial}
	}
	addServerFacts(&r, s)
	dropUnsafeRecordLinks(&r)
	return r
}

// NewTombstone builds the delta feed's line for a record that went away.
func NewTombstone(s *store.FeedServer) Tombstone {
	return Tombstone{Endpoint: s.Endpoint, EndpointNormalized: s.EndpointNorm, CardKey: s.CardKey, Removed: true,
		RemovedAt: s.RemovedAt, RemovedReason: s.RemovedReason, UpdatedAt: s.UpdatedAt}
}

// Domains returns the distinct listing domains of a record.
func (r Record) Domains() []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range r.ListedBy {
		if !seen[l.Domain] {
			seen[l.Domain] = true
			out = append(out, l.Domain)
		}
	}
	return out
}

// decodeRepository decodes a stored repository object (the store writes
// it with json.Marshal), nil when it does not decode. One of plain
// printable ASCII, no escapes, the keys as written, is read by hand:
// json.Unmarshal of every record's took a twentieth of a JSONL export.
// Anything else goes to encoding/json (TestDecodeRepository and its fuzz
// target hold the two to the same result).
func decodeRepository(s string) *servercard.Repository {
	if repo, ok := plainRepository(s); ok {
		return repo
	}
	var repo servercard.Repository
	if json.Unmarshal([]byte(s), &repo) != nil {
		return nil
	}
	return &repo
}

// plainRepository reads {"key":"value",...} of printable ASCII without
// backslashes or white space, each key one of Repository's; ok is false
// for anything else.
func plainRepository(s string) (*servercard.Repository, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f || s[i] == '\\' {
			return nil, false
		}
	}
	var repo servercard.Repository
	body := s[1 : len(s)-1]
	for body != "" {
		if body[0] != '"' {
			return nil, false
		}
		k, rest, ok := strings.Cut(body[1:], `":"`)
		if !ok {
			return nil, false
		}
		v, rest, ok := strings.Cut(rest, `"`)
		if !ok {
			return nil, false
		}
		switch k {
		case "url":
			repo.URL = v
		case "source":
			repo.Source = v
		case "subfolder":
			repo.Subfolder = v
		case "id":
			repo.ID = v
		default:
			return nil, false
		}
		if body = rest; body != "" {
			if body[0] != ',' || len(body) == 1 {
				return nil, false
			}
			body = body[1:]
		}
	}
	return &repo, true
}

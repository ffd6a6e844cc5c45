// Package feed turns what the store knows about discovered servers into the
// published shapes: one JSON record per server (JSONL), CSV, a
// Registry-compatible server list, and an AI Catalog. The record fields are
// a contract documented in README.md; add fields, never rename them.
package feed

import (
	"encoding/json"
	"sort"

	"github.com/cardcrawl/cardcrawl/internal/finding"
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

	card *servercard.Card
}

// Listing is one link of the listing chain: which domain's catalog listed it.
type Listing struct {
	Domain     string `json:"domain"`
	CatalogURL string `json:"catalogUrl"`
	Identifier string `json:"identifier"`
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

// Records builds the feed records from the store's servers.
func Records(servers []store.Server) []Record {
	return records(servers, decodeCard)
}

func decodeCard(raw string) *servercard.Card {
	var card servercard.Card
	_ = json.Unmarshal([]byte(raw), &card)
	return &card
}

// records decodes each distinct card once, however many remotes it
// declares: a card with thousands of remotes would otherwise be decoded,
// and held, once per remote.
func records(servers []store.Server, decode func(string) *servercard.Card) []Record {
	out := make([]Record, 0, len(servers))
	cards := map[string]*servercard.Card{}
	for _, s := range servers {
		card, ok := cards[s.Card.Key]
		if !ok {
			card = decode(s.Card.JSON)
			cards[s.Card.Key] = card
		}
		r := Record{
			Endpoint: s.Endpoint, EndpointNormalized: s.EndpointNorm, Transport: s.Transport, Templated: s.Templated,
			Name: s.Card.Name, Title: s.Card.Title, Version: s.Card.Version, Description: s.Card.Description,
			WebsiteURL: s.Card.WebsiteURL, Repository: card.Repository, CardURL: s.Card.SourceURL, CardKey: s.Card.Key,
			CardInline: s.Card.Inline, CardSHA256: s.Card.SHA256, Grade: s.Card.Grade,
			Findings: findingCodes(s.Card.Findings), ListedBy: []Listing{}, FirstSeen: s.FirstSeen, LastSeen: s.LastSeen,
			card: card,
		}
		for _, l := range s.Listings {
			r.ListedBy = append(r.ListedBy, Listing{Domain: l.Domain, CatalogURL: l.CatalogURL, Identifier: l.Identifier})
		}
		if d := s.Decision; d != nil {
			r.ProbeDecision = &Decision{Decision: d.Decision, Reason: d.Reason}
		}
		if p := s.Probe; p != nil {
			r.Probe = &Probe{Outcome: p.Outcome, ProbedAt: p.ProbedAt, Transport: p.Transport, Protocol: p.Protocol,
				ServerName: p.ServerName, ServerVersion: p.ServerVersion, ToolCount: p.ToolCount, Partial: p.Partial}
		}
		if c := s.Category; c != nil {
			r.Category, r.CategorySource = c.Category, c.Source
		}
		dropUnsafeLinks(&r)
		out = append(out, r)
	}
	return out
}

// findingCodes reduces stored findings to their sorted, distinct codes.
func findingCodes(fs finding.List) []string {
	seen := map[string]bool{}
	codes := []string{}
	for _, f := range fs {
		if !seen[f.Code] {
			seen[f.Code] = true
			codes = append(codes, f.Code)
		}
	}
	sort.Strings(codes)
	return codes
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

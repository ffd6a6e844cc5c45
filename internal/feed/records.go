package feed

import (
	"encoding/json"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/registry/wire"
	"github.com/cardcrawl/cardcrawl/store"
)

// The record's facts from beyond its card: where the server was found, the
// Registry entry declaring it, how its card was reconciled with the
// Registry, how its namespace was verified, and its probe history. Each is
// read by key with the record (store.FeedServer); README.md documents them.

// Sources values.
const (
	SourceCard     = store.SourceCard
	SourceRegistry = store.SourceRegistry
)

// RegistryFacts is the Registry entry declaring the endpoint: the first
// latest, undeleted one (by registry, name, version) listing it in remotes.
type RegistryFacts struct {
	// Registry is the registry's base URL.
	Registry    string `json:"registry"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	Status      string `json:"status"`
	PublishedAt string `json:"publishedAt,omitempty"`
	UpdatedAt   string `json:"updatedAt,omitempty"`
	// WouldReject: judged against the vendored server.json schema, the
	// entry has a finding of error severity, so the Registry would refuse
	// it if it were published today; Findings are the codes.
	WouldReject bool     `json:"wouldRejectToday"`
	Findings    []string `json:"findings"`
}

// ReconcileFacts is how the record's card was paired with a Registry entry
// (cardcrawl reconcile): the entry, the basis (remote_url, name,
// namespace_domain), what matched, and the fields that differ.
type ReconcileFacts struct {
	Registry   string          `json:"registry"`
	Name       string          `json:"name"`
	Version    string          `json:"version"`
	Basis      string          `json:"basis"`
	Detail     string          `json:"detail,omitempty"`
	Diffs      json.RawMessage `json:"diffs"`
	ComputedAt string          `json:"computedAt"`
}

// NamespaceFacts is how the namespace of the server's name was verified
// (cardcrawl namespaces): the method (http, dns, github, none), what was
// found, and when.
type NamespaceFacts struct {
	Namespace string          `json:"namespace"`
	Kind      string          `json:"kind"`
	Domain    string          `json:"domain,omitempty"`
	Method    string          `json:"method"`
	Found     json.RawMessage `json:"found,omitempty"`
	CheckedAt string          `json:"checkedAt,omitempty"`
}

// ProbeHistory counts every probe of the endpoint by outcome.
type ProbeHistory struct {
	Probes        int            `json:"probes"`
	FirstProbedAt string         `json:"firstProbedAt"`
	LastOKAt      string         `json:"lastOkAt,omitempty"`
	ByOutcome     []OutcomeCount `json:"byOutcome"`
}

// OutcomeCount is how many probes had one outcome, the first and last.
type OutcomeCount struct {
	Outcome string `json:"outcome"`
	Count   int    `json:"count"`
	First   string `json:"first"`
	Last    string `json:"last"`
}

// addServerFacts fills the record's facts from beyond its card, and for an
// endpoint only the Registry declares, its name's neighbours (title,
// description, links) from the entry's server.json.
func addServerFacts(r *Record, s *store.FeedServer) {
	r.Sources = []string{}
	if s.CardKey != "" {
		r.Sources = append(r.Sources, SourceCard)
	}
	if e := s.Registry; e != nil {
		r.Sources = append(r.Sources, SourceRegistry)
		codes := []string{}
		for _, f := range e.Findings {
			codes = append(codes, f.Code)
		}
		r.Registry = &RegistryFacts{Registry: e.Source, Name: e.Name, Version: e.Version, Status: e.Status,
			PublishedAt: e.PublishedAt, UpdatedAt: e.UpdatedAt, WouldReject: e.Findings.HasError(), Findings: codes}
		if s.CardKey == "" {
			var srv wire.Server
			_ = json.Unmarshal([]byte(e.ServerJSON), &srv) // what decodes is kept, as with cards
			r.Title, r.Description, r.WebsiteURL, r.Repository = srv.Title, srv.Description, srv.WebsiteURL, srv.Repository
		}
	}
	if c := s.Reconcile; c != nil {
		r.Reconcile = &ReconcileFacts{Registry: c.Source, Name: c.Name, Version: c.Version, Basis: c.Basis,
			Detail: c.Detail, Diffs: rawOr(c.Diffs, "[]"), ComputedAt: c.ComputedAt}
	}
	if n := s.Namespace; n != nil {
		r.Namespace = &NamespaceFacts{Namespace: n.Namespace, Kind: n.Kind, Domain: n.Domain, Method: n.Method,
			Found: rawOr(n.Result, ""), CheckedAt: n.CheckedAt}
	}
	if len(s.ProbeHistory) > 0 {
		h := &ProbeHistory{ByOutcome: make([]OutcomeCount, 0, len(s.ProbeHistory))}
		for _, c := range s.ProbeHistory {
			h.Probes += c.Count
			if h.FirstProbedAt == "" || c.First < h.FirstProbedAt {
				h.FirstProbedAt = c.First
			}
			if c.Outcome == string(failure.OutcomeOK) {
				h.LastOKAt = c.Last
			}
			h.ByOutcome = append(h.ByOutcome, OutcomeCount{Outcome: c.Outcome, Count: c.Count, First: c.First, Last: c.Last})
		}
		r.ProbeHistory = h
	}
}

// rawOr is a stored JSON text as raw JSON, or def when it is empty or not
// JSON.
func rawOr(s, def string) json.RawMessage {
	if s != "" && json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	if def == "" {
		return nil
	}
	return json.RawMessage(def)
}

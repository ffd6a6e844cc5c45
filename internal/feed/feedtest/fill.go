// Package feedtest fills a real store with a deterministic, varied set of
// discovered servers through the store's own write calls (SaveDomain,
// AddProbeDecision, AddProbe), for golden tests and benchmarks of the feed.
package feedtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// Options shape a fill. Domains is how many domains are saved; each lists
// about two servers, so a fill of N domains yields about 2N feed records.
type Options struct {
	Domains int
	// From numbers the first domain, so a second fill adds new servers.
	From int
	// RunID is recorded with decisions and probes.
	RunID int64
	// BeforeDomain, if set, runs before each domain is saved (tests move
	// their clock on here, so stored times do not depend on how many times
	// the store reads its clock).
	BeforeDomain func()
}

// Domain names domain i of a fill.
func Domain(i int) string { return fmt.Sprintf("d%06d.example", i) }

// Fill saves opts.Domains domains into db. Domain i lists a fetched card
// with one streamable-http remote (or, every 7th domain, no remote at all)
// and an inline card with an SSE remote; every 5th domain also lists the
// previous domain's fetched card, so endpoints are shared across domains,
// and its inline card declares that card's endpoint too;
// every 13th card carries hostile text (control characters, a formula, a
// javascript: link); every 9th domain lists its fetched card as found at a
// legacy path (no publisher identifier). Every endpoint gets a probe
// decision; every 3rd is probed ok and every 11th times out. Some servers
// get a stored category (see categories).
func Fill(ctx context.Context, db *store.DB, opts Options) error {
	for i := opts.From; i < opts.From+opts.Domains; i++ {
		if opts.BeforeDomain != nil {
			opts.BeforeDomain()
		}
		r := domainResult(i, opts.RunID)
		if err := save(ctx, db, r); err != nil {
			return err
		}
		for _, m := range r.Remotes {
			if err := probe(ctx, db, opts.RunID, m, i); err != nil {
				return err
			}
		}
		if err := db.SaveCategories(ctx, categories(i)); err != nil {
			return err
		}
	}
	return nil
}

// categories are domain i's stored categories: every 4th domain's fetched
// card (its endpoint, or the card itself when it has none) is travel by
// name, every 6th domain's inline card's endpoint matched no rule.
func categories(i int) []store.CategoryRow {
	d := Domain(i)
	var out []store.CategoryRow
	if i%4 == 2 {
		row := store.CategoryRow{Kind: store.KindEndpoint, Subject: fmt.Sprintf("https://mcp.%s/a", d), Category: "travel",
			Source: "name"}
		if i%7 == 0 {
			row.Kind, row.Subject, row.Source = store.KindCard, "https://"+d+"/card-a.json", "description"
		}
		out = append(out, row)
	}
	if i%6 == 3 {
		out = append(out, store.CategoryRow{Kind: store.KindEndpoint, Subject: fmt.Sprintf("https://mcp.%s/b", d),
			Reason: "no rule matched"})
	}
	return out
}

func probe(ctx context.Context, db *store.DB, run int64, m store.RemoteRecord, i int) error {
	n := len(m.URLNorm) + i
	decision, reason := "skip", "fresh"
	if n%3 == 0 || n%11 == 0 {
		decision, reason = "probe", "warranted"
	}
	if err := db.AddProbeDecision(ctx, store.ProbeDecision{RunID: run, RemoteNorm: m.URLNorm, URL: m.URL,
		Decision: decision, Reason: reason}); err != nil {
		return err
	}
	if decision != "probe" {
		return nil
	}
	p := store.ProbeRow{RemoteNorm: m.URLNorm, URL: m.URL, ProbedAt: "2026-11-02T00:00:01Z", Outcome: "timeout",
		Result: `{"outcome":"timeout"}`}
	if n%3 == 0 {
		tools := n % 17
		p = store.ProbeRow{RemoteNorm: m.URLNorm, URL: m.URL, ProbedAt: "2026-11-02T00:00:01Z", Outcome: "ok",
			Transport: m.Type, Protocol: "2025-06-18", ServerName: "srv", ServerVersion: "1.0." + fmt.Sprint(n%5),
			ToolCount: &tools, Result: fmt.Sprintf(`{"outcome":"ok","partial":%v}`, n%6 == 0)}
	}
	return db.AddProbe(ctx, run, p)
}

// card returns a card's JSON and its record.
func card(key, source string, inline bool, i int, name string, remotes []store.RemoteRecord) store.CardRecord {
	title := fmt.Sprintf("Server %d", i)
	desc := fmt.Sprintf("Does useful thing number %d for the people of domain %d, with a longer description "+
		"so the record has the size of a real one.", i, i)
	website := fmt.Sprintf("https://www.d%06d.example/", i)
	repo := fmt.Sprintf(`{"url":"https://github.com/example/srv%d","source":"github"}`, i)
	grade, findings := "conformant", `[]`
	switch i % 4 {
	case 1:
		grade, findings = "near_conformant", `[{"severity":"warning","code":"schema_missing","message":"m"},{"severity":"info","code":"utf8_bom","message":"m"}]`
	case 2:
		grade, findings = "non_conformant", `[{"severity":"error","code":"name_invalid","message":"m"}]`
	}
	if i%13 == 0 {
		title = "=HYPERLINK(\"https://evil.example\")\x1b[2J\u202e"
		website = "javascript:alert(1)"
		repo = `{"url":"data:text/html,x"}`
		findings = `[{"severity":"warning","code":"url_scheme_not_allowed","message":"m"}]`
	}
	rs := make([]string, 0, len(remotes))
	for _, m := range remotes {
		rs = append(rs, string(m.JSON))
	}
	doc := fmt.Sprintf(`{"name":%q,"version":"1.%d.0","description":%q,"title":%s,"websiteUrl":%q,"repository":%s,`+
		`"icons":[{"src":"https://www.d%06d.example/icon.png","mimeType":"image/png"},{"src":"http://insecure.example/i.png"}],"remotes":[%s]}`,
		name, i%9, desc, jsonString(title), website, repo, i, strings.Join(rs, ","))
	return store.CardRecord{Key: key, SourceURL: source, Inline: inline, SHA256: fmt.Sprintf("%064x", i*31+len(key)),
		Name: name, Title: title, Version: fmt.Sprintf("1.%d.0", i%9), Description: desc, WebsiteURL: website,
		Grade: grade, Findings: findingList(findings), JSON: []byte(doc)}
}

// findingList decodes a fixture's findings, written as stored JSON.
func findingList(s string) finding.List {
	var l finding.List
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		panic(fmt.Sprintf("fixture findings %s: %v", s, err))
	}
	return l
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func remote(url, typ string) store.RemoteRecord {
	return store.RemoteRecord{URLNorm: url, URL: url, Type: typ,
		JSON: []byte(fmt.Sprintf(`{"type":%q,"url":%q}`, typ, url))}
}

func domainResult(i int, run int64) store.DomainResult {
	d := Domain(i)
	cat := "https://" + d + "/.well-known/ai-catalog.json"
	r := store.DomainResult{Domain: d, RunID: run, Outcome: store.OutcomeCatalog, CatalogURL: cat, Definitive: true,
		Catalogs: []store.CatalogRecord{{URL: cat, SpecVersion: "1.0", SHA256: fmt.Sprintf("%064x", i), EntryCount: 2}}}
	fetched := "https://" + d + "/card-a.json"
	var aRemotes []store.RemoteRecord
	if i%7 != 0 {
		aRemotes = []store.RemoteRecord{remote(fmt.Sprintf("https://mcp.%s/a", d), "streamable-http")}
	}
	a := card(fetched, fetched, false, i, fmt.Sprintf("com.example.d%06d/a", i), aRemotes)
	inlineKey := cat + "#/entries/1/data"
	bRemotes := []store.RemoteRecord{remote(fmt.Sprintf("https://mcp.%s/b", d), "sse")}
	if i%5 == 0 && i > 0 && (i-1)%7 != 0 {
		// The inline card also declares the previous domain's endpoint: one
		// endpoint, two cards, the better-graded one describes it.
		bRemotes = append(bRemotes, remote(fmt.Sprintf("https://mcp.%s/a", Domain(i-1)), "streamable-http"))
	}
	b := card(inlineKey, "", true, i+1, fmt.Sprintf("com.example.d%06d/b", i), bRemotes)
	r.Cards = []store.CardRecord{a, b}
	add := func(ident string, c store.CardRecord, rs []store.RemoteRecord) { list(&r, ident, c, rs) }
	aIdent := "urn:example:" + d + ":a"
	if i%9 == 4 {
		// Found as at a legacy path: the listing only repeats the card URL,
		// so the publisher gave it no identifier.
		aIdent = fetched
	}
	add(aIdent, a, aRemotes)
	add("urn:example:"+d+":b", b, bRemotes)
	if i%5 == 0 && i > 0 {
		// The previous domain's fetched card, listed here too.
		p := i - 1
		pd := Domain(p)
		var pRemotes []store.RemoteRecord
		if p%7 != 0 {
			pRemotes = []store.RemoteRecord{remote(fmt.Sprintf("https://mcp.%s/a", pd), "streamable-http")}
		}
		pc := card("https://"+pd+"/card-a.json", "https://"+pd+"/card-a.json", false, p, fmt.Sprintf("com.example.d%06d/a", p), pRemotes)
		r.Cards = append(r.Cards, pc)
		add("urn:example:"+pd+":a", pc, pRemotes)
	}
	return r
}

// Card is one card for Save to list.
type Card struct {
	// Key is the card's URL, or for an inline card its catalog URL and a
	// JSON pointer.
	Key         string
	Inline      bool
	Name        string
	Title       string
	Version     string
	Description string
	WebsiteURL  string
	Grade       string // conformant when empty
	Findings    string // stored findings JSON; "[]" when empty
	// JSON is the card document; built from the fields and Remotes when
	// empty.
	JSON    string
	Remotes []string // streamable-http endpoints it declares
	// Identifier is what the domain's catalog calls it;
	// urn:example:DOMAIN:N (its place in cards) when empty.
	Identifier string
}

// Save crawls domain once more as listing exactly these cards (none: the
// domain has no catalog any more, a definitive 404).
func Save(ctx context.Context, db *store.DB, runID int64, domain string, cards ...Card) error {
	cat := "https://" + domain + "/.well-known/ai-catalog.json"
	r := store.DomainResult{Domain: domain, RunID: runID, Outcome: store.OutcomeCatalog, CatalogURL: cat, Definitive: true,
		Catalogs: []store.CatalogRecord{{URL: cat, SpecVersion: "1.0", SHA256: "cat", EntryCount: len(cards)}}}
	if len(cards) == 0 {
		r = store.DomainResult{Domain: domain, RunID: runID, Outcome: store.OutcomeNoCatalog, Class: "http_404",
			Reason: "404", Definitive: true}
	}
	for i, c := range cards {
		var rs []store.RemoteRecord
		for _, u := range c.Remotes {
			rs = append(rs, remote(u, "streamable-http"))
		}
		doc := c.JSON
		if doc == "" {
			parts := make([]string, len(rs))
			for j, m := range rs {
				parts[j] = string(m.JSON)
			}
			doc = fmt.Sprintf(`{"name":%s,"version":%s,"description":%s,"title":%s,"remotes":[%s]}`, jsonString(c.Name),
				jsonString(c.Version), jsonString(c.Description), jsonString(c.Title), strings.Join(parts, ","))
		}
		grade, findings := c.Grade, c.Findings
		if grade == "" {
			grade = "conformant"
		}
		if findings == "" {
			findings = "[]"
		}
		source := c.Key
		if c.Inline {
			source = ""
		}
		card := store.CardRecord{Key: c.Key, SourceURL: source, Inline: c.Inline, SHA256: sum(doc),
			Name: c.Name, Title: c.Title, Version: c.Version, Description: c.Description, WebsiteURL: c.WebsiteURL, Grade: grade,
			Findings: findingList(findings), JSON: []byte(doc)}
		r.Cards = append(r.Cards, card)
		ident := c.Identifier
		if ident == "" {
			ident = fmt.Sprintf("urn:example:%s:%d", domain, i)
		}
		list(&r, ident, card, rs)
	}
	return save(ctx, db, r)
}

// save records r as a crawl does: the domain is taken on first (the store
// keeps results of known domains only).
func save(ctx context.Context, db *store.DB, r store.DomainResult) error {
	if _, err := db.Enqueue(ctx, []string{r.Domain}, store.EnqueueOptions{}); err != nil {
		return err
	}
	return db.SaveDomain(ctx, r)
}

// list adds a catalog entry for card c to the domain's catalog, with the
// listing of each remote (or of the card, when it declares none).
func list(r *store.DomainResult, ident string, c store.CardRecord, rs []store.RemoteRecord) {
	r.Entries = append(r.Entries, store.EntryRecord{CatalogURL: r.CatalogURL, Identifier: ident,
		Type: "application/mcp-server-card+json", URL: c.SourceURL, ResolvedURL: c.SourceURL, Inline: c.Inline, Raw: []byte(`{}`)})
	if len(rs) == 0 {
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: r.CatalogURL, Identifier: ident, CardKey: c.Key})
	}
	for _, m := range rs {
		m.CardKey = c.Key
		r.Remotes = append(r.Remotes, m)
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: r.CatalogURL, Identifier: ident, CardKey: c.Key,
			RemoteNorm: m.URLNorm})
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

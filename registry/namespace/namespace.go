// Package namespace classifies Registry namespaces and checks, as an outsider
// can, how each could have been proven to the Registry: an HTTP key at
// https://DOMAIN/.well-known/mcp-registry-auth (covers that domain only), a
// DNS TXT key at the domain or a parent (covers subdomains), or a GitHub
// login for io.github.<account>, which only the Registry could check.
//
// What it finds is evidence, not a verdict: a published key shows the domain
// holder opted in, not that they published a given entry, and a key removed
// after publishing says nothing bad about the entry.
//
// Run streams namespaces from the store through the small Store interface
// declared in run.go; internal/pipeline runs it after the reconciliation.
package namespace

import (
	"context"
	"crypto/elliptic"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// Kinds of namespace.
const (
	KindDomain = "domain" // reverse-DNS, e.g. com.example
	KindGitHub = "github" // io.github.<account>
	KindOther  = "other"  // neither; nothing an outsider can check
	// KindInvalid is a dotted namespace that is not a hostname reversed
	// ("com.example@evil", "com.example:8443"): it names no domain, so
	// nothing is fetched or looked up for it.
	KindInvalid = "invalid"
)

// Methods by which a namespace is (or is not) evidently controlled.
const (
	MethodHTTP   = "http"
	MethodDNS    = "dns"
	MethodGitHub = "github"
	MethodNone   = "none"
)

// MaxProofBytes is the Registry's own cap on the HTTP proof body.
const MaxProofBytes = 4096

var (
	proofPattern   = regexp.MustCompile(`v=MCPv1;\s*k=([^;]+);\s*p=([A-Za-z0-9+/=]+)`)
	githubAccount  = regexp.MustCompile(`^[a-zA-Z0-9-]+$`)
	hostLabel      = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	githubRepoPath = regexp.MustCompile(`^https?://(?:www\.)?github\.com/([^/]+)/`)
)

// Namespace is a classified namespace.
type Namespace struct {
	Name    string `json:"namespace"`
	Kind    string `json:"kind"`
	Domain  string `json:"domain,omitempty"`  // for KindDomain: the namespace reversed, lower-cased
	Account string `json:"account,omitempty"` // for KindGitHub
}

// Of returns the namespace part of a server name ("com.example/x" →
// "com.example"), or "" when the name has no slash.
func Of(serverName string) string {
	ns, _, ok := strings.Cut(serverName, "/")
	if !ok {
		return ""
	}
	return ns
}

// gitHubPrefix begins every io.github namespace.
const gitHubPrefix = "io.github."

// Classify says what kind of namespace ns is.
func Classify(ns string) Namespace {
	n := Namespace{Name: ns, Kind: KindOther}
	if acct, ok := strings.CutPrefix(ns, gitHubPrefix); ok && githubAccount.MatchString(acct) {
		n.Kind, n.Account = KindGitHub, acct
		return n
	}
	labels := strings.Split(strings.ToLower(ns), ".")
	if len(labels) < 2 {
		return n
	}
	// Only a valid hostname becomes a domain: the domain is put in a URL
	// and a DNS query, where "example@evil.com" or "example:8443.com"
	// would mean something else entirely.
	if len(ns) > 253 || slices.ContainsFunc(labels, func(l string) bool { return !hostLabel.MatchString(l) }) {
		n.Kind = KindInvalid
		return n
	}
	slices.Reverse(labels)
	n.Kind, n.Domain = KindDomain, strings.Join(labels, ".")
	return n
}

// Proof is one "v=MCPv1; k=…; p=…" record as found.
type Proof struct {
	Algorithm string `json:"algorithm"`
	Key       string `json:"key"` // base64 as published
	Valid     bool   `json:"valid"`
	Problem   string `json:"problem,omitempty"`
}

// ParseProofs finds every proof record in text and checks that each key
// decodes to a public key of its algorithm: 32 bytes for ed25519, a 49-byte
// compressed point on P-384 for ecdsap384.
func ParseProofs(text string) []Proof {
	var out []Proof
	for _, m := range proofPattern.FindAllStringSubmatch(text, -1) {
		p := Proof{Algorithm: strings.TrimSpace(m[1]), Key: m[2]}
		key, err := base64.StdEncoding.DecodeString(p.Key)
		switch {
		case err != nil:
			p.Problem = "key is not valid base64"
		case p.Algorithm == "ed25519":
			if len(key) != 32 {
				p.Problem = fmt.Sprintf("ed25519 key is %d bytes, want 32", len(key))
			}
		case p.Algorithm == "ecdsap384":
			switch {
			case len(key) != 49:
				p.Problem = fmt.Sprintf("ecdsap384 key is %d bytes, want a 49-byte compressed point", len(key))
			case key[0] != 2 && key[0] != 3:
				p.Problem = "ecdsap384 key is not a compressed point (first byte must be 0x02 or 0x03)"
			default:
				if x, _ := elliptic.UnmarshalCompressed(elliptic.P384(), key); x == nil {
					p.Problem = "ecdsap384 key is not a point on P-384"
				}
			}
		default:
			p.Problem = fmt.Sprintf("unsupported algorithm %q", p.Algorithm)
		}
		p.Valid = p.Problem == ""
		out = append(out, p)
	}
	return out
}

func anyValid(ps []Proof) bool {
	return slices.ContainsFunc(ps, func(p Proof) bool { return p.Valid })
}

// What a check keeps of what a domain serves. The result rides on every
// feed record named under the namespace, and a domain decides how much
// it serves (a DNS answer can hold 64 KiB of TXT records): a proof
// record is under 100 bytes, and the Registry needs one.
const (
	maxProofs      = 8
	maxRecords     = 8
	maxRecordBytes = 256
)

// boundProofs keeps the first maxProofs of ps, valid ones first when
// there are more (so a kept list shows the proof that counted), and says
// how many it dropped.
func boundProofs(ps []Proof) ([]Proof, int) {
	if len(ps) <= maxProofs {
		return ps, 0
	}
	slices.SortStableFunc(ps, func(a, b Proof) int {
		switch {
		case a.Valid == b.Valid:
			return 0
		case a.Valid:
			return -1
		}
		return 1
	})
	return ps[:maxProofs:maxProofs], len(ps) - maxProofs
}

// HTTPCheck is what the well-known URL answered.
type HTTPCheck struct {
	URL    string  `json:"url"`
	Status int     `json:"status,omitempty"`
	Class  string  `json:"class,omitempty"` // fetch failure class
	Error  string  `json:"error,omitempty"`
	Proofs []Proof `json:"proofs,omitempty"`
	// ProofsMore counts the proofs past maxProofs, which are not kept.
	ProofsMore int  `json:"proofsMore,omitempty"`
	Found      bool `json:"found"` // a valid proof was served
	// KeptFrom is set when a re-check failed transiently (a temporary
	// class of internal/failure: timeout, 5xx, 429, DNS, connect): this is
	// then the outcome of the check made at
	// KeptFrom, and RecheckError says why the re-check did not replace it.
	KeptFrom     string `json:"keptFrom,omitempty"`
	RecheckError string `json:"recheckError,omitempty"`
}

// DNSCheck is what one TXT lookup returned.
type DNSCheck struct {
	Name    string   `json:"name"`
	Records []string `json:"records,omitempty"` // TXT records that look like proofs
	// RecordsMore and ProofsMore count what is past maxRecords and
	// maxProofs, which is not kept.
	RecordsMore int     `json:"recordsMore,omitempty"`
	Proofs      []Proof `json:"proofs,omitempty"`
	ProofsMore  int     `json:"proofsMore,omitempty"`
	Error       string  `json:"error,omitempty"`
	Found       bool    `json:"found"`
	// CoversSubdomains: the record sits at a parent of the namespace's
	// domain, which the Registry's DNS method accepts.
	CoversSubdomains bool `json:"coversSubdomains,omitempty"`
	// Misplaced: the record sits where the Registry does not look
	// (misplacedPrefixes), a common mistake it names when the domain
	// has none; it proves nothing there, so Found stays false.
	Misplaced bool `json:"misplaced,omitempty"`
	// KeptFrom and RecheckError: as in HTTPCheck, for a lookup that failed
	// (timeout, SERVFAIL) where an earlier one had an answer.
	KeptFrom     string `json:"keptFrom,omitempty"`
	RecheckError string `json:"recheckError,omitempty"`
}

// GitHubCheck records what can be said about an io.github namespace.
type GitHubCheck struct {
	Account string `json:"account"`
	// Repositories is how many distinct repository URLs the namespace's
	// servers name; SameAccount how many are under the account.
	Repositories int `json:"repositories"`
	SameAccount  int `json:"sameAccount"`
	// Elsewhere names the repositories under other accounts, the first
	// maxElsewhere in byte order; ElsewhereMore counts the rest. The
	// result rides on every feed record named under the namespace, so a
	// list as long as the namespace's servers would make the feed grow
	// with their square: anyone can publish cards under any io.github
	// name.
	Elsewhere     []string `json:"elsewhere,omitempty"`
	ElsewhereMore int      `json:"elsewhereMore,omitempty"`
	Note          string   `json:"note"`
}

// maxElsewhere is how many repositories under other accounts a GitHub
// check names.
const maxElsewhere = 10

// Result is the verification outcome of one namespace.
type Result struct {
	Namespace
	// Method is the strongest method that held now: http, dns, github or
	// none. Methods lists all that held.
	Method  string       `json:"method"`
	Methods []string     `json:"methods,omitempty"`
	HTTP    *HTTPCheck   `json:"http,omitempty"`
	DNS     []DNSCheck   `json:"dns,omitempty"`
	GitHub  *GitHubCheck `json:"github,omitempty"`
	Note    string       `json:"note,omitempty"`
}

// Getter is the part of *fetch.Client the HTTP proof needs.
type Getter interface {
	Get(ctx context.Context, r fetch.Request) *fetch.Response
}

// Resolver looks up TXT records; *net.Resolver implements it.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// Options configure a Checker.
type Options struct {
	// HTTP fetches the well-known proof; the program's one *fetch.Client.
	// Nil skips the HTTP method.
	HTTP Getter
	// Resolver answers TXT lookups; nil skips the DNS method.
	Resolver Resolver
	// DNSTimeout bounds each lookup (default 5 s, the Registry's own).
	DNSTimeout time.Duration
	// MaxParentLookups caps the parents of a namespace's domain whose TXT
	// records are read (default 4). Parents stop at the registrable domain
	// (eTLD+1), never at or above a public suffix; when the chain is
	// longer, the last lookup goes to the registrable domain, where keys
	// are most often published.
	MaxParentLookups int
	Logger           *slog.Logger
}

// Checker runs namespace checks.
type Checker struct{ opts Options }

// NewChecker builds a Checker.
func NewChecker(opts Options) *Checker {
	if opts.DNSTimeout <= 0 {
		opts.DNSTimeout = 5 * time.Second
	}
	if opts.MaxParentLookups <= 0 {
		opts.MaxParentLookups = 4
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{opts: opts}
}

// Offline says what is known without the network: the kind, and for a
// GitHub namespace whether the servers' repositories sit under the account.
// repoURLs are the repository.url values of the namespace's servers.
func Offline(ns Namespace, repoURLs []string) Result {
	r := Result{Namespace: ns}
	switch ns.Kind {
	case KindGitHub:
		r.Method, r.Methods = MethodGitHub, []string{MethodGitHub}
		r.GitHub = githubCheck(ns.Account, repoURLs)
	case KindOther:
		r.Method = MethodNone
		r.Note = "not a reverse-DNS or io.github namespace; nothing an outsider can check"
	case KindInvalid:
		r.Method = MethodNone
		r.Note = "not a valid reverse-DNS name (each label must be letters, digits and inner hyphens); names no domain to check"
	}
	return r
}

func githubCheck(account string, repoURLs []string) *GitHubCheck {
	g := &GitHubCheck{Account: account,
		Note: "proven to the Registry by a GitHub login for this account (or an org it owns); an outsider cannot re-check that"}
	seen := map[string]bool{}
	for _, u := range repoURLs {
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		g.Repositories++
		if m := githubRepoPath.FindStringSubmatch(u); m != nil && strings.EqualFold(m[1], account) {
			g.SameAccount++
		} else {
			g.Elsewhere = append(g.Elsewhere, u)
		}
	}
	slices.Sort(g.Elsewhere)
	if len(g.Elsewhere) > maxElsewhere {
		g.Elsewhere, g.ElsewhereMore = g.Elsewhere[:maxElsewhere:maxElsewhere], len(g.Elsewhere)-maxElsewhere
	}
	return g
}

// Check verifies one namespace over the network (domain namespaces) or
// offline (the rest). It never fails: every problem is part of the result.
func (c *Checker) Check(ctx context.Context, ns Namespace, repoURLs []string) Result {
	r := Offline(ns, repoURLs)
	if ns.Kind != KindDomain {
		return r
	}
	if c.opts.HTTP != nil {
		r.HTTP = c.checkHTTP(ctx, ns.Domain)
		if r.HTTP.Found {
			r.Methods = append(r.Methods, MethodHTTP)
		}
	}
	if c.opts.Resolver != nil {
		for i, name := range dnsNames(ns.Domain, c.opts.MaxParentLookups) {
			d := c.checkDNS(ctx, name)
			d.CoversSubdomains = i > 0
			r.DNS = append(r.DNS, d)
		}
		r.DNS = append(r.DNS, c.misplaced(ctx, ns.Domain, r.DNS)...)
	}
	setMethods(&r)
	c.opts.Logger.Debug("namespace checked", "namespace", ns.Name, "method", r.Method)
	return r
}

// setMethods derives Methods and Method of a domain namespace from its
// HTTP and DNS checks.
func setMethods(r *Result) {
	if r.Kind != KindDomain {
		return
	}
	r.Methods = nil
	if r.HTTP != nil && r.HTTP.Found {
		r.Methods = append(r.Methods, MethodHTTP)
	}
	if slices.ContainsFunc(r.DNS, func(d DNSCheck) bool { return d.Found }) {
		r.Methods = append(r.Methods, MethodDNS)
	}
	r.Method = MethodNone
	if len(r.Methods) > 0 {
		r.Method = r.Methods[0]
	}
}

// transientHTTP reports whether an HTTP check failed in a way that says
// nothing about the proof: the next attempt may well succeed.
func transientHTTP(h *HTTPCheck) bool { return failure.Class(h.Class).Transient() }

// Merge keeps, within a fresh check cur, the earlier outcome of every
// method whose re-check failed transiently: a timeout or a 5xx today does
// not erase a key found yesterday. The kept outcome is marked with when it
// was seen (prevCheckedAt) and why it was not replaced. A definitive answer
// (a 404, a record gone, NXDOMAIN) always replaces the earlier one.
func Merge(prev Result, prevCheckedAt string, cur Result) Result {
	if h, p := cur.HTTP, prev.HTTP; h != nil && p != nil && h.URL == p.URL && transientHTTP(h) && !transientHTTP(p) {
		kept := *p
		if kept.KeptFrom == "" {
			kept.KeptFrom = prevCheckedAt
		}
		kept.RecheckError = h.Error
		if kept.RecheckError == "" {
			kept.RecheckError = h.Class
		}
		cur.HTTP = &kept
	}
	if len(cur.DNS) > 0 && len(prev.DNS) > 0 {
		before := make(map[string]DNSCheck, len(prev.DNS))
		for _, d := range prev.DNS {
			before[d.Name] = d
		}
		dns := slices.Clone(cur.DNS)
		for i, d := range dns {
			p, ok := before[d.Name]
			if !ok || d.Error == "" || p.Error != "" {
				continue
			}
			kept := p
			if kept.KeptFrom == "" {
				kept.KeptFrom = prevCheckedAt
			}
			kept.RecheckError, kept.CoversSubdomains = d.Error, d.CoversSubdomains
			dns[i] = kept
		}
		cur.DNS = dns
	}
	setMethods(&cur)
	return cur
}

func (c *Checker) checkHTTP(ctx context.Context, domain string) *HTTPCheck {
	u := (&url.URL{Scheme: "https", Host: domain, Path: "/.well-known/mcp-registry-auth"}).String()
	h := &HTTPCheck{URL: u}
	resp := c.opts.HTTP.Get(ctx, fetch.Request{URL: u, Accept: "text/plain", MaxBytes: MaxProofBytes, NoRedirects: true})
	h.Status, h.Class = resp.Status, resp.Class
	if resp.Err != nil {
		h.Error = resp.Err.Error()
		return h
	}
	if resp.Status != 200 {
		h.Error = fmt.Sprintf("status %d, want 200", resp.Status)
		return h
	}
	h.Proofs = ParseProofs(strings.TrimSpace(string(resp.Body)))
	// The Registry reads the body as one string, so only the first
	// record counts there.
	h.Found = len(h.Proofs) > 0 && h.Proofs[0].Valid
	if len(h.Proofs) == 0 {
		h.Error = "no v=MCPv1 record in the body"
	}
	if len(h.Proofs) > maxProofs { // the first, which counted, stays first
		h.Proofs, h.ProofsMore = h.Proofs[:maxProofs:maxProofs], len(h.Proofs)-maxProofs
	}
	return h
}

func (c *Checker) checkDNS(ctx context.Context, name string) DNSCheck {
	d := DNSCheck{Name: name}
	ctx, cancel := context.WithTimeout(ctx, c.opts.DNSTimeout)
	defer cancel()
	txts, err := c.opts.Resolver.LookupTXT(ctx, name)
	if err != nil {
		var de *net.DNSError
		if !(errors.As(err, &de) && de.IsNotFound) {
			d.Error = err.Error()
		}
		return d
	}
	for _, t := range txts {
		ps := ParseProofs(t)
		if len(ps) == 0 {
			continue
		}
		if len(d.Records) < maxRecords {
			d.Records = append(d.Records, textcut.Cut(t, maxRecordBytes))
		} else {
			d.RecordsMore++
		}
		d.Proofs = append(d.Proofs, ps...)
	}
	// Every TXT record is tried by the Registry.
	d.Found = anyValid(d.Proofs)
	d.Proofs, d.ProofsMore = boundProofs(d.Proofs)
	return d
}

// misplacedPrefixes name where publishers put a TXT proof that the
// Registry reads only at the domain itself.
var misplacedPrefixes = []string{"_mcp-auth.", "_mcp-registry."}

// misplaced looks, as the Registry does when a domain has no proof record,
// for one at the names it does not read, and returns those found (marked
// Misplaced). Nothing is looked up when a lookup failed or a record was
// found where it belongs.
func (c *Checker) misplaced(ctx context.Context, domain string, checks []DNSCheck) []DNSCheck {
	if len(checks) == 0 || slices.ContainsFunc(checks, func(d DNSCheck) bool { return d.Error != "" || len(d.Records) > 0 }) {
		return nil
	}
	var out []DNSCheck
	for _, p := range misplacedPrefixes {
		if d := c.checkDNS(ctx, p+domain); len(d.Records) > 0 {
			d.Found, d.Misplaced = false, true
			out = append(out, d)
		}
	}
	return out
}

// dnsNames lists where to look for TXT proofs: the domain, then at most
// maxParents of its parents, nearest first, down to its registrable domain
// (eTLD+1) and never at or above a public suffix, whose records nobody who
// owns a domain below it controls. When the chain is longer, the last slot
// goes to the registrable domain. A domain that is itself a public suffix
// gets no lookups.
func dnsNames(domain string, maxParents int) []string {
	top, err := publicsuffix.EffectiveTLDPlusOne(domain)
	if err != nil {
		return nil
	}
	names := []string{domain}
	for d := domain; d != top; {
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			break
		}
		names = append(names, rest)
		d = rest
	}
	if len(names) > 1+maxParents {
		names = append(names[:maxParents], top)
	}
	return names
}

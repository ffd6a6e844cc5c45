// Package reconcile pairs crawled Server Cards with Registry entries and says
// where their metadata disagree. Matching prefers what is hardest to assert
// falsely: the normalised remote URL first (a card's own name is only a
// claim), then the server name, then the name's namespace against the domain
// that listed the card (never at or above a public suffix such as co.uk).
// Cards and entries left unmatched are results too.
//
// Match is pure; Run reads the store through the small Store interface
// declared here, matches, and replaces the stored results as a whole.
// internal/pipeline runs it after every crawl and Registry sync.
package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Bases of a match, strongest first.
const (
	BasisRemoteURL = "remote_url"
	BasisName      = "name"
	BasisNamespace = "namespace_domain"
)

// Result kinds, as stored.
const (
	KindPair         = "pair"
	KindCardOnly     = "card_only"
	KindRegistryOnly = "registry_only"
)

// Card is one crawled card and the domains whose catalogs list it.
type Card struct {
	Key     string
	Domains []string
	Card    servercard.Card
}

// Entry is the latest version of one Registry server.
type Entry struct {
	Source  string
	Name    string
	Version string
	Status  string
	Server  servercard.Card // server.json read through the card type: same fields
}

// Diff is one field whose value differs: Card is the card's value, Registry
// the entry's ("" on the side that lacks it). Field paths are those of
// servercard.Compare.
type Diff struct {
	Field    string `json:"field"`
	Card     string `json:"card"`
	Registry string `json:"registry"`
}

// Pair is a card matched to an entry, with why and how they differ.
type Pair struct {
	CardKey  string `json:"cardKey"`
	CardName string `json:"cardName"`
	Source   string `json:"source"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Status   string `json:"status,omitempty"`
	Basis    string `json:"basis"`
	// Detail is what matched: the URL, the name, or the domains, with a
	// note when a namespace and a listing domain relate only as subdomains.
	Detail string `json:"detail"`
	Diffs  []Diff `json:"diffs"`
}

// CardOnly is a card no Registry entry matched.
type CardOnly struct {
	CardKey  string   `json:"cardKey"`
	CardName string   `json:"cardName"`
	Domains  []string `json:"domains"`
}

// RegistryOnly is a latest Registry entry no card matched.
type RegistryOnly struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Version string `json:"version"`
	Status  string `json:"status,omitempty"`
}

// Result is the whole reconciliation.
type Result struct {
	Pairs        []Pair         `json:"pairs"`
	CardOnly     []CardOnly     `json:"cardOnly"`
	RegistryOnly []RegistryOnly `json:"registryOnly"`
}

var templateVar = regexp.MustCompile(`\{[^{}]*\}`)

// URLKey is the matching key of a remote URL: servercard's normal form with
// every {placeholder} reduced to {}, so templates match as templates
// whatever their variables are called. ok is false for an unusable URL.
func URLKey(raw string) (string, bool) {
	n, err := servercard.NormalizeURL(raw)
	if err != nil {
		return "", false
	}
	return templateVar.ReplaceAllString(n, "{}"), true
}

// NamespaceDomain is the domain a reverse-DNS namespace names
// ("com.example.mcp/x" → "mcp.example.com"), lower-cased; "" when the
// name has no dotted namespace.
func NamespaceDomain(name string) string {
	ns, _, ok := strings.Cut(name, "/")
	if !ok {
		return ""
	}
	// One reading of a namespace for the whole program: namespace.Classify
	// refuses labels that are not hostname labels (com.example@evil).
	switch n := namespace.Classify(ns); n.Kind {
	case namespace.KindDomain:
		return n.Domain
	case namespace.KindGitHub:
		// The account's GitHub Pages host is the one domain it controls.
		return strings.ToLower(n.Account) + ".github.io"
	default:
		return ""
	}
}

// registrable reports whether d sits at or below a registrable domain
// (eTLD+1). A public suffix such as co.uk or github.io is shared by
// unrelated owners, so a namespace naming it proves nothing about a domain
// below it, and no match is made there.
func registrable(d string) bool {
	_, err := publicsuffix.EffectiveTLDPlusOne(d)
	return err == nil
}

// parents lists d's proper parent domains down to its registrable domain,
// never a public suffix, nearest first ("a.b.example.co.uk" →
// "b.example.co.uk", "example.co.uk").
func parents(d string) []string {
	top, err := publicsuffix.EffectiveTLDPlusOne(d)
	if err != nil {
		return nil
	}
	var out []string
	for d != top {
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			break
		}
		out = append(out, rest)
		d = rest
	}
	return out
}

// Match reconciles cards with entries. Entries should be the latest version
// of each server per source. The output is sorted: pairs and card-only by
// card key, registry-only by source and name.
func Match(cards []Card, entries []Entry) Result {
	m := newMatcher(entries)
	sorted := slices.Clone(cards)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	res := Result{Pairs: []Pair{}, CardOnly: []CardOnly{}}
	for _, c := range sorted {
		pairs, only := m.match(c)
		res.Pairs = append(res.Pairs, pairs...)
		if only != nil {
			res.CardOnly = append(res.CardOnly, *only)
		}
	}
	res.RegistryOnly = m.registryOnly()
	return res
}

// matcher holds the Registry side, indexed; cards pass through it one at a
// time, so they can stream from the store.
type matcher struct {
	entries  []Entry
	byURL    map[string][]int
	byName   map[string][]int
	byDomain map[string][]int
	// underDomain maps a domain to the namespace domains below it, so both
	// directions of the subdomain relation are map lookups.
	underDomain map[string][]string
	matched     []bool
	// byVersion finds an entry by source, name and version (pairedBefore).
	byVersion map[[3]string]int
}

func newMatcher(entries []Entry) *matcher {
	m := &matcher{entries: entries, byURL: map[string][]int{}, byName: map[string][]int{}, byDomain: map[string][]int{},
		underDomain: map[string][]string{}, matched: make([]bool, len(entries))}
	for i, e := range entries {
		for _, r := range e.Server.Remotes {
			// i only grows: an entry already under k is the last one.
			if k, ok := URLKey(r.URL); ok && (len(m.byURL[k]) == 0 || m.byURL[k][len(m.byURL[k])-1] != i) {
				m.byURL[k] = append(m.byURL[k], i)
			}
		}
		m.byName[e.Name] = append(m.byName[e.Name], i)
		if d := NamespaceDomain(e.Name); d != "" && registrable(d) {
			m.byDomain[d] = append(m.byDomain[d], i)
		}
	}
	for nd := range m.byDomain {
		for _, p := range parents(nd) {
			m.underDomain[p] = append(m.underDomain[p], nd)
		}
	}
	for _, nds := range m.underDomain {
		sort.Strings(nds)
	}
	return m
}

// match pairs one card with the entries it matches, or reports it as
// card-only.
func (m *matcher) match(c Card) ([]Pair, *CardOnly) {
	type hit struct {
		entry         int
		basis, detail string
	}
	var hits []hit
	// A namespace basis pairs a card with every entry of the namespace,
	// which a large publisher has by the thousand: a set, not a scan of
	// the hits so far, says whether one is taken.
	seen := map[int]bool{}
	add := func(i int, basis, detail string) {
		if seen[i] {
			return
		}
		seen[i] = true
		hits = append(hits, hit{i, basis, detail})
	}
	for _, r := range c.Card.Remotes {
		k, ok := URLKey(r.URL)
		if !ok {
			continue
		}
		for _, i := range m.byURL[k] {
			add(i, BasisRemoteURL, k)
		}
	}
	if len(hits) == 0 && c.Card.Name != "" {
		for _, i := range m.byName[c.Card.Name] {
			add(i, BasisName, c.Card.Name)
		}
	}
	if len(hits) == 0 {
		for _, d := range c.Domains {
			d = strings.ToLower(d)
			for _, i := range m.byDomain[d] {
				add(i, BasisNamespace, d)
			}
		}
		// Subdomains on either side are weaker and noted as such.
		if len(hits) == 0 {
			for _, d := range c.Domains {
				d = strings.ToLower(d)
				for _, nd := range m.underDomain[d] {
					note := fmt.Sprintf("%s (namespace %s is a subdomain of listing domain %s)", d, nd, d)
					for _, i := range m.byDomain[nd] {
						add(i, BasisNamespace, note)
					}
				}
				for _, p := range parents(d) {
					note := fmt.Sprintf("%s (listing domain %s is a subdomain of namespace %s)", d, d, p)
					for _, i := range m.byDomain[p] {
						add(i, BasisNamespace, note)
					}
				}
			}
		}
	}
	if len(hits) == 0 {
		return nil, &CardOnly{CardKey: c.Key, CardName: c.Card.Name, Domains: nonNil(c.Domains)}
	}
	sort.SliceStable(hits, func(a, b int) bool {
		ea, eb := m.entries[hits[a].entry], m.entries[hits[b].entry]
		if ea.Source != eb.Source {
			return ea.Source < eb.Source
		}
		return ea.Name < eb.Name
	})
	pairs := make([]Pair, 0, len(hits))
	for _, h := range hits {
		e := m.entries[h.entry]
		m.matched[h.entry] = true
		pairs = append(pairs, Pair{CardKey: c.Key, CardName: c.Card.Name, Source: e.Source, Name: e.Name,
			Version: e.Version, Status: e.Status, Basis: h.basis, Detail: h.detail, Diffs: Compare(c.Card, e.Server)})
	}
	return pairs, nil
}

// pairedBefore marks the entries of a card's stored pairs as matched, as
// matching the card again would.
func (m *matcher) pairedBefore(rows []store.ReconcileRow) {
	if m.byVersion == nil {
		m.byVersion = make(map[[3]string]int, len(m.entries))
		for i, e := range m.entries {
			m.byVersion[[3]string{e.Source, e.Name, e.Version}] = i
		}
	}
	for _, r := range rows {
		if i, ok := m.byVersion[[3]string{r.Source, r.Name, r.Version}]; ok && r.Kind == KindPair {
			m.matched[i] = true
		}
	}
}

// registryOnly lists the entries no card matched so far, by source and name.
func (m *matcher) registryOnly() []RegistryOnly {
	out := []RegistryOnly{}
	for i, e := range m.entries {
		if !m.matched[i] {
			out = append(out, RegistryOnly{Source: e.Source, Name: e.Name, Version: e.Version, Status: e.Status})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.Source != y.Source {
			return x.Source < y.Source
		}
		return x.Name < y.Name
	})
	return out
}

// Compare lists field-level differences between a card and a server.json.
// $schema and _meta always differ between the two document kinds, so they
// are left out. Remotes are paired on URLKey, the key that matched them,
// so "https://{tenant}.example.org" and "https://{tenant_id}.example.org"
// are one remote whose url (and variables) differ; field paths name a
// remote by that key.
func Compare(card, server servercard.Card) []Diff {
	out := []Diff{}
	cardRemotes, serverRemotes := card.Remotes, server.Remotes
	card.Remotes, server.Remotes = nil, nil
	for _, d := range servercard.Compare(&card, &server) {
		if d.Field == "$schema" || d.Field == "_meta" {
			continue
		}
		out = append(out, Diff{Field: d.Field, Card: d.Old, Registry: d.New})
	}
	out = append(out, compareRemotes(cardRemotes, serverRemotes)...)
	for i := range out {
		out[i].Card, out[i].Registry = textcut.Cut(out[i].Card, maxDiffValue), textcut.Cut(out[i].Registry, maxDiffValue)
	}
	return out
}

// maxDiffValue is how much of a differing value a Diff shows. A pair's
// differences are stored with it and read with its card's records, and
// a card matched by namespace pairs with every entry of the namespace: a
// description of a megabyte would be copied into each pair.
const maxDiffValue = 1000

// compareRemotes pairs remotes on their matching key and lets
// servercard.Compare diff each pair (type, headers, variables, protocol
// versions) with the URLs made equal, reporting the URL itself only when
// the two differ beyond normalisation.
func compareRemotes(a, b []servercard.Remote) []Diff {
	ka, ma := keyedRemotes(a)
	kb, mb := keyedRemotes(b)
	keys := slices.Clone(ka)
	for _, k := range kb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	var out []Diff
	for _, k := range keys {
		x, inA := ma[k]
		y, inB := mb[k]
		field := "remotes[" + k + "]"
		var ca, cb servercard.Card
		var scKey string // the remote's name in servercard's field paths
		switch {
		case inA && inB:
			// server.json has no supportedProtocolVersions: a card that
			// declares them does not differ from the Registry by doing so.
			x.SupportedProtocolVersions = nil
			nx, _ := servercard.NormalizeURL(x.URL)
			ny, _ := servercard.NormalizeURL(y.URL)
			if nx != ny {
				out = append(out, Diff{Field: field + ".url", Card: x.URL, Registry: y.URL})
			}
			y.URL = x.URL
			ca.Remotes, cb.Remotes, scKey = []servercard.Remote{x}, []servercard.Remote{y}, nx
		case inA:
			ca.Remotes = []servercard.Remote{x}
			scKey, _ = servercard.NormalizeURL(x.URL)
		default:
			cb.Remotes = []servercard.Remote{y}
			scKey, _ = servercard.NormalizeURL(y.URL)
		}
		prefix := "remotes[" + scKey + "]"
		for _, d := range servercard.Compare(&ca, &cb) {
			rest, ok := strings.CutPrefix(d.Field, prefix)
			if !ok {
				continue // not about the remote; cannot happen with otherwise empty cards
			}
			out = append(out, Diff{Field: field + rest, Card: d.Old, Registry: d.New})
		}
	}
	return out
}

// keyedRemotes indexes remotes by URLKey (the trimmed raw URL when it has
// none) in order; a repeated key gets "#n" so no remote is dropped.
func keyedRemotes(rs []servercard.Remote) ([]string, map[string]servercard.Remote) {
	order := make([]string, 0, len(rs))
	m := make(map[string]servercard.Remote, len(rs))
	count := map[string]int{}
	for _, r := range rs {
		k, ok := URLKey(r.URL)
		if !ok {
			k = strings.TrimSpace(r.URL)
		}
		count[k]++
		if n := count[k]; n > 1 {
			k += "#" + strconv.Itoa(n)
		}
		order = append(order, k)
		m[k] = r
	}
	return order, m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Options configure Run and Compute.
type Options struct {
	Logger *slog.Logger
	// Build names the program's rules (internal/pipeline's build id). With
	// one, Run stores what each card's rows were computed from and takes a
	// card's stored rows as they are while that is the same; "" computes
	// every card.
	Build string
}

// Source is what a reconciliation reads: the latest Registry entries and
// the cards domains list now, each streamed. *store.DB implements it.
type Source interface {
	EachLatestRegistryEntry(ctx context.Context, fn func(store.RegistryEntry) error) error
	EachListedCard(ctx context.Context, fn func(store.ReconcileCard) error) error
}

// Store is what Run needs: the Source, somewhere to replace the stored
// reconciliation as a whole (which also reads a card's stored rows), and
// what taking a card's stored rows needs: the cards without their JSON,
// the JSON of those that changed, and the Registry's state.
type Store interface {
	Source
	NewReconcileWriter(ctx context.Context) (store.ReconcileWriter, error)
	EachListedCardStamp(ctx context.Context, fn func([]store.CardStamp) error) error
	CardsJSON(ctx context.Context, keys []string) (map[string]string, error)
	RegistryFingerprint(ctx context.Context) (string, error)
}

// Results reads a stored reconciliation back (Load).
type Results interface {
	ReconcileResults(ctx context.Context) ([]store.ReconcileRow, error)
}

// Counts is how many results of each kind a reconciliation produced, and
// of how many cards it took the stored rows as they were (Run with a
// Build; never counted by Stored).
type Counts struct {
	Pairs, CardOnly, RegistryOnly int
	Reused                        int
}

// Run reconciles the cards domains list now with the latest Registry
// entries and replaces the stored reconciliation. Only the Registry side is
// held in memory, as indexes; cards stream from the store in key order and
// results are written in batches, then swapped in as a whole. Documents
// that do not parse are skipped and logged, not fatal.
func Run(ctx context.Context, db Store, opts Options) (Counts, error) {
	opts.defaults()
	for tries := 1; ; tries++ {
		// Another computation that swapped its result in while this one
		// compared with the stored one: compare with that.
		n, err := run(ctx, db, opts)
		if !errors.Is(err, store.ErrReconcileMoved) || tries == 3 {
			return n, err
		}
	}
}

func run(ctx context.Context, db Store, opts Options) (Counts, error) {
	var n Counts
	// The Registry's state is read before its entries: entries read after
	// a change are then stored as computed from the state before it, and
	// computed again next time, never the other way round.
	var basis string
	if opts.Build != "" {
		fp, err := db.RegistryFingerprint(ctx)
		if err != nil {
			return n, fmt.Errorf("reconcile: %w", err)
		}
		basis = hashParts("v1", opts.Build, fp)
	}
	w, err := db.NewReconcileWriter(ctx)
	if err != nil {
		return n, fmt.Errorf("reconcile: %w", err)
	}
	reuse := w.Basis(basis) && basis != ""
	add := func(rows ...store.ReconcileRow) error {
		for _, r := range rows {
			if err := w.Add(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}
	card := func(rows []store.ReconcileRow) error {
		countKinds(&n, rows)
		return add(rows...)
	}
	rest := func(rest []RegistryOnly) error {
		n.RegistryOnly = len(rest)
		return add(registryRows(rest)...)
	}
	if basis == "" {
		err = Walk(ctx, db, opts, func(pairs []Pair, only *CardOnly) error { return card(cardRows(pairs, only)) }, rest)
	} else {
		err = walkStamped(ctx, db, opts, w, reuse, func(rows []store.ReconcileRow, reused bool) error {
			if !reused {
				return card(rows)
			}
			n.Reused++
			countKinds(&n, rows)
			return w.KeepStored(ctx)
		}, rest)
	}
	if err == nil {
		err = w.Commit(ctx)
	}
	if err != nil {
		w.Abort(context.WithoutCancel(ctx))
		return n, fmt.Errorf("reconcile: %w", err)
	}
	opts.Logger.Info("reconciled", "pairs", n.Pairs, "card_only", n.CardOnly, "registry_only", n.RegistryOnly)
	opts.Logger.Debug("reconciled cards", "reused", n.Reused)
	return n, nil
}

// countKinds counts a card's rows.
func countKinds(n *Counts, rows []store.ReconcileRow) {
	for _, r := range rows {
		switch r.Kind {
		case KindPair:
			n.Pairs++
		case KindCardOnly:
			n.CardOnly++
		}
	}
}

// Kinds counts a stored reconciliation's rows by kind.
type Kinds interface {
	ReconcileKinds(ctx context.Context) (map[string]int, error)
}

// Stored counts the reconciliation the last Run stored, as Run counted it.
func Stored(ctx context.Context, db Kinds) (Counts, error) {
	k, err := db.ReconcileKinds(ctx)
	if err != nil {
		return Counts{}, err
	}
	return Counts{Pairs: k[KindPair], CardOnly: k[KindCardOnly], RegistryOnly: k[KindRegistryOnly]}, nil
}

// Compute reconciles as Run does but only reads the store, returning the
// whole Result (tests and small tools; a command prints as Walk goes).
func Compute(ctx context.Context, db Source, opts Options) (Result, error) {
	opts.defaults()
	res := Result{Pairs: []Pair{}, CardOnly: []CardOnly{}, RegistryOnly: []RegistryOnly{}}
	err := Walk(ctx, db, opts, func(pairs []Pair, only *CardOnly) error {
		res.Pairs = append(res.Pairs, pairs...)
		if only != nil {
			res.CardOnly = append(res.CardOnly, *only)
		}
		return nil
	}, func(rest []RegistryOnly) error {
		res.RegistryOnly = rest
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("reconcile: %w", err)
	}
	return res, nil
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Walk reconciles as Compute does, a card at a time: it loads the latest
// Registry entries into a matcher, streams the listed cards through it in
// key order (calling card with each card's pairs, or the card when nothing
// matched it), then hands the entries no card matched to rest. Memory
// holds the Registry's entries and one card.
func Walk(ctx context.Context, db Source, opts Options, card func([]Pair, *CardOnly) error, rest func([]RegistryOnly) error) error {
	opts.defaults()
	m, err := loadMatcher(ctx, db, opts)
	if err != nil {
		return err
	}
	if err := db.EachListedCard(ctx, func(sc store.ReconcileCard) error {
		c := Card{Key: sc.Key, Domains: sc.Domains}
		if err := json.Unmarshal([]byte(sc.JSON), &c.Card); err != nil {
			opts.Logger.Warn("reconcile: unreadable card", "key", sc.Key, "err", err)
			return nil
		}
		return card(m.match(c))
	}); err != nil {
		return err
	}
	return rest(m.registryOnly())
}

// walkStamped is walk for Run with a build: each card's rows carry a hash
// of what they follow from besides the basis (the build and the Registry's
// state, stored once), and with reuse (the stored rows' basis is this
// one's) a card whose stored rows carry the hash it has now is not read
// again; card gets its rows, and whether they are the stored ones.
func walkStamped(ctx context.Context, db Store, opts Options, w store.ReconcileWriter, reuse bool,
	card func([]store.ReconcileRow, bool) error, rest func([]RegistryOnly) error) error {
	m, err := loadMatcher(ctx, db, opts)
	if err != nil {
		return err
	}
	if err := db.EachListedCardStamp(ctx, func(page []store.CardStamp) error {
		inputs := make([]string, len(page))
		stored := make([][]store.ReconcileRow, len(page))
		looked := make([]bool, len(page)) // the card has stored rows
		var read []string
		for i, c := range page {
			inputs[i] = cardInputs(c)
			if !reuse {
				read = append(read, c.Key)
				continue
			}
			rows, err := w.StoredCard(ctx, c.Key)
			if err != nil {
				return err
			}
			looked[i] = len(rows) > 0
			if len(rows) > 0 && !slices.ContainsFunc(rows, func(r store.ReconcileRow) bool { return r.Inputs != inputs[i] }) {
				stored[i] = rows
				continue
			}
			read = append(read, c.Key)
		}
		docs, err := db.CardsJSON(ctx, read)
		if err != nil {
			return err
		}
		for i, sc := range page {
			if stored[i] != nil {
				m.pairedBefore(stored[i])
				if err := card(stored[i], true); err != nil {
					return err
				}
				continue
			}
			if looked[i] {
				w.PassStored()
			}
			doc, ok := docs[sc.Key]
			if !ok {
				continue // gone since its stamp was read
			}
			c := Card{Key: sc.Key, Domains: sc.Domains}
			if err := json.Unmarshal([]byte(doc), &c.Card); err != nil {
				opts.Logger.Warn("reconcile: unreadable card", "key", sc.Key, "err", err)
				continue
			}
			rows := cardRows(m.match(c))
			for j := range rows {
				rows[j].Inputs = inputs[i]
			}
			if err := card(rows, false); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return rest(m.registryOnly())
}

// cardInputs hashes what a card's rows follow from besides the basis: the
// card's document hash, judgement (its findings say when remotes were cut
// from the stored JSON) and listing domains.
func cardInputs(c store.CardStamp) string {
	return hashParts(append([]string{"v1", c.Key, c.SHA256, c.JudgedBy, c.Grade, c.Findings}, c.Domains...)...)
}

// hashParts hashes a list of strings, each with its length.
func hashParts(parts ...string) string {
	h := sha256.New()
	for _, part := range parts {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// loadMatcher reads the latest Registry entries into a matcher.
func loadMatcher(ctx context.Context, db Source, opts Options) (*matcher, error) {
	var entries []Entry
	if err := db.EachLatestRegistryEntry(ctx, func(se store.RegistryEntry) error {
		e := Entry{Source: se.Source, Name: se.Name, Version: se.Version, Status: se.Status}
		if err := json.Unmarshal([]byte(se.ServerJSON), &e.Server); err != nil {
			// A mistyped field must not hide the entry: keep name and version.
			e.Server = servercard.Card{Name: se.Name, Version: se.Version}
			opts.Logger.Warn("reconcile: server.json does not fit the card shape", "name", se.Name, "version", se.Version, "err", err)
		}
		entries = append(entries, e)
		return nil
	}); err != nil {
		return nil, err
	}
	return newMatcher(entries), nil
}

// Rows flattens a Result into store rows.
func Rows(res Result) ([]store.ReconcileRow, error) {
	rows := make([]store.ReconcileRow, 0, len(res.Pairs)+len(res.CardOnly)+len(res.RegistryOnly))
	rows = append(rows, cardRows(res.Pairs, nil)...)
	for _, c := range res.CardOnly {
		rows = append(rows, cardRows(nil, &c)...)
	}
	return append(rows, registryRows(res.RegistryOnly)...), nil
}

// cardRows flattens one card's outcome: its pairs, or its card-only row.
func cardRows(pairs []Pair, only *CardOnly) []store.ReconcileRow {
	var rows []store.ReconcileRow
	for _, p := range pairs {
		diffs, _ := json.Marshal(nonNilDiffs(p.Diffs)) // strings only: cannot fail
		rows = append(rows, store.ReconcileRow{Kind: KindPair, CardKey: p.CardKey, CardName: p.CardName, Source: p.Source,
			Name: p.Name, Version: p.Version, Status: p.Status, Basis: p.Basis, Detail: p.Detail, Diffs: string(diffs)})
	}
	if only != nil {
		rows = append(rows, store.ReconcileRow{Kind: KindCardOnly, CardKey: only.CardKey, CardName: only.CardName,
			Detail: strings.Join(only.Domains, " ")})
	}
	return rows
}

func registryRows(rest []RegistryOnly) []store.ReconcileRow {
	rows := make([]store.ReconcileRow, 0, len(rest))
	for _, r := range rest {
		rows = append(rows, store.ReconcileRow{Kind: KindRegistryOnly, Source: r.Source, Name: r.Name, Version: r.Version, Status: r.Status})
	}
	return rows
}

func nonNilDiffs(d []Diff) []Diff {
	if d == nil {
		return []Diff{}
	}
	return d
}

// Load reads the stored reconciliation back into a Result.
func Load(ctx context.Context, db Results) (Result, error) {
	rows, err := db.ReconcileResults(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{Pairs: []Pair{}, CardOnly: []CardOnly{}, RegistryOnly: []RegistryOnly{}}
	for _, r := range rows {
		switch r.Kind {
		case KindPair:
			p := Pair{CardKey: r.CardKey, CardName: r.CardName, Source: r.Source, Name: r.Name, Version: r.Version, Status: r.Status, Basis: r.Basis, Detail: r.Detail}
			if err := json.Unmarshal([]byte(r.Diffs), &p.Diffs); err != nil {
				return res, fmt.Errorf("stored diffs for %s: %w", r.CardKey, err)
			}
			res.Pairs = append(res.Pairs, p)
		case KindCardOnly:
			res.CardOnly = append(res.CardOnly, CardOnly{CardKey: r.CardKey, CardName: r.CardName, Domains: nonNil(strings.Fields(r.Detail))})
		case KindRegistryOnly:
			res.RegistryOnly = append(res.RegistryOnly, RegistryOnly{Source: r.Source, Name: r.Name, Version: r.Version, Status: r.Status})
		}
	}
	return res, nil
}

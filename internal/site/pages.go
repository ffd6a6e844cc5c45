package site

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/category"
	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

var funcs = template.FuncMap{
	"entryTrustMax": func() int { return entryTrustMax },
	// webURL: only http(s) links from documents become links.
	"webURL":     servercard.IsWebURL,
	"serverPath": ServerPath,
	"words":      outcomeWords,
	"rawPath":    func(sha string) string { return "/raw/" + sha },
	// findingLink: the index of the servers a listing of which carries
	// the code.
	"findingLink": func(code string) string { return filterLink(listingFindingParam, code) },
}

// filterLink is the index filtered to one value of one parameter.
func filterLink(param, value string) string { return "/?" + url.Values{param: {value}}.Encode() }

// outcomeWords is a probe outcome in the directory's words
// (internal/failure), or the outcome itself when this version has none.
func outcomeWords(o string) string {
	if w := failure.Outcome(o).Words(); w != "" {
		return w
	}
	return o
}

// choice is one option of a filter's select.
type choice struct{ Value, Label string }

type filterView struct {
	Name, Label, Value string
	Choices            []choice
}

func filterChoices() map[string][]choice {
	cats := []choice{{"none", "none"}}
	if rules, err := category.Load(); err == nil {
		for _, c := range rules.Categories() {
			cats = append(cats, choice{string(c.ID), c.Name})
		}
	}
	outcomes := []choice{{"none", "never probed"}}
	for _, o := range failure.Outcomes() {
		if o != failure.OutcomeCanceled { // never stored
			outcomes = append(outcomes, choice{string(o), outcomeWords(string(o))})
		}
	}
	return map[string][]choice{
		"category": cats,
		"source":   {{store.SourceCard, "a card"}, {store.SourceRegistry, "the Registry"}},
		"outcome":  outcomes,
		"grade":    {{"conformant", "conformant"}, {"near_conformant", "near conformant"}, {"non_conformant", "non conformant"}, {"none", "no card"}},
		"ns":       {{"http", "HTTP proof"}, {"dns", "DNS proof"}, {"github", "GitHub account"}, {"none", "not verified"}, {store.NSUnknown, "not checked"}},
		// What a listing's catalog says of its entry: the codes a directory
		// asks about; any other code can still be given in the URL.
		listingFindingParam: {{discover.CodeSignatureVerified, "a signature verified"},
			{discover.CodeSignatureNotEndorsement, "a signature that endorses no card"},
			{discover.CodeSignatureInvalid, "an invalid signature"}, {discover.CodeSignatureUnverifiable, "a signature not verifiable"},
			{discover.CodeDigestMismatch, "a digest the card does not match"},
			{discover.CodeDigestUnverifiable, "a digest not verifiable"}, {catalog.CodeDigestWeak, "a weak digest"}},
	}
}

var filterLabels = map[string]string{"category": "Category", "source": "Found in", "outcome": "Probe", "grade": "Card grade",
	"ns": "Namespace", listingFindingParam: "Its catalog shows"}

type indexRow struct {
	store.SiteRow
	Path string
}

func (s *server) index(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := ParseFilter(q, s.opts.PageSize)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	page, err := s.opts.Store.SiteServers(r.Context(), f)
	if errors.Is(err, store.ErrBadFilter) {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		s.storeFailed(w, "servers", err)
		return
	}
	choices := filterChoices()
	var filters []filterView
	for _, p := range filterParams[1:] {
		filters = append(filters, filterView{Name: p, Label: filterLabels[p], Value: q.Get(p), Choices: choices[p]})
	}
	rows := make([]indexRow, 0, len(page.Rows))
	for _, row := range page.Rows {
		rows = append(rows, indexRow{SiteRow: row, Path: ServerPath(row.SiteKey)})
	}
	// The next page keeps the filters; the cursor is the last row's key.
	var next, first string
	keep := url.Values{}
	for _, p := range filterParams {
		if v := q.Get(p); v != "" {
			keep.Set(p, v)
		}
	}
	if l := q.Get("limit"); l != "" {
		keep.Set("limit", l)
	}
	if f.After.Kind != "" {
		first = "/?" + keep.Encode()
	}
	if page.Next != nil {
		keep.Set("after", Key(*page.Next))
		next = "/?" + keep.Encode()
	}
	s.render(w, http.StatusOK, "index.html", map[string]any{
		"Q": f.Q, "Filters": filters, "Rows": rows, "Next": next, "First": first, "Filtered": len(keep) > 0,
	})
}

// namespaceFound is the part of a stored namespace check a person reads.
type namespaceFound struct {
	Methods []string `json:"methods"`
	HTTP    *struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
		Class  string `json:"class"`
		Found  bool   `json:"found"`
	} `json:"http"`
	DNS []struct {
		Name  string `json:"name"`
		Error string `json:"error"`
		Found bool   `json:"found"`
	} `json:"dns"`
	GitHub *struct {
		Note string `json:"note"`
	} `json:"github"`
}

// diff is one differing field of a reconciliation result.
type diff struct {
	Field    string `json:"field"`
	Card     string `json:"card"`
	Registry string `json:"registry"`
}

type reconcileView struct {
	store.ReconcileRow
	DiffList []diff
}

type cardView struct {
	store.SiteCard
	FindingList []finding.Finding
}

type registryView struct {
	store.RegistryEntry
	FindingList []finding.Finding
}

type probeView struct {
	store.ProbeRow
	Reason    string
	LatencyMs int64
}

func (s *server) server(w http.ResponseWriter, r *http.Request) {
	key, err := ParseKey(r.PathValue("key"))
	if err != nil {
		s.fail(w, http.StatusNotFound, "no such server: "+err.Error())
		return
	}
	d, ok, err := s.opts.Store.SiteServer(r.Context(), key)
	if err != nil {
		s.storeFailed(w, "server", err)
		return
	}
	if !ok {
		s.fail(w, http.StatusNotFound, "no server with this key is listed now")
		return
	}
	view := map[string]any{"D": d, "Sources": d.Sources()}
	if d.Namespace != nil {
		var found namespaceFound
		_ = json.Unmarshal([]byte(d.Namespace.Result), &found) // written by the namespace checks; empty when unreadable
		view["NSFound"] = found
	}
	// The JSON columns were written by the crawl, the Registry sync and the
	// reconciliation; one that does not decode shows as empty.
	cards := make([]cardView, 0, len(d.Cards))
	for _, c := range d.Cards {
		cards = append(cards, cardView{SiteCard: c, FindingList: c.Findings})
	}
	view["Cards"] = cards
	view["Listings"], view["MoreTrust"] = s.listingViews(r.Context(), d.Listings)
	entries := make([]registryView, 0, len(d.Registry))
	for _, e := range d.Registry {
		entries = append(entries, registryView{RegistryEntry: e, FindingList: e.Findings})
	}
	view["Registry"] = entries
	view["Reconcile"] = decoded(d.Reconcile, func(r store.ReconcileRow) (*reconcileView, string, any) {
		v := &reconcileView{ReconcileRow: r}
		return v, r.Diffs, &v.DiffList
	})
	var probes []probeView
	for _, p := range d.Probes {
		var res struct {
			Reason    string `json:"reason"`
			LatencyMs int64  `json:"latencyMs"`
		}
		_ = json.Unmarshal([]byte(p.Result), &res) // the probe's own record
		probes = append(probes, probeView{ProbeRow: p, Reason: res.Reason, LatencyMs: res.LatencyMs})
	}
	view["Probes"] = probes
	view["Title"] = pageTitle(d.SiteRow)
	if d.Title == "" && d.Description == "" && d.RegistryServerJSON != "" {
		var sj struct{ Title, Description string }
		_ = json.Unmarshal([]byte(d.RegistryServerJSON), &sj)
		view["RegistryTitle"], view["RegistryDescription"] = sj.Title, sj.Description
	}
	s.render(w, http.StatusOK, "server.html", view)
}

// decoded makes a view of each row, decoding the row's JSON text into the
// view's field that view returns a pointer to.
func decoded[S, V any](rows []S, view func(S) (v *V, text string, into any)) []V {
	out := make([]V, 0, len(rows))
	for _, r := range rows {
		v, text, into := view(r)
		_ = json.Unmarshal([]byte(text), into)
		out = append(out, *v)
	}
	return out
}

func pageTitle(r store.SiteRow) string {
	for _, t := range []string{r.Title, r.Name, r.URL, r.Subject} {
		if t != "" {
			return t
		}
	}
	return "(unnamed)"
}

type countView struct {
	Value, Label, Link string
	Count              int
}

// countViews links each count to the index filtered by param; the
// servers without a value are filtered by the value "none", or for the
// namespace method (where "none" is a method) store.NSUnknown.
func countViews(param string, counts []store.SiteCount, label func(string) string) []countView {
	out := make([]countView, 0, len(counts))
	for _, c := range counts {
		v := countView{Value: c.Value, Count: c.Count, Label: label(c.Value)}
		val := c.Value
		switch {
		case val == "" && param == "ns":
			val = store.NSUnknown
		case val == "":
			val = "none"
		}
		if param != "" {
			v.Link = filterLink(param, val)
		}
		out = append(out, v)
	}
	return out
}

func (s *server) summary(w http.ResponseWriter, r *http.Request) {
	data, err := s.counts.get(r.Context())
	if err != nil {
		s.storeFailed(w, "counts", err)
		return
	}
	counts, outcomes := data.counts, data.outcomes
	// The breakdown probes --summary prints: most frequent first.
	breakdown := make([]countView, 0, len(outcomes))
	probed := 0
	for _, o := range outcomes {
		breakdown = append(breakdown, countView{Value: o.Outcome, Label: outcomeWords(o.Outcome), Count: o.Count})
		probed += o.Count
	}
	sort.SliceStable(breakdown, func(i, j int) bool { return breakdown[i].Count > breakdown[j].Count })
	or := func(none string) func(string) string {
		return func(v string) string {
			if v == "" {
				return none
			}
			return v
		}
	}
	sources := countViews("", counts.BySource, or(""))
	for i := range sources {
		// card+registry servers are counted once, and listed under both.
		if sources[i].Value != "card+registry" {
			sources[i].Link = filterLink("source", sources[i].Value)
		}
	}
	s.render(w, http.StatusOK, "summary.html", map[string]any{
		"Total":      counts.Total,
		"Sources":    sources,
		"Grades":     countViews("grade", counts.ByGrade, or("no card")),
		"Outcomes":   countViews("outcome", counts.ByOutcome, func(v string) string { return or("never probed")(outcomeWordsOrEmpty(v)) }),
		"Categories": countViews("category", counts.ByCategory, or("none")),
		"Methods":    countViews("ns", counts.ByNSMethod, or("not checked")),
		"Findings": countViews(listingFindingParam, counts.ByListingFinding,
			choiceWords(filterChoices()[listingFindingParam])),
		"Breakdown": breakdown,
		"Probed":    probed,
		"CountedAt": data.at.UTC().Format(time.RFC3339),
	})
}

// choiceWords labels a value with a filter's words for it, when the
// filter's form offers it, and the value itself.
func choiceWords(choices []choice) func(string) string {
	return func(v string) string {
		for _, c := range choices {
			if c.Value == v {
				return c.Label + " (" + v + ")"
			}
		}
		return v
	}
}

func outcomeWordsOrEmpty(o string) string {
	if o == "" {
		return ""
	}
	return outcomeWords(o)
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// raw serves a stored document as plain text: whatever it holds, a
// browser shows it and runs nothing.
func (s *server) raw(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha256")
	if !sha256Hex.MatchString(sha) {
		s.fail(w, http.StatusNotFound, "a document is named by its SHA-256 in lower-case hex")
		return
	}
	body, size, _, ok, err := s.opts.Store.SiteDocument(r.Context(), sha, MaxRaw)
	if err != nil {
		s.storeFailed(w, "document", err)
		return
	}
	if !ok {
		s.fail(w, http.StatusNotFound, "no stored document has this hash")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Security-Policy", rawCSP)
	h.Set("Content-Disposition", "inline")
	h.Set("X-Document-Size", strconv.FormatInt(size, 10))
	if int64(len(body)) < size {
		h.Set("X-Document-Truncated", "true")
	}
	_, _ = w.Write(body)
}

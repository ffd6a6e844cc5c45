package discover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// world is a simulated web plus everything a crawl needs, wired the way the
// CLI wires it: the fetch client reaches the web only through ConnectTo and
// an extra root CA.
type world struct {
	t      *testing.T
	web    *simweb.Web
	fetch  *fetch.Client
	store  *store.DB
	v      *servercard.Validator
	dbPath string
}

func newWorld(t *testing.T, archives ...[]byte) *world {
	t.Helper()
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := os.ReadFile(filepath.Join("testdata", "web.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := web.AddFixtures(fixtures); err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		if err := web.AddFixtures(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	w := &world{t: t, web: web, dbPath: filepath.Join(t.TempDir(), "crawl.db")}
	w.fetch = w.newClient()
	w.store = w.openStore()
	w.v, err = servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) newClient() *fetch.Client {
	w.t.Helper()
	// Short enough that the stalling host costs the suite little, long
	// enough for loopback TLS on a loaded 2-core CI machine.
	return clientFor(w.t, w.web, 2*time.Second)
}

// clientFor builds the program's fetch client the way the CLI does for
// --connect-to and --ca-cert, pointed at the simulated web.
func clientFor(tb testing.TB, web *simweb.Web, timeout time.Duration) *fetch.Client {
	tb.Helper()
	ct, err := fetch.ParseConnectTo(web.ConnectTo())
	if err != nil {
		tb.Fatal(err)
	}
	c, err := fetch.New(fetch.Options{
		ConnectTo: []fetch.ConnectTo{ct}, RootCAs: web.CertPool(), Timeout: timeout, RetryWait: -1,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func (w *world) openStore() *store.DB {
	w.t.Helper()
	st, err := store.Open(context.Background(), w.dbPath, store.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return st
}

func (w *world) options() discover.Options {
	return discover.Options{
		Fetch: w.fetch, Store: w.store, Validator: w.v, Concurrency: 8,
		FollowLinks: true, LegacyPaths: true,
		Probe: discover.ProbeOptions{Mode: discover.ProbeNever},
	}
}

func (w *world) crawl(ctx context.Context, opts discover.Options, domains ...string) discover.Summary {
	w.t.Helper()
	sum, err := discover.Crawl(ctx, opts, discover.Names(domains...))
	if err != nil {
		w.t.Fatalf("crawl: %v", err)
	}
	return sum
}

// outcome is what the domains table says about one domain.
type outcome struct {
	Outcome, Class string
	Cards, Remotes int
}

func (w *world) outcomes() map[string]outcome {
	w.t.Helper()
	rows, err := w.store.Domains(context.Background())
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]outcome{}
	for _, r := range rows {
		o := r.Outcome
		if r.State == store.StatePending {
			o = "pending"
		}
		out[r.Domain] = outcome{o, r.Class, r.Cards, r.Remotes}
	}
	return out
}

// hugeCatalog is a catalog with n entries of a type the crawler records but
// does not follow, so the test is about the entry cap, not about fetching.
func hugeCatalog(host string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s/.well-known/ai-catalog.json --\n{\"specVersion\":\"1.0\",\"entries\":[", host)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"identifier":"urn:air:%s:a2a:a%d","type":"application/a2a-agent-card+json","url":"/agents/%d.json"}`, host, i, i)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

var allDomains = []string{
	"crosshost.example", "inline.example", "nested.example", "mediatype.example", "soft404.example",
	"missing.example", "gone.example", "broken.example", "busy.example", "redirect.example", "toofar.example",
	"badredir.example", "badcards.example", "templated.example", "big.example", "stall.example",
	"invalid.example", "notcatalog.example", "future.example", "dupes.example", "cycle.example", "deep.example",
	"dropone.example", "droptwo.example", "cached.example", "linked.example", "legacy.example", "huge.example",
}

func TestCrawlOutcomes(t *testing.T) {
	w := newWorld(t, hugeCatalog("huge.example", 5000))
	sum := w.crawl(context.Background(), w.options(), allDomains...)
	if sum.Crawled != len(allDomains) || sum.Left != 0 || sum.Interrupted {
		t.Errorf("summary = %+v, want all %d crawled", sum, len(allDomains))
	}
	want := map[string]outcome{
		"crosshost.example":  {"catalog", "", 1, 1},
		"inline.example":     {"catalog", "", 1, 2},
		"nested.example":     {"catalog", "", 1, 1},
		"mediatype.example":  {"catalog", "", 1, 1},
		"soft404.example":    {"no_catalog", "soft_404", 0, 0},
		"missing.example":    {"no_catalog", "http_404", 0, 0},
		"gone.example":       {"no_catalog", "http_4xx", 0, 0},
		"broken.example":     {"failed", "http_5xx", 0, 0},
		"busy.example":       {"failed", "http_429", 0, 0},
		"redirect.example":   {"catalog", "", 1, 1},
		"toofar.example":     {"failed", "redirect_limit", 0, 0},
		"badredir.example":   {"failed", "blocked_address", 0, 0},
		"badcards.example":   {"catalog", "", 0, 0},
		"templated.example":  {"catalog", "", 1, 1},
		"big.example":        {"failed", "too_large", 0, 0},
		"stall.example":      {"failed", "timeout", 0, 0},
		"invalid.example":    {"failed", "not_json", 0, 0},
		"notcatalog.example": {"failed", "invalid_document", 0, 0},
		"future.example":     {"failed", "invalid_document", 0, 0},
		"dupes.example":      {"catalog", "", 1, 1},
		"cycle.example":      {"catalog", "", 0, 0},
		"deep.example":       {"catalog", "", 0, 0},
		"dropone.example":    {"catalog", "", 0, 0},
		"droptwo.example":    {"failed", "connect", 0, 0},
		"cached.example":     {"catalog", "", 0, 0},
		"linked.example":     {"catalog", "", 1, 1},
		"legacy.example":     {"catalog", "", 1, 1},
		"huge.example":       {"catalog", "", 0, 0},
	}
	if diff := cmp.Diff(want, w.outcomes()); diff != "" {
		t.Errorf("domain outcomes (-want +got):\n%s", diff)
	}
}

// TestRefusedTargets checks that card URLs and redirects aimed at refused
// addresses or schemes are recorded with their class and never requested.
func TestRefusedTargets(t *testing.T) {
	w := newWorld(t)
	w.crawl(context.Background(), w.options(), "badcards.example", "badredir.example", "badredir2.example",
		"badredir3.example", "badredir4.example")
	redirects := map[string]outcome{}
	for d, o := range w.outcomes() {
		if strings.HasPrefix(d, "badredir") {
			redirects[d] = o
		}
	}
	if diff := cmp.Diff(map[string]outcome{
		"badredir.example":  {"failed", "blocked_address", 0, 0},
		"badredir2.example": {"failed", "blocked_address", 0, 0},
		"badredir3.example": {"failed", "blocked_address", 0, 0},
		"badredir4.example": {"failed", "blocked_scheme", 0, 0},
	}, redirects); diff != "" {
		t.Errorf("refused redirects (-want +got):\n%s", diff)
	}
	got := w.observationClasses("badcards.example", "card")
	want := map[string]string{
		"https://127.0.0.1/card":                    "blocked_address",
		"https://10.0.0.5/card":                     "blocked_address",
		"https://169.254.169.254/latest/meta-data/": "blocked_address",
		"https://[::1]/card":                        "blocked_address",
		"https://[::ffff:127.0.0.1]/card":           "blocked_address",
		"http://plain.example/card":                 "blocked_scheme",
		"https://{tenant}.cards.example/card":       "placeholder_url",
		"https://badcards.example/redir":            "blocked_address",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("card observation classes (-want +got):\n%s", diff)
	}
	for _, r := range w.web.Requests("") {
		if r.Host == "plain.example" || strings.ContainsAny(r.Host, "[]") || startsWithDigit(r.Host) {
			t.Errorf("a refused target was requested: %+v", r)
		}
	}
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// observationClasses maps URL → class of the observations of one kind for a domain.
func (w *world) observationClasses(domain, kind string) map[string]string {
	w.t.Helper()
	return w.pairs(`SELECT url, class FROM observations WHERE domain = ? AND kind = ?`, domain, kind)
}

// storedFinding is a finding as the catalogs table keeps it.
type storedFinding struct{ Severity, Code, Path, Message string }

// catalogFindings returns the findings stored for the catalog at url.
// pairs reads a query of two text columns as a map of the first to the
// second.
func (w *world) pairs(query string, args ...any) map[string]string {
	w.t.Helper()
	rows, err := w.store.SQL().Query(query, args...)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			w.t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *world) catalogFindings(url string) []storedFinding {
	w.t.Helper()
	var raw string
	if err := w.store.SQL().QueryRow(`SELECT findings FROM catalogs WHERE url = ?`, url).Scan(&raw); err != nil {
		w.t.Fatal(err)
	}
	var fs []storedFinding
	if err := json.Unmarshal([]byte(raw), &fs); err != nil {
		w.t.Fatal(err)
	}
	return fs
}

// findingCodes returns the finding codes recorded on a domain's catalogs.
func (w *world) findingCodes(domain string) []string {
	w.t.Helper()
	rows, err := w.store.SQL().Query(`SELECT findings FROM catalogs WHERE domain = ?`, domain)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			w.t.Fatal(err)
		}
		var fs []struct{ Code string }
		if err := json.Unmarshal([]byte(raw), &fs); err != nil {
			w.t.Fatal(err)
		}
		for _, f := range fs {
			seen[f.Code] = true
		}
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func TestCatalogFindings(t *testing.T) {
	w := newWorld(t, hugeCatalog("huge.example", 5000))
	w.crawl(context.Background(), w.options(), "dupes.example", "cycle.example", "deep.example", "huge.example",
		"mediatype.example", "linked.example")
	for domain, code := range map[string]string{
		"dupes.example":     "duplicate_identifier",
		"cycle.example":     "catalog_cycle",
		"deep.example":      "nesting_too_deep",
		"huge.example":      "entries_truncated",
		"mediatype.example": "entry_legacy_media_type",
		"linked.example":    "found_via_link",
	} {
		if codes := w.findingCodes(domain); !contains(codes, code) {
			t.Errorf("%s: findings %v lack %q", domain, codes, code)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestCardsAndListingChain(t *testing.T) {
	w := newWorld(t)
	w.crawl(context.Background(), w.options(), "crosshost.example", "nested.example", "mediatype.example", "templated.example")
	servers, err := w.store.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Endpoint, Name, Grade, Card, Catalog, Domain string }
	var got []row
	for _, s := range servers {
		for _, l := range s.Listings {
			got = append(got, row{s.EndpointNorm, s.Card.Name, s.Card.Grade, s.Card.Key, l.CatalogURL, l.Domain})
		}
	}
	want := []row{
		{"https://dept.nested.example/mcp", "com.example/dept", "conformant", "https://nested.example/.well-known/dept/card.json",
			"https://nested.example/.well-known/dept/catalog.json", "nested.example"},
		{"https://mcp.weather.example/mcp", "com.example/weather", "conformant", "https://cards.example.net/crosshost/server-card",
			"https://crosshost.example/.well-known/ai-catalog.json", "crosshost.example"},
		{"https://old.mediatype.example/mcp", "com.example/old", "near_conformant", "https://mediatype.example/card.json",
			"https://mediatype.example/.well-known/ai-catalog.json", "mediatype.example"},
		{"https://{tenant}.templated.example/mcp", "com.example/tenant", "conformant",
			"https://templated.example/.well-known/ai-catalog.json#/entries/0/data",
			"https://templated.example/.well-known/ai-catalog.json", "templated.example"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	// The card host answers 406 unless asked for the card media type; the
	// card was read, so the crawler asked for it.
	for _, r := range w.web.Requests("cards.example.net") {
		if !strings.HasPrefix(r.Accept, "application/mcp-server-card+json") {
			t.Errorf("card requested with Accept %q", r.Accept)
		}
	}
}

func TestRetryAfterDroppedConnection(t *testing.T) {
	w := newWorld(t)
	w.crawl(context.Background(), w.options(), "dropone.example", "droptwo.example")
	if n := len(w.web.Requests("dropone.example")); n != 2 {
		t.Errorf("dropone.example: %d requests, want 2 (one retry)", n)
	}
	if n := len(w.web.Requests("droptwo.example")); n != 2 {
		t.Errorf("droptwo.example: %d requests, want 2 (exactly one retry)", n)
	}
}

func TestRecrawlRevalidates(t *testing.T) {
	w := newWorld(t)
	opts := w.options()
	w.crawl(context.Background(), opts, "crosshost.example")
	before, err := w.store.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	opts.Force = true
	w.crawl(context.Background(), opts, "crosshost.example")
	// A third run still revalidates: the 304s carried the validators forward.
	w.crawl(context.Background(), opts, "crosshost.example")

	rows, err := w.store.SQL().Query(`SELECT url, status, not_modified FROM observations ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type obs struct {
		URL         string
		Status      int
		NotModified bool
	}
	var got []obs
	for rows.Next() {
		var o obs
		if err := rows.Scan(&o.URL, &o.Status, &o.NotModified); err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
	}
	cat, card := "https://crosshost.example/.well-known/ai-catalog.json", "https://cards.example.net/crosshost/server-card"
	want := []obs{{cat, 200, false}, {card, 200, false}, {cat, 304, true}, {card, 304, true}, {cat, 304, true}, {card, 304, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
	after, err := w.store.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(serverKeys(before), serverKeys(after)); diff != "" {
		t.Errorf("servers changed across a 304 re-crawl (-before +after):\n%s", diff)
	}
}

func TestFreshResultsAreSkipped(t *testing.T) {
	w := newWorld(t)
	w.crawl(context.Background(), w.options(), "cached.example", "missing.example")
	sum := w.crawl(context.Background(), w.options(), "cached.example", "missing.example")
	if sum.Fresh != 2 || sum.Crawled != 0 {
		t.Errorf("second crawl: fresh %d crawled %d, want 2 and 0 (max-age and cached misses honoured)", sum.Fresh, sum.Crawled)
	}
	if n := len(w.web.Requests("cached.example")); n != 1 {
		t.Errorf("cached.example requested %d times, want 1", n)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	w := newWorld(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	opts := w.options()
	opts.Now = func() time.Time { return now }
	w.crawl(context.Background(), opts, "busy.example", "broken.example")
	rows, err := w.store.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Domain] = r.NextFetchAfter
	}
	want := map[string]string{
		"busy.example":   "2026-11-29T14:00:00.000000000Z", // Retry-After: 7200 beats the 1 h failure default
		"broken.example": "2026-11-29T13:00:00.000000000Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("next fetch (-want +got):\n%s", diff)
	}
}

// TestTransientFailuresKeepListings: a card host or nested catalog that is
// down for a moment must not make what it listed disappear; one that says
// the document is gone must.
func TestTransientFailuresKeepListings(t *testing.T) {
	w := newWorld(t, []byte(`
-- flaky.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[
 {"identifier":"direct","type":"application/mcp-server-card+json","url":"https://flakycards.example/card"},
 {"identifier":"nested","type":"application/ai-catalog+json","url":"https://flakycat.example/catalog.json"}]}
`))
	var status atomic.Int32 // 0: serve; else both hosts answer with this status
	w.web.Handle("flakycards.example", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if s := status.Load(); s != 0 {
			http.Error(rw, "not now", int(s))
			return
		}
		fmt.Fprintf(rw, `{"$schema":%q,"name":"com.example/direct","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://direct.flaky.example/mcp"}]}`, servercard.SchemaURL)
	}))
	w.web.Handle("flakycat.example", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if s := status.Load(); s != 0 {
			http.Error(rw, "not now", int(s))
			return
		}
		fmt.Fprintf(rw, `{"specVersion":"1.0","entries":[{"identifier":"n","type":"application/mcp-server-card+json","data":{"$schema":%q,"name":"com.example/nested","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://nested.flaky.example/mcp"}]}}]}`, servercard.SchemaURL)
	}))
	opts := w.options()
	opts.Force = true
	endpointsNow := func() []string {
		t.Helper()
		ss, err := w.store.Servers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			out = append(out, s.EndpointNorm)
		}
		return out
	}
	both := []string{"https://direct.flaky.example/mcp", "https://nested.flaky.example/mcp"}
	w.crawl(context.Background(), opts, "flaky.example")
	if diff := cmp.Diff(both, endpointsNow()); diff != "" {
		t.Fatalf("first crawl (-want +got):\n%s", diff)
	}
	status.Store(http.StatusServiceUnavailable)
	w.crawl(context.Background(), opts, "flaky.example")
	if diff := cmp.Diff(both, endpointsNow()); diff != "" {
		t.Errorf("after a 503 on the card host and the nested catalog (-want +got):\n%s", diff)
	}
	status.Store(http.StatusNotFound)
	w.crawl(context.Background(), opts, "flaky.example")
	if got := endpointsNow(); len(got) != 0 {
		t.Errorf("after a 404 on both, endpoints %v are still listed", got)
	}
}

func TestDomainTimeLimit(t *testing.T) {
	w := newWorld(t)
	opts := w.options()
	// Shorter than the client's 2 s request timeout, so the domain's limit
	// is what ends the hanging card fetch.
	opts.DomainTimeout = 300 * time.Millisecond
	w.crawl(context.Background(), opts, "slowcards.example")
	rows, err := w.store.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Outcome != "catalog" || !strings.Contains(rows[0].Reason, "per-domain time limit") {
		t.Errorf("domain = %+v, want a catalog stopped at the time limit", rows)
	}
	if diff := cmp.Diff(map[string]string{"https://hangingcards.example/card": "timeout"},
		w.observationClasses("slowcards.example", "card")); diff != "" {
		t.Errorf("card observations (-want +got):\n%s", diff)
	}
}

func serverKeys(ss []store.Server) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.EndpointNorm+" "+s.Card.Key+" "+s.Card.SHA256)
	}
	return out
}

// TestInterruptedCrawlResumes stops a crawl part-way, runs it again, and
// expects the same final state as a crawl that was never interrupted.
func TestInterruptedCrawlResumes(t *testing.T) {
	domains := []string{"crosshost.example", "inline.example", "nested.example", "mediatype.example",
		"missing.example", "broken.example", "redirect.example", "templated.example", "dupes.example",
		"cycle.example", "linked.example", "legacy.example", "badcards.example", "gone.example"}

	clean := newWorld(t)
	clean.crawl(context.Background(), clean.options(), domains...)

	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	opts := w.options()
	opts.Concurrency = 8
	var logged warnings
	opts.Logger = slog.New(&logged)
	opts.Progress = func(p discover.Progress) {
		if p.Done == 4 {
			cancel()
		}
	}
	sum := w.crawl(ctx, opts, domains...)
	if !sum.Interrupted || sum.Left == 0 {
		t.Fatalf("first run: %+v, want an interruption with domains left", sum)
	}
	// A clean stop: nothing about the interruption is an error or a warning.
	if msgs := logged.list(); len(msgs) > 0 {
		t.Errorf("the interrupted run logged: %v", msgs)
	}
	pending := 0
	for _, o := range w.outcomes() {
		if o.Outcome == "pending" {
			pending++
		}
	}
	if pending != sum.Left {
		t.Errorf("%d domains pending after the interruption, summary says %d left", pending, sum.Left)
	}

	resumed := w.crawl(context.Background(), w.options(), domains...)
	if resumed.Crawled != sum.Left {
		t.Errorf("resumed run crawled %d, want the %d left", resumed.Crawled, sum.Left)
	}
	if diff := cmp.Diff(clean.outcomes(), w.outcomes()); diff != "" {
		t.Errorf("domains after resume differ from a clean crawl (-clean +resumed):\n%s", diff)
	}
	cs, err := clean.store.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := w.store.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(serverKeys(cs), serverKeys(rs)); diff != "" {
		t.Errorf("servers after resume differ from a clean crawl (-clean +resumed):\n%s", diff)
	}
	// No duplicated rows: one listing per chain link.
	var dup int
	if err := w.store.SQL().QueryRow(`SELECT COUNT(*) FROM (SELECT domain, catalog_url, identifier, card_key, remote_norm, COUNT(*) n
		FROM listings GROUP BY domain, catalog_url, identifier, card_key, remote_norm HAVING COUNT(*) > 1) d`).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Errorf("%d duplicated listing rows", dup)
	}
}

// warnings is a slog handler that keeps every record at Warn or above.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, r.Message)
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }
func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func TestNormalizeDomain(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Example.COM", "example.com"},
		{"https://example.com/some/path", "example.com"},
		{"example.com.", "example.com"},
		{"example.com:8443", "example.com:8443"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"  spaced.example  ", "spaced.example"},
		{"127.0.0.1", "127.0.0.1"},
		{"[::1]", "[::1]"},
	}
	for _, tt := range tests {
		got, err := discover.NormalizeDomain(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "   ", "user@example.com", "{tenant}.example", "a b.example", "foo..bar", ".example",
		strings.Repeat("a", 64) + ".example"} {
		if got, err := discover.NormalizeDomain(bad); err == nil {
			t.Errorf("NormalizeDomain(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReadDomains(t *testing.T) {
	in := "# my list\nexample.com\n\n  example.org  # trailing comment\nexample.net,notes\n"
	var got []string
	for d, err := range discover.ReadDomains(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	if diff := cmp.Diff([]string{"example.com", "example.org", "example.net"}, got); diff != "" {
		t.Errorf("ReadDomains (-want +got):\n%s", diff)
	}
}

// TestSameURLTwiceInOneDomain: a domain's fetches are written with its
// result, so a URL its catalog lists twice is revalidated against the
// domain's own unwritten first fetch, as it was when each fetch was
// written at once.
func TestSameURLTwiceInOneDomain(t *testing.T) {
	w := newWorld(t, []byte(`-- twice.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[
 {"identifier":"one","type":"application/mcp-server-card+json","url":"/card.json"},
 {"identifier":"two","type":"application/mcp-server-card+json","url":"/card.json"}
]}
-- twice.example/card.json --
HTTP 200
Content-Type: application/mcp-server-card+json
ETag: "twice-v1"

{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/twice","version":"1.0.0","description":"listed twice","remotes":[{"type":"streamable-http","url":"https://twice.example/mcp"}]}
`))
	w.crawl(context.Background(), w.options(), "twice.example")
	rows, err := w.store.SQL().Query(`SELECT url, status, not_modified FROM observations ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var u string
		var status int
		var nm bool
		if err := rows.Scan(&u, &status, &nm); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d %v", u, status, nm))
	}
	want := []string{"https://twice.example/.well-known/ai-catalog.json 200 false",
		"https://twice.example/card.json 200 false", "https://twice.example/card.json 304 true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observations (-want +got):\n%s", diff)
	}
}

package discover_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/store"
)

const cardSchema = `"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"`

// inlineCard is a catalog entry holding a card with the given remote URLs.
func inlineCard(id string, urls ...string) string {
	var rs []string
	for _, u := range urls {
		rs = append(rs, fmt.Sprintf(`{"type":"streamable-http","url":%q}`, u))
	}
	return fmt.Sprintf(`{"identifier":%q,"type":"application/mcp-server-card+json","data":{%s,"name":"com.example/%s","version":"1.0.0","description":"d","remotes":[%s]}}`,
		id, cardSchema, id, strings.Join(rs, ","))
}

func catalogOf(entries ...string) string {
	return `{"specVersion":"1.0","entries":[` + strings.Join(entries, ",") + `]}`
}

func nestedInline(id string, entries ...string) string {
	return fmt.Sprintf(`{"identifier":%q,"type":"application/ai-catalog+json","data":%s}`, id, catalogOf(entries...))
}

func boundsWeb() []byte {
	var b strings.Builder
	add := func(path, body string) { fmt.Fprintf(&b, "-- %s --\n%s\n", path, body) }
	add("remotes.example/.well-known/ai-catalog.json", catalogOf(inlineCard("many",
		"https://r1.example/mcp", "https://r2.example/mcp", "https://r3.example/mcp", "https://r4.example/mcp", "https://r5.example/mcp")))
	add("cards.example/.well-known/ai-catalog.json", catalogOf(
		inlineCard("c1", "https://c1.example/mcp"), inlineCard("c2", "https://c2.example/mcp"), inlineCard("c3", "https://c3.example/mcp"),
		`{"identifier":"c4","type":"application/mcp-server-card+json","url":"https://cards.example/c4"}`))
	add("catalogs.example/.well-known/ai-catalog.json", catalogOf(
		nestedInline("n1", inlineCard("k1")), nestedInline("n2", inlineCard("k2")), nestedInline("n3", inlineCard("k3")),
		`{"identifier":"n4","type":"application/ai-catalog+json","url":"https://catalogs.example/n4.json"}`))
	add("plain.example/.well-known/ai-catalog.json", catalogOf(inlineCard("p1", "https://p1.example/mcp")))
	return []byte(b.String())
}

// TestDomainCaps: a domain that declares more than the caps allow is cut
// at each cap with a finding, recorded as capped, and nothing past the cap
// is fetched or stored; other domains in the run are untouched.
func TestDomainCaps(t *testing.T) {
	w := newWorld(t, boundsWeb())
	opts := w.options()
	opts.FollowLinks, opts.LegacyPaths = false, false
	opts.MaxRemotes, opts.MaxCards, opts.MaxCatalogs = 3, 2, 3
	sum := w.crawl(context.Background(), opts, "remotes.example", "cards.example", "catalogs.example", "plain.example")

	rows, err := w.store.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Capped   []string
		Cards    int
		Remotes  int
		Findings []string
	}
	gotRows := map[string]got{}
	for _, r := range rows {
		gotRows[r.Domain] = got{r.Capped, r.Cards, r.Remotes, r.CatalogFindings}
	}
	want := map[string]got{
		"remotes.example":  {[]string{"remotes"}, 1, 3, nil},
		"cards.example":    {[]string{"cards"}, 2, 2, []string{"cards_truncated"}},
		"catalogs.example": {[]string{"catalogs"}, 2, 0, []string{"catalogs_truncated"}},
		"plain.example":    {nil, 1, 1, nil},
	}
	if diff := cmp.Diff(want, gotRows); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"remotes": 1, "cards": 1, "catalogs": 1}, sum.Capped); diff != "" {
		t.Errorf("summary capped (-want +got):\n%s", diff)
	}
	// The card keeps the remotes that were stored, and says so.
	var findings, cardJSON string
	if err := w.store.SQL().QueryRow(`SELECT findings, json FROM cards WHERE name = 'com.example/many'`).Scan(&findings, &cardJSON); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(findings, "remotes_truncated") || strings.Contains(cardJSON, "r4.example") {
		t.Errorf("card findings %s, card %s: want remotes_truncated and only the first 3 remotes", findings, cardJSON)
	}
	for _, host := range []string{"cards.example", "catalogs.example"} {
		if reqs := w.web.Requests(host); len(reqs) != 1 {
			t.Errorf("%d requests to %s, want only the catalog (the rest is past the cap)", len(reqs), host)
		}
	}
}

// probeCapWeb: one domain lists three live MCP servers, one a server that
// never answers.
var probeCapWeb = []byte(`
-- three.example/.well-known/ai-catalog.json --
` + catalogOf(inlineCard("three", "https://m1.example/mcp", "https://m2.example/mcp", "https://m3.example/mcp")) + `
-- m1.example/mcp --
SIMWEB-MCP go-sdk-stateful name=m1 version=1.0.0 tools=1
-- m2.example/mcp --
SIMWEB-MCP go-sdk-stateful name=m2 version=1.0.0 tools=1
-- m3.example/mcp --
SIMWEB-MCP go-sdk-stateful name=m3 version=1.0.0 tools=1
-- hangs.example/.well-known/ai-catalog.json --
` + catalogOf(inlineCard("hangs", "https://silent.example/mcp")) + `
-- silent.example/mcp --
HTTP 200
Content-Type: application/json
Simweb-Behavior: hang

{}
`)

// TestProbeCapPerDomain: a domain causes at most MaxPerDomain probes a run;
// the rest are recorded as probe_cap and probed on the next crawl, once
// those probed now are fresh.
func TestProbeCapPerDomain(t *testing.T) {
	w := newWorld(t, probeCapWeb)
	opts := w.options()
	opts.Force = true
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, MaxPerDomain: 2, Prober: probe.New(probe.Options{Fetch: w.fetch})}
	sum := w.crawl(context.Background(), opts, "three.example")
	if diff := cmp.Diff(map[string]int{"ok": 2}, sum.Probes); diff != "" {
		t.Errorf("first run probes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"probe_cap": 1}, sum.ProbeSkips); diff != "" {
		t.Errorf("first run skips (-want +got):\n%s", diff)
	}
	if rows, _ := w.store.Domains(context.Background()); len(rows) != 1 || !cmp.Equal(rows[0].Capped, []string{"probes"}) {
		t.Errorf("domain rows %+v, want capped [probes]", rows)
	}
	sum = w.crawl(context.Background(), opts, "three.example")
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" {
		t.Errorf("second run probes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"fresh": 2}, sum.ProbeSkips); diff != "" {
		t.Errorf("second run skips (-want +got):\n%s", diff)
	}
	if rows, _ := w.store.Domains(context.Background()); len(rows) != 1 || rows[0].Capped != nil {
		t.Errorf("domain rows %+v, want no caps after a crawl within them", rows)
	}
}

// TestDomainTimeoutCoversProbes: a domain's time limit covers its probes;
// a probe the limit cut is not stored as the endpoint's outcome, the
// decision says why, and the domain is recorded as capped by time.
func TestDomainTimeoutCoversProbes(t *testing.T) {
	w := newWorld(t, probeCapWeb)
	opts := w.options()
	// Shorter than the client's 2 s request timeout, so the domain's limit
	// is what ends the probe of the host that never answers.
	opts.DomainTimeout = 300 * time.Millisecond
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: w.fetch})}
	sum := w.crawl(context.Background(), opts, "hangs.example")
	if len(sum.Probes) != 0 || sum.Interrupted {
		t.Errorf("probes %v, interrupted %v; want none stored and a finished run", sum.Probes, sum.Interrupted)
	}
	// Decided to probe, then cut: the later decision says why there is no
	// probe, so the remote is not taken for unfinished work.
	var got []string
	rows, err := w.store.SQL().Query(`SELECT decision || ':' || reason FROM probe_decisions WHERE run_id = ? ORDER BY id`, sum.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	rows.Close()
	if diff := cmp.Diff([]string{"probe:warranted", "skip:domain_timeout"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if rows, _ := w.store.Domains(context.Background()); len(rows) != 1 || !cmp.Equal(rows[0].Capped, []string{"time"}) {
		t.Errorf("domain rows %+v, want capped [time]", rows)
	}
	if n := len(w.web.Requests("silent.example")); n != 1 {
		t.Errorf("%d requests to the silent server, want the one the limit cut", n)
	}
}

// TestConcurrentRunDecidesOnlyItsOwn: a run decides about the remotes of
// the domains it crawled, and finishes those that runs no longer running
// left; a --probe never run does not mark a running run's remotes
// probe_disabled.
func TestConcurrentRunDecidesOnlyItsOwn(t *testing.T) {
	w := newWorld(t, probeWeb, boundsWeb())
	opts := w.options()
	first := w.crawl(context.Background(), opts, "a.example")
	// a.example saved by a run that is still going (this process), its
	// remotes not yet decided.
	host, _ := os.Hostname()
	w.exec(`DELETE FROM probe_decisions`)
	w.exec(`UPDATE runs SET status = 'running', host = ?, pid = ? WHERE id = ?`, host, os.Getpid(), first.RunID)

	sum := w.crawl(context.Background(), opts, "plain.example")
	if diff := cmp.Diff(map[string]string{"https://p1.example/mcp": "skip:probe_disabled"}, w.decisions(sum.RunID)); diff != "" {
		t.Errorf("decisions of a run next to a running one (-want +got):\n%s", diff)
	}
	w.exec(`UPDATE runs SET status = 'interrupted' WHERE id = ?`, first.RunID)
	sum = w.crawl(context.Background(), opts, "plain.example")
	if diff := cmp.Diff(map[string]string{"https://mcp.weather.example/mcp": "skip:probe_disabled"}, w.decisions(sum.RunID)); diff != "" {
		t.Errorf("decisions once that run stopped (-want +got):\n%s", diff)
	}
}

// TestDomainsReadWhileCrawling: a domain written to a pipe is crawled
// before the pipe is closed: the list is read as it comes, not slurped.
func TestDomainsReadWhileCrawling(t *testing.T) {
	w := newWorld(t, boundsWeb())
	opts := w.options()
	crawled := make(chan string, 4)
	opts.Progress = func(p discover.Progress) { crawled <- p.Domain }
	pr, pw := io.Pipe()
	type result struct {
		sum discover.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := discover.Crawl(context.Background(), opts, discover.ReadDomains(pr))
		done <- result{sum, err}
	}()
	if _, err := io.WriteString(pw, "plain.example\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-crawled:
		if d != "plain.example" {
			t.Errorf("crawled %q, want plain.example", d)
		}
	case r := <-done:
		t.Fatalf("the crawl ended before its input did: %+v, %v", r.sum, r.err)
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("the domain was not crawled while the list was still open")
	}
	pw.Close()
	r := <-done
	if r.err != nil || r.sum.Crawled != 1 {
		t.Errorf("summary %+v, err %v; want one domain crawled", r.sum, r.err)
	}
}

// TestInputBookkeeping: a name listed twice is crawled once, and junk
// lines are counted, with only the first few kept as examples.
func TestInputBookkeeping(t *testing.T) {
	w := newWorld(t, boundsWeb())
	names := []string{"plain.example", "PLAIN.example", "https://plain.example/"}
	for i := range 25 {
		names = append(names, fmt.Sprintf("bad name %d", i))
	}
	sum := w.crawl(context.Background(), w.options(), names...)
	if sum.Crawled != 1 || sum.Duplicates != 2 || sum.Requested != len(names) {
		t.Errorf("crawled %d, duplicates %d, requested %d; want 1, 2, %d", sum.Crawled, sum.Duplicates, sum.Requested, len(names))
	}
	if sum.InvalidCount != 25 || len(sum.Invalid) != 10 || sum.Invalid[0] != "bad name 0" {
		t.Errorf("invalid %d, examples %q; want 25 and the first 10", sum.InvalidCount, sum.Invalid)
	}
	if rows, _ := w.store.Domains(context.Background()); len(rows) != 1 || rows[0].State != store.StateDone {
		t.Errorf("domains %+v", rows)
	}
}

// failingReader yields its text, then an error instead of the end.
type failingReader struct{ text string }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.text == "" {
		return 0, fmt.Errorf("disk on fire")
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}

// TestUnreadableListStopsTakingDomains: a list that cannot be read to the
// end is an input error; what was read before is crawled and saved.
func TestUnreadableListStopsTakingDomains(t *testing.T) {
	w := newWorld(t, boundsWeb())
	sum, err := discover.Crawl(context.Background(), w.options(), discover.ReadDomains(&failingReader{"plain.example\n"}))
	if !errors.Is(err, discover.ErrInput) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v, want an input error saying why", err)
	}
	if sum.Crawled != 1 || sum.Interrupted {
		t.Errorf("summary %+v, want the one domain read crawled", sum)
	}
}

// TestCardsKeptPastTheCapAreBounded: a card entry past the cap keeps its
// earlier listings (it was not looked at), but only as many as the cap:
// a catalog that puts new cards first must not add a cap's worth of
// active cards with every crawl.
func TestCardsKeptPastTheCapAreBounded(t *testing.T) {
	w := newWorld(t)
	var order []string // the catalog's cards, by id
	var mu sync.Mutex
	w.web.Handle("rot.example", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/.well-known/ai-catalog.json" {
			var es []string
			for _, id := range order {
				es = append(es, fmt.Sprintf(`{"identifier":%q,"type":"application/mcp-server-card+json","url":"https://rot.example/c/%s"}`, id, id))
			}
			rw.Header().Set("Content-Type", "application/json")
			io.WriteString(rw, catalogOf(es...))
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/c/")
		rw.Header().Set("Content-Type", "application/mcp-server-card+json")
		fmt.Fprintf(rw, `{%s,"name":"com.example/%s","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://mcp.rot.example/%s"}]}`,
			cardSchema, id, id)
	}))
	opts := w.options()
	opts.FollowLinks, opts.LegacyPaths = false, false
	opts.MaxCards, opts.Force = 2, true
	active := func() []string {
		var ids []string
		for k := range w.pairs(`SELECT DISTINCT card_key, '' FROM listings WHERE domain = 'rot.example' AND active = 1`) {
			ids = append(ids, strings.TrimPrefix(k, "https://rot.example/c/"))
		}
		slices.Sort(ids)
		return ids
	}
	for _, step := range []struct {
		order, want []string
	}{
		{[]string{"a", "b"}, []string{"a", "b"}},
		// c and d are read; a and b, past the cap, are kept.
		{[]string{"c", "d", "a", "b"}, []string{"a", "b", "c", "d"}},
		// e and f are read; c and d are kept; a and b, past as many kept
		// as the cap, are gone.
		{[]string{"e", "f", "c", "d", "a", "b"}, []string{"c", "d", "e", "f"}},
	} {
		mu.Lock()
		order = step.order
		mu.Unlock()
		w.crawl(context.Background(), opts, "rot.example")
		if diff := cmp.Diff(step.want, active()); diff != "" {
			t.Errorf("catalog %v: active cards (-want +got):\n%s", step.order, diff)
		}
	}
}

// TestFreshnessFloor: a catalog that asks to be fetched again within the
// minute is not due again for an hour.
func TestFreshnessFloor(t *testing.T) {
	w := newWorld(t)
	w.web.Handle("eager.example", http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/ai-catalog.json" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(rw, catalogOf(inlineCard("e", "https://mcp.eager.example/mcp")))
	}))
	opts := w.options()
	opts.FollowLinks, opts.LegacyPaths = false, false
	before := time.Now()
	w.crawl(context.Background(), opts, "eager.example")
	var at string
	if err := w.store.SQL().QueryRow(`SELECT next_fetch_after FROM domains WHERE domain = 'eager.example'`).Scan(&at); err != nil {
		t.Fatal(err)
	}
	next, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		t.Fatal(err)
	}
	if d := next.Sub(before); d < time.Hour || d > 2*time.Hour {
		t.Errorf("due again %v after the crawl, want an hour", d)
	}
}

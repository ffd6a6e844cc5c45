package discover_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
)

// probeWeb: two domains list the same real go-sdk MCP server (one with a
// trailing slash), and a card with a templated, a plain-http and a refused
// remote next to it.
var probeWeb = []byte(`
-- a.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"a","type":"application/mcp-server-card+json","url":"https://cards.example.org/weather"}]}
-- b.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"b","type":"application/mcp-server-card+json","data":{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/weather-mirror","version":"9.9.9","description":"The same endpoint, listed again","remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp/"},{"type":"streamable-http","url":"https://{tenant}.weather.example/mcp"},{"type":"streamable-http","url":"http://plain.weather.example/mcp"},{"type":"streamable-http","url":"https://10.0.0.5/mcp"}]}}]}
-- cards.example.org/weather --
{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/weather","version":"1.0.0","description":"Weather","remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp"}]}
-- mcp.weather.example/mcp --
SIMWEB-MCP go-sdk-stateful name=weather-live version=1.0.1 tools=3
`)

func (w *world) decisions(runID int64) map[string]string {
	return w.decisionsAs(runID, `decision || ':' || reason`)
}

// decisionsAs maps each URL decided in a run to the SQL expression what.
func (w *world) decisionsAs(runID int64, what string) map[string]string {
	w.t.Helper()
	rows, err := w.store.SQL().Query(`SELECT url, `+what+` FROM probe_decisions WHERE run_id = ?`, runID)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var u, d string
		if err := rows.Scan(&u, &d); err != nil {
			w.t.Fatal(err)
		}
		if _, dup := out[u]; dup {
			w.t.Errorf("two decisions for %s in run %d", u, runID)
		}
		out[u] = d
	}
	return out
}

func TestProbePhase(t *testing.T) {
	w := newWorld(t, probeWeb)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	opts := w.options()
	clock := func() time.Time { return now }
	opts.Now = clock
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: w.fetch, Now: clock})}

	sum := w.crawl(context.Background(), opts, "a.example", "b.example")
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}
	// The endpoint is decided once (whichever card came first), the rest skipped with reasons.
	got := w.decisions(sum.RunID)
	var live string
	for _, u := range []string{"https://mcp.weather.example/mcp", "https://mcp.weather.example/mcp/"} {
		if d, ok := got[u]; ok {
			live = d
			delete(got, u)
		}
	}
	if live != "probe:warranted" {
		t.Errorf("live endpoint decision %q, want probe:warranted", live)
	}
	want := map[string]string{
		"https://{tenant}.weather.example/mcp": "skip:placeholder",
		"http://plain.weather.example/mcp":     "skip:plain_http",
		"https://10.0.0.5/mcp":                 "skip:blocked_address",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	rows, err := w.store.Probes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ServerName != "weather-live" || rows[0].ToolCount == nil || *rows[0].ToolCount != 3 {
		t.Fatalf("probes = %+v", rows)
	}

	// Re-crawled within the max age: fresh, not probed again.
	opts.Force = true
	sum = w.crawl(context.Background(), opts, "a.example", "b.example")
	if len(sum.Probes) != 0 || sum.ProbeSkips["fresh"] != 1 {
		t.Errorf("second run probes %v skips %v, want none and one fresh", sum.Probes, sum.ProbeSkips)
	}

	// The card changed since the last probe (as if it had been edited): due again.
	if _, err := w.store.SQL().Exec(`UPDATE probes SET card_sha256 = 'an older card'`); err != nil {
		t.Fatal(err)
	}
	sum = w.crawl(context.Background(), opts, "a.example", "b.example")
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" {
		t.Errorf("after a card change, probes (-want +got):\n%s", diff)
	}

	// A day later it is due again.
	now = now.Add(25 * time.Hour)
	sum = w.crawl(context.Background(), opts, "a.example", "b.example")
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" {
		t.Errorf("third run probes (-want +got):\n%s", diff)
	}
	if n := len(w.web.Requests("10.0.0.5")) + len(w.web.Requests("plain.weather.example")); n != 0 {
		t.Errorf("%d requests reached skipped endpoints", n)
	}
}

func TestProbeNeverRecordsDecisions(t *testing.T) {
	w := newWorld(t, probeWeb)
	sum := w.crawl(context.Background(), w.options(), "a.example")
	if diff := cmp.Diff(map[string]string{"https://mcp.weather.example/mcp": "skip:probe_disabled"}, w.decisions(sum.RunID)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if n := len(w.web.Requests("mcp.weather.example")); n != 0 {
		t.Errorf("%d requests to the MCP server with --probe never", n)
	}
}

// TestProbeNeverDecidesOnce: under --probe never a domain's decisions are
// written with its result, without a look-up first; an endpoint a domain
// crawled earlier in the run decided (b.example lists a.example's again)
// still gets one decision in the run, and the summary counts it once.
func TestProbeNeverDecidesOnce(t *testing.T) {
	w := newWorld(t, probeWeb)
	opts := w.options()
	opts.Concurrency = 1 // a.example's result is saved before b.example decides
	sum := w.crawl(context.Background(), opts, "a.example", "b.example")
	got := w.decisions(sum.RunID) // fails on two decisions for one URL
	if _, ok := got["https://mcp.weather.example/mcp"]; !ok {
		t.Errorf("decisions %v: none for a.example's endpoint", got)
	}
	if _, ok := got["https://mcp.weather.example/mcp/"]; ok {
		t.Errorf("decisions %v: b.example's spelling of the same endpoint decided again", got)
	}
	skips := 0
	for _, n := range sum.ProbeSkips {
		skips += n
	}
	if skips != len(got) {
		t.Errorf("summary counts %d skips (%v), the run recorded %d decisions", skips, sum.ProbeSkips, len(got))
	}
}

// TestProbesResumeAfterInterruption: a run killed after saving its
// domains but before deciding their remotes leaves them undecided, and one
// stopped mid-probe leaves a decision to probe without a probe; the next
// run finishes both even though the domains are fresh.
func TestProbesResumeAfterInterruption(t *testing.T) {
	w := newWorld(t, probeWeb)
	opts := w.options()
	opts.Probe = discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: w.fetch})}
	first := w.crawl(context.Background(), opts, "a.example", "b.example")
	// The state a kill -9 between saving the domains and deciding leaves.
	w.exec(`DELETE FROM probe_decisions`)
	w.exec(`DELETE FROM probes`)
	w.exec(`DELETE FROM probe_outcomes`) // written with each probe, in its transaction
	w.exec(`UPDATE runs SET status = 'abandoned' WHERE id = ?`, first.RunID)

	sum := w.crawl(context.Background(), opts, "a.example", "b.example")
	if sum.Crawled != 0 || sum.Fresh != 2 {
		t.Errorf("second run crawled %d, fresh %d; want 0 and 2", sum.Crawled, sum.Fresh)
	}
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" {
		t.Errorf("second run probes (-want +got):\n%s", diff)
	}
	if got := w.decisions(sum.RunID); len(got) != 4 {
		t.Errorf("second run decided %d remotes, want all 4: %v", len(got), got)
	}

	// The first run was settled by the second. The state Ctrl-C mid-probe
	// leaves: decided to probe, no probe stored, the run that crawled the
	// domains stopped and not settled.
	var settled bool
	if err := w.store.SQL().QueryRow(`SELECT settled FROM runs WHERE id = ?`, first.RunID).Scan(&settled); err != nil || !settled {
		t.Errorf("first run settled = %v, %v; want true once its leftovers are done", settled, err)
	}
	w.exec(`DELETE FROM probes`)
	w.exec(`DELETE FROM probe_outcomes`) // written with each probe, in its transaction
	w.exec(`UPDATE runs SET status = 'interrupted', settled = 0 WHERE id = ?`, first.RunID)
	sum = w.crawl(context.Background(), opts, "a.example", "b.example")
	if diff := cmp.Diff(map[string]int{"ok": 1}, sum.Probes); diff != "" || len(sum.ProbeSkips) != 0 {
		t.Errorf("third run probes %v, skips %v; want the one unfinished probe only", sum.Probes, sum.ProbeSkips)
	}

	// Nothing is left pending: a fourth run has nothing to do.
	sum = w.crawl(context.Background(), opts, "a.example", "b.example")
	if len(sum.Probes) != 0 || len(sum.ProbeSkips) != 0 {
		t.Errorf("fourth run probes %v skips %v, want nothing", sum.Probes, sum.ProbeSkips)
	}
}

// exec runs a statement against the store directly, to set up the states
// an interrupted or concurrent run leaves.
func (w *world) exec(query string, args ...any) {
	w.t.Helper()
	if _, err := w.store.SQL().Exec(query, args...); err != nil {
		w.t.Fatalf("%s: %v", query, err)
	}
}

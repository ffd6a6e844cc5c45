package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// hostileWorld is the hostile web of internal/simweb, served from this
// process, and the flags a crawl of it needs.
type hostileWorld struct {
	web     *simweb.Web
	net     []string // --connect-to, --ca-cert
	domains string   // a file listing every hostile domain
	dir     string
}

func newHostileWorld(tb testing.TB) *hostileWorld {
	tb.Helper()
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	domains, err := web.AddHostile(simweb.HostileOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	dir, ca := startWithCA(tb, web)
	w := &hostileWorld{web: web, dir: dir}
	w.net = []string{"--connect-to", web.ConnectTo(), "--ca-cert", ca}
	w.domains = filepath.Join(w.dir, "domains.txt")
	if err := os.WriteFile(w.domains, []byte(strings.Join(domains, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return w
}

// proc is one finished cardcrawl process.
type proc struct {
	args           []string
	code           int
	stdout, stderr string
	maxRSSKiB      int64
	wall           time.Duration
}

// runProcs runs each argument list as its own cardcrawl process (this test
// binary standing in for it), all at once, and waits for all of them.
func runProcs(tb testing.TB, argss ...[]string) []proc {
	tb.Helper()
	out := make([]proc, len(argss))
	var wg sync.WaitGroup
	for i, args := range argss {
		wg.Go(func() {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "CARDCRAWL_TEST_MAIN=1")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			p := proc{args: args, stdout: stdout.String(), stderr: stderr.String(), wall: time.Since(start), code: -1}
			if cmd.ProcessState != nil {
				p.code = cmd.ProcessState.ExitCode()
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					p.maxRSSKiB = ru.Maxrss // KiB on Linux
				}
			} else {
				p.stderr += err.Error()
			}
			out[i] = p
		})
	}
	wg.Wait()
	return out
}

// hostileCaps says which caps a hostile domain must hit (need), which
// it may hit too (may), and whether its probing must end at one of the
// probe bounds (the per-domain probe cap or the domain's time limit):
// which of the two comes first depends on how fast the machine validates a
// 1 MiB card or makes new TLS connections, and either is the right record.
type hostileCaps struct {
	need, may []string
	probeEnd  bool
}

// hostileExpect is how each hostile domain must end: outcome, failure
// class and caps. 16 probes of hosts that never answer take 16 request
// limits, more than one domain limit, so sse-hang always ends at its time
// limit; nested meets its catalog and card caps before anything else.
var hostileExpect = map[string]struct {
	outcome, class string
	caps           hostileCaps
}{
	"many-remotes.hostile.example":      {"catalog", "", hostileCaps{need: []string{"remotes"}, probeEnd: true}},
	"thousand-hosts.hostile.example":    {"catalog", "", hostileCaps{need: []string{"remotes"}, probeEnd: true}},
	"sse-hang.hostile.example":          {"catalog", "", hostileCaps{need: []string{"remotes", "time"}}},
	"nested.hostile.example":            {"catalog", "", hostileCaps{need: []string{"cards", "catalogs"}, may: []string{"probes", "time"}}},
	"escapes.hostile.example":           {"catalog", "", hostileCaps{}},
	"csv-formulas.hostile.example":      {"catalog", "", hostileCaps{}},
	"bad-schemes.hostile.example":       {"catalog", "", hostileCaps{}},
	"port-22.hostile.example":           {"catalog", "", hostileCaps{}},
	"teredo.hostile.example":            {"catalog", "", hostileCaps{}},
	"draft-server-json.hostile.example": {"catalog", "", hostileCaps{}},
	"gzip-bomb.hostile.example":         {"failed", "too_large", hostileCaps{}},
	"trickle.hostile.example":           {"failed", "timeout", hostileCaps{}},
	"redirect-loop.hostile.example":     {"failed", "redirect_limit", hostileCaps{}},
	"private-redirect.hostile.example":  {"catalog", "", hostileCaps{}},
	"wrong-host-cert.hostile.example":   {"failed", "tls", hostileCaps{}},
	"expired-cert.hostile.example":      {"failed", "tls", hostileCaps{}},
	"sse-no-endpoint.hostile.example":   {"catalog", "", hostileCaps{}},
}

// check reports what is wrong with the caps a domain hit.
func (c hostileCaps) check(got []string) string {
	for _, n := range c.need {
		if !slices.Contains(got, n) {
			return "missing " + n
		}
	}
	for _, g := range got {
		if !slices.Contains(c.need, g) && !slices.Contains(c.may, g) && !(c.probeEnd && (g == "probes" || g == "time")) {
			return "unexpected " + g
		}
	}
	if c.probeEnd && !slices.Contains(got, "probes") && !slices.Contains(got, "time") {
		return "probing ended at neither the probe cap nor the time limit"
	}
	return ""
}

// hostileTestFlags keep the default test to seconds: a 3 s request limit
// (the trickle, the hanging and silent SSE servers), a 12 s domain limit
// (sse-hang's 16 probes need 48 s; every other domain needs well under a
// second, and both limits leave room for a loaded 2-core machine running
// four crawls at once) and 10 catalogs per domain (nested). The benchmark
// crawls with the defaults, and the same expectations hold.
var hostileTestFlags = []string{"--timeout", "3s", "--domain-timeout", "12s", "--max-catalogs", "10"}

func (w *hostileWorld) crawlArgs(db string, extra ...string) []string {
	args := append([]string{"crawl", "--db", db, "--domains", w.domains, "--json"}, w.net...)
	return append(args, extra...)
}

// TestHostileWebCrawledTwiceInParallel crawls every case of the hostile
// web (simweb.HostileCases: issue 7 and the earlier review) with two
// cardcrawl processes at once into two databases, while two more start at
// the same time on one shared database (one crawls, the other is refused
// with exit 3: crawls take turns), then syncs the hostile Registry double
// into both: every crawl ends 0, every domain ends classified with its
// expected outcome, class and caps, every remote has a decision and every
// probe an outcome of the vocabulary, and what is read back out is safe.
// Peak memory is what BenchmarkHostileCrawl reports.
func TestHostileWebCrawledTwiceInParallel(t *testing.T) {
	if raceEnabled {
		// Four crawl processes and the web, all under the race detector,
		// take longer than the 3 s request limit to shake hands on a
		// 2-core machine; the crawl, the web and the output paths it
		// drives are race-tested in-process by their own packages.
		t.Skip("request limits are too short for four crawls under the race detector")
	}
	w := newHostileWorld(t)
	a, b, shared := filepath.Join(w.dir, "a.db"), filepath.Join(w.dir, "b.db"), filepath.Join(w.dir, "shared.db")
	procs := runProcs(t,
		w.crawlArgs(a, hostileTestFlags...), w.crawlArgs(b, hostileTestFlags...),
		w.crawlArgs(shared, hostileTestFlags...), w.crawlArgs(shared, hostileTestFlags...))
	crawled, busy := procs[2], procs[3]
	if crawled.code == exitBusy {
		crawled, busy = busy, crawled
	}
	if busy.code != exitBusy {
		t.Errorf("two crawls on one database both ran (exit %d and %d), want one refused with exit %d", crawled.code, busy.code, exitBusy)
	} else if !strings.HasPrefix(busy.stderr, "cardcrawl: another cardcrawl process is crawling this database (crawl, pid ") ||
		strings.Count(busy.stderr, "\n") != 1 || busy.stdout != "" {
		t.Errorf("the refused crawl said:\nstdout: %s\nstderr: %s", busy.stdout, busy.stderr)
	}
	for _, p := range []proc{procs[0], procs[1], crawled} {
		if p.code != exitOK {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", strings.Join(p.args[:3], " "), p.code, p.stdout, p.stderr)
		}
		t.Logf("%s: %s, peak RSS %d MiB", p.args[2], p.wall.Round(time.Millisecond), p.maxRSSKiB>>10)
	}
	for _, db := range []string{a, b, shared} {
		t.Run(filepath.Base(db), func(t *testing.T) { checkHostileDB(t, db) })
	}
	t.Run("shared runs", func(t *testing.T) {
		statuses := queryStrings(t, openRead(t, shared), `SELECT status FROM runs ORDER BY id`)
		if diff := cmp.Diff([]string{"done"}, statuses); diff != "" {
			t.Errorf("runs on the shared database (-want +got):\n%s", diff)
		}
	})

	// The hostile Registry double, synced into both databases at once.
	syncArgs := func(db string) []string {
		return append([]string{"registry", "sync", "--db", db, "--url", simweb.HostileRegistryURL}, w.net...)
	}
	for _, p := range runProcs(t, syncArgs(a), syncArgs(b)) {
		if p.code != exitOK {
			t.Fatalf("registry sync: exit %d\n%s%s", p.code, p.stdout, p.stderr)
		}
		assertTerminalSafe(t, "registry sync", p.stdout)
	}
	checkHostileOutput(t, a)
}

// openRead opens a database the test only reads.
func openRead(t testing.TB, path string) *store.DB {
	t.Helper()
	st, err := store.Open(context.Background(), path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// queryStrings runs a query of one text column.
func queryStrings(t testing.TB, st *store.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := st.SQL().Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkHostileDB asserts every hostile domain ended classified as
// hostileExpect says, every remote has a decision, every probe and failed
// fetch a class of the vocabulary, and the address and port rules held.
func checkHostileDB(t testing.TB, path string) {
	t.Helper()
	st := openRead(t, path)
	rows, err := st.Domains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		want, ok := hostileExpect[r.Domain]
		if !ok {
			t.Errorf("unexpected domain %s", r.Domain)
			continue
		}
		seen[r.Domain] = true
		caps := slices.Sorted(slices.Values(r.Capped))
		if r.State != "done" || r.Outcome == "" || (r.Outcome == store.OutcomeFailed) != (r.Class != "") {
			t.Errorf("%s: state %q outcome %q class %q: not classified", r.Domain, r.State, r.Outcome, r.Class)
		}
		if r.Class != "" {
			if _, ok := failure.Of(failure.Class(r.Class)); !ok {
				t.Errorf("%s: class %q is not in the vocabulary", r.Domain, r.Class)
			}
		}
		if got := r.Outcome + "/" + r.Class; got != want.outcome+"/"+want.class {
			t.Errorf("%s: %s, want %s/%s (%s)", r.Domain, got, want.outcome, want.class, r.Reason)
		}
		if bad := want.caps.check(caps); bad != "" {
			t.Errorf("%s: capped %v: %s", r.Domain, caps, bad)
		}
	}
	for d := range hostileExpect {
		if !seen[d] {
			t.Errorf("%s: not recorded", d)
		}
	}

	// Every remote listed has a decision; every probe an outcome.
	if undecided := queryStrings(t, st, `SELECT DISTINCT l.remote_norm FROM listings l WHERE l.active = 1 AND l.remote_norm <> ''
		AND NOT EXISTS (SELECT 1 FROM probe_decisions pd WHERE pd.remote_norm = l.remote_norm)`); len(undecided) > 0 {
		t.Errorf("%d remotes without a probe decision, e.g. %s", len(undecided), undecided[0])
	}
	outcomes := map[string]bool{}
	for _, o := range failure.Outcomes() {
		outcomes[string(o)] = true
	}
	for _, o := range queryStrings(t, st, `SELECT DISTINCT outcome FROM probes`) {
		if !outcomes[o] {
			t.Errorf("probe outcome %q is not in the vocabulary", o)
		}
	}
	if n := queryStrings(t, st, `SELECT COUNT(*) FROM probe_decisions WHERE reason = ''`); n[0] != "0" {
		t.Errorf("%s probe decisions without a reason", n[0])
	}
	for _, c := range queryStrings(t, st, `SELECT DISTINCT class FROM observations WHERE class <> ''`) {
		if _, ok := failure.Of(failure.Class(c)); !ok {
			t.Errorf("observation class %q is not in the vocabulary", c)
		}
	}
	// The caps held: no card kept more remotes, no domain more cards.
	var most int
	if err := st.SQL().QueryRow(`SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(DISTINCT remote_norm) AS n FROM listings GROUP BY card_key)`).Scan(&most); err != nil || most > 32 {
		t.Errorf("a card kept %d remotes (%v), want at most 32", most, err)
	}
	decisions := func(like string) []string {
		return queryStrings(t, st, `SELECT DISTINCT decision || ':' || reason FROM probe_decisions WHERE url LIKE ? ORDER BY 1`, like)
	}
	for like, want := range map[string][]string{
		"https://port-22.hostile.example:22/%": {"skip:blocked_port"},
		"https://[2001:0:%":                    {"skip:blocked_address"},
	} {
		if diff := cmp.Diff(want, decisions(like)); diff != "" {
			t.Errorf("decisions about %s (-want +got):\n%s", like, diff)
		}
	}
	got := queryStrings(t, st, `SELECT class || ' ' || COUNT(DISTINCT url) FROM observations
		WHERE domain = 'private-redirect.hostile.example' AND kind = 'card' GROUP BY class ORDER BY class`)
	if diff := cmp.Diff([]string{"blocked_address 11", "blocked_scheme 1"}, got); diff != "" {
		t.Errorf("private-redirect cards (-want +got):\n%s", diff)
	}
}

// checkHostileOutput reads the crawled hostile web back out: tables are
// terminal-safe, the CSV feed starts no cell with a formula, and no feed
// republishes a link that is not http(s).
func checkHostileOutput(t *testing.T, db string) {
	t.Helper()
	for _, args := range [][]string{{"servers"}, {"domains"}, {"probes"}, {"registry", "entries"}, {"diff"}, {"namespaces"}} {
		code, stdout, stderr := run(t, "", append(args, "--db", db)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", args[0], code, stderr)
		}
		assertTerminalSafe(t, strings.Join(args, " "), stdout)
	}
	code, stdout, stderr := run(t, "", "export", "--format", "csv", "--db", db)
	if code != exitOK {
		t.Fatalf("export csv: exit %d: %s", code, stderr)
	}
	records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	formulas := 0
	for _, rec := range records {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("CSV cell %q would run as a formula", cell)
			}
			if strings.HasPrefix(cell, "'=") || strings.HasPrefix(cell, "'@") {
				formulas++
			}
		}
	}
	if formulas == 0 {
		t.Error("the CSV feed shows no neutralised formula: the csv-formulas case was not exported")
	}
	for _, format := range []string{"json", "jsonl", "ai-catalog"} {
		code, stdout, stderr := run(t, "", "export", "--format", format, "--db", db)
		if code != exitOK {
			t.Fatalf("export %s: exit %d: %s", format, code, stderr)
		}
		links := 0
		for _, line := range feedLines(t, format, stdout) {
			eachLink(line, "", func(key, v string) {
				links++
				if !servercard.IsWebURL(v) {
					t.Errorf("export %s republishes %s %q", format, key, v)
				}
			})
		}
		if links == 0 {
			t.Errorf("export %s: no links at all", format)
		}
	}
	checkHostilePage(t, db)
	code, stdout, _ = run(t, "", "registry", "entries", "--db", db, "--json")
	if code != exitOK || !strings.Contains(stdout, "example.hostile/draft-era") || !strings.Contains(stdout, "version_in_version_detail") {
		t.Errorf("registry entries: exit %d; want the draft-era entry stored with its finding:\n%.2000s", code, stdout)
	}
}

// checkHostilePage serves the database and reads the HTML page: the
// markup a card carries is shown as text, never as elements, and the page
// is sent with its CSP.
func checkHostilePage(t *testing.T, db string) {
	t.Helper()
	addr, stop := serveDB(t, db)
	defer stop()
	resp, err := http.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("GET /: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the page does not show the card's markup as text:\n%.3000s", page)
	}
	for _, bad := range []string{"<script", "<img", `href="javascript:`, `src="javascript:`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %q from a card", bad)
		}
	}
}

// feedLines splits a feed into its JSON documents.
func feedLines(t *testing.T, format, out string) []any {
	t.Helper()
	docs := []string{out}
	if format == "jsonl" {
		docs = strings.Split(strings.TrimSpace(out), "\n")
	}
	var vs []any
	for _, d := range docs {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("export %s: %v", format, err)
		}
		vs = append(vs, v)
	}
	return vs
}

// eachLink calls fn for every value in v under a key that holds a link a
// reader would follow.
func eachLink(v any, key string, fn func(key, v string)) {
	switch x := v.(type) {
	case string:
		switch key {
		case "websiteUrl", "url", "src", "cardUrl", "endpoint":
			if x != "" { // an inline card has no URL
				fn(key, x)
			}
		}
	case []any:
		for _, e := range x {
			eachLink(e, key, fn)
		}
	case map[string]any:
		for k, e := range x {
			eachLink(e, k, fn)
		}
	}
}

// BenchmarkHostileCrawl crawls the whole hostile web with two cardcrawl
// processes at once, each into its own database, with every default flag
// (1 MiB bodies, 32 remotes per card, 200 cards and 50 catalogs per
// domain, 16 probes, 15 s per request, 2 minutes per domain), and reports
// the higher of the two peak resident set sizes (a run takes about two
// minutes: sse-hang uses its whole domain limit):
//
//	go test ./cmd/cardcrawl -run '^$' -bench HostileCrawl -benchtime 1x
func BenchmarkHostileCrawl(b *testing.B) {
	w := newHostileWorld(b)
	var peak, wall float64
	for i := range b.N {
		a, c := filepath.Join(w.dir, fmt.Sprintf("a%d.db", i)), filepath.Join(w.dir, fmt.Sprintf("b%d.db", i))
		for _, p := range runProcs(b, w.crawlArgs(a), w.crawlArgs(c)) {
			if p.code != exitOK {
				b.Fatalf("crawl: exit %d\n%s%s", p.code, p.stdout, p.stderr)
			}
			peak = max(peak, float64(p.maxRSSKiB)/1024)
			wall = max(wall, p.wall.Seconds())
		}
		b.StopTimer()
		for _, db := range []string{a, c} {
			checkHostileDB(b, db)
		}
		b.StartTimer()
	}
	b.ReportMetric(peak, "peak-RSS-MiB")
	b.ReportMetric(wall, "wall-s")
}

package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestMain lets the test binary stand in for the cardcrawl binary, so a test
// can run a real crawl process and kill it.
func TestMain(m *testing.M) {
	if os.Getenv("CARDCRAWL_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// hangWeb is a small web whose fourth domain blocks its first request until
// the crawler goes away, and says when that request arrived. The args crawl
// it one domain at a time, so everything before hang.example is committed
// by then.
type hangWeb struct {
	web     *simweb.Web
	hit     chan struct{}
	db      string
	domains []string
	args    []string
}

var (
	hangBefore = []string{"a1.example", "a2.example", "a3.example"}
	hangAfter  = []string{"z1.example", "z2.example"}
	hangCard   = `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/%s","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://mcp.%s/mcp"}]}`
)

func newHangWeb(t *testing.T) *hangWeb {
	t.Helper()
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fixtures strings.Builder
	for _, d := range append(append([]string{}, hangBefore...), hangAfter...) {
		fmt.Fprintf(&fixtures, "-- %s/.well-known/ai-catalog.json --\n{\"specVersion\":\"1.0\",\"entries\":[{\"identifier\":\"x\",\"type\":\"application/mcp-server-card+json\",\"data\":%s}]}\n",
			d, fmt.Sprintf(hangCard, d, d))
	}
	if err := web.AddFixtures([]byte(fixtures.String())); err != nil {
		t.Fatal(err)
	}
	h := &hangWeb{web: web, hit: make(chan struct{})}
	var once sync.Once
	web.Handle("hang.example", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true; close(h.hit) })
		if first {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"specVersion":"1.0","entries":[{"identifier":"h","type":"application/mcp-server-card+json","data":%s}]}`,
			fmt.Sprintf(hangCard, "hang", "hang.example"))
	}))
	dir, ca := startWithCA(t, web)
	h.db = filepath.Join(dir, "k.db")
	h.domains = append(append(append([]string{}, hangBefore...), "hang.example"), hangAfter...)
	h.args = append([]string{"crawl", "--db", h.db, "--connect-to", web.ConnectTo(), "--ca-cert", ca,
		"--concurrency", "1", "--probe", "never", "--timeout", "1m"}, h.domains...)
	return h
}

// start runs the crawl as a separate process and returns once it is blocked
// on hang.example.
func (h *hangWeb) start(t *testing.T, stdout *strings.Builder) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], h.args...)
	cmd.Env = append(os.Environ(), "CARDCRAWL_TEST_MAIN=1")
	cmd.Stdout = stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.hit:
	case <-time.After(30 * time.Second): // a guard against a broken test, not a wait
		cmd.Process.Kill()
		t.Fatal("the crawl never reached hang.example")
	}
	return cmd
}

// TestKilledCrawlResumes kills a crawl process with SIGKILL while it waits on
// a host, then runs the crawl again: the domains finished before the kill
// stay done, the rest are picked up, and nothing is duplicated.
func TestKilledCrawlResumes(t *testing.T) {
	h := newHangWeb(t)
	cmd := h.start(t, &strings.Builder{})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	states := func() map[string]string {
		t.Helper()
		st, err := store.Open(context.Background(), h.db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rows, err := st.Domains(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range rows {
			out[r.Domain] = r.State + "/" + r.Outcome
		}
		return out
	}
	got := states()
	for _, d := range hangBefore {
		if got[d] != "done/catalog" {
			t.Errorf("after the kill, %s is %q, want done/catalog", d, got[d])
		}
	}
	for _, d := range append([]string{"hang.example"}, hangAfter...) {
		if got[d] != "pending/" {
			t.Errorf("after the kill, %s is %q, want pending", d, got[d])
		}
	}

	code, stdout, stderr := run(t, "", h.args...)
	if code != exitOK {
		t.Fatalf("resumed crawl exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "3 domain(s) crawled, 3 fresh") {
		t.Errorf("resumed run should crawl only the 3 left and skip 3 fresh:\n%s", stdout)
	}
	for d, s := range states() {
		if s != "done/catalog" {
			t.Errorf("after resuming, %s is %q, want done/catalog", d, s)
		}
	}
	st, err := store.Open(context.Background(), h.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The killed run could not say how it ended; the next one said it for it.
	statuses := queryStrings(t, st, `SELECT status FROM runs ORDER BY id`)
	if strings.Join(statuses, ",") != "abandoned,done" {
		t.Errorf("run statuses %v, want [abandoned done]", statuses)
	}
	servers, err := st.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != len(h.domains) {
		t.Errorf("%d servers, want one per domain (%d)", len(servers), len(h.domains))
	}
}

// TestInterruptedCrawlExits130 sends Ctrl-C (SIGINT) to a crawl blocked on a
// host: it stops cleanly, says what was left, and exits 130.
func TestInterruptedCrawlExits130(t *testing.T) {
	h := newHangWeb(t)
	var stdout strings.Builder
	cmd := h.start(t, &stdout)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit code %d (%v), want %d", code, err, exitInterrupted)
	}
	if !strings.Contains(stdout.String(), "interrupted: 3 domain(s) left pending") {
		t.Errorf("summary does not say what was left:\n%s", stdout.String())
	}
}

// startWithCA starts web, stops it when the test ends, and writes its CA
// to a new temporary directory.
func startWithCA(tb testing.TB, web *simweb.Web) (dir, ca string) {
	tb.Helper()
	if err := web.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { web.Close() })
	dir = tb.TempDir()
	ca = filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		tb.Fatal(err)
	}
	return dir, ca
}

// killPoints is how many random points TestKilledAtRandomPoints kills a
// crawl at (CARDCRAWL_KILL_POINTS, default 5; CI sets 20), and
// syncKillPoints how many it kills a Registry sync at (a quarter of that,
// at least 2). CARDCRAWL_KILL_SEED replays a run's points; the seed is
// printed either way.
func killSettings(t *testing.T) (crawls, syncs int, seed int64) {
	t.Helper()
	crawls = 5
	if s := os.Getenv("CARDCRAWL_KILL_POINTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CARDCRAWL_KILL_POINTS=%q: want a positive number", s)
		}
		crawls = n
	}
	seed = time.Now().UnixNano()
	if s := os.Getenv("CARDCRAWL_KILL_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CARDCRAWL_KILL_SEED=%q: want a number", s)
		}
		seed = n
	}
	return crawls, max(2, crawls/4), seed
}

// killWeb is a realistic small web: generated domains (catalogs, cards,
// real go-sdk and mcp-go MCP servers, 404s, refused connections) and a
// Registry double with a few pages of entries.
func killWeb(t *testing.T) (web *simweb.Web, net []string, domainsFile string) {
	t.Helper()
	web, err := simweb.New(simweb.Options{DiscardRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	domains, err := web.Generate(simweb.GenerateOptions{Domains: 60, CatalogShare: 0.5, CardsPerCatalog: 2, MCPShare: 0.7,
		Seed: 11, RefuseShare: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) })
	for i := range 450 {
		srv := fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"io.example.kill/s%03d",`+
			`"description":"server %d","version":"1.0.%d","remotes":[{"type":"streamable-http","url":"https://s%d.registry-kill.example/mcp"}]}`, i, i, i%3, i)
		if err := reg.Publish(json.RawMessage(srv), true); err != nil {
			t.Fatal(err)
		}
	}
	web.Handle("registry.kill.example", reg)
	dir, ca := startWithCA(t, web)
	domainsFile = filepath.Join(dir, "domains.txt")
	if err := os.WriteFile(domainsFile, []byte(strings.Join(domains, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return web, []string{"--connect-to", web.ConnectTo(), "--ca-cert", ca}, domainsFile
}

// runUntilLine runs a cardcrawl process with -v and SIGKILLs it when it has
// written killAt lines that match to stderr (0: never; a nil match matches
// every line). It returns the matching lines seen, the last one, and
// whether the kill landed before the process ended.
func runUntilLine(t *testing.T, args []string, killAt int, match func(string) bool) (lines int, last string, killed bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append(args, "-v")...)
	cmd.Env = append(os.Environ(), "CARDCRAWL_TEST_MAIN=1")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if match != nil && !match(sc.Text()) {
			continue
		}
		lines++
		last = sc.Text()
		if lines == killAt {
			killed = cmd.Process.Signal(syscall.SIGKILL) == nil
			break
		}
	}
	_, _ = io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	if killed {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			killed = false // it had already ended
		}
	}
	if !killed && err != nil {
		t.Fatalf("%s: %v\n%s\nlast line: %s", strings.Join(args[:2], " "), err, stdout.String(), last)
	}
	return lines, last, killed
}

// probeStep matches the -v lines of an MCP probe's exchanges.
func probeStep(line string) bool {
	return strings.Contains(line, "probe exchange") || strings.Contains(line, "method=POST") || strings.Contains(line, "method=DELETE")
}

// integrityOK runs PRAGMA integrity_check on the file, if there is one yet.
func integrityOK(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q, %v", res, err)
	}
}

// semanticQueries read what a database knows, without the times and run ids
// that differ between any two runs: each is one sorted text column.
var semanticQueries = map[string]string{
	"domains": `SELECT domain || '|' || state || '|' || COALESCE(outcome, '') || '|' || COALESCE(class, '') || '|' || cards || '|' ||
		remotes || '|' || capped || '|' || COALESCE(catalog_url, '') FROM domains`,
	"catalogs": `SELECT url || '|' || domain || '|' || parent_url || '|' || depth || '|' || sha256 || '|' || entry_count || '|' || findings FROM catalogs`,
	"entries":  `SELECT catalog_url || '|' || identifier || '|' || version || '|' || type || '|' || resolved_url || '|' || inline || '|' || raw FROM entries`,
	"cards":    `SELECT key || '|' || sha256 || '|' || name || '|' || version || '|' || grade || '|' || findings || '|' || json FROM cards`,
	"remotes":  `SELECT url_norm || '|' || url || '|' || type || '|' || card_key || '|' || json FROM remotes`,
	"listings": `SELECT domain || '|' || catalog_url || '|' || identifier || '|' || card_key || '|' || remote_norm || '|' || active FROM listings`,
	// A killed run may have recorded a decision it never acted on; what
	// counts is the last word about each remote.
	"decisions": `SELECT remote_norm || '|' || decision || '|' || reason FROM probe_decisions pd
		WHERE id = (SELECT MAX(id) FROM probe_decisions p2 WHERE p2.remote_norm = pd.remote_norm)`,
	"probes": `SELECT remote_norm || '|' || outcome || '|' || transport || '|' || protocol || '|' || server_name || '|' ||
		server_version || '|' || COALESCE(tool_count, -1) FROM probes`,
	"documents": `SELECT sha256 || '|' || size FROM documents`,
	// Observations log fetches, and a killed run's completed fetches are
	// kept (discover records them as they happen): the domain is fetched
	// again, conditionally, by the run that resumes it. What was learned
	// must be the same; a fetch twice in one run is a duplicate.
	"observations": `SELECT DISTINCT url || '|' || class || '|' || sha256 FROM observations`,
	"duplicates": `SELECT 'observation ' || url || ' in run ' || run_id FROM observations GROUP BY url, run_id HAVING COUNT(*) > 1
		UNION ALL SELECT 'probe ' || remote_norm || ' in run ' || run_id FROM probes GROUP BY remote_norm, run_id HAVING COUNT(*) > 1
		UNION ALL SELECT 'listing ' || domain || ' ' || remote_norm FROM listings GROUP BY domain, catalog_url, identifier, card_key, remote_norm HAVING COUNT(*) > 1`,
	"registry": `SELECT source || '|' || name || '|' || version || '|' || status || '|' || is_latest || '|' || reported_latest || '|' ||
		schema || '|' || server_json || '|' || findings || '|' || published_at || '|' || updated_at FROM registry_entries`,
}

func semantic(t *testing.T, path string) map[string][]string {
	t.Helper()
	st := openRead(t, path)
	out := map[string][]string{}
	for name, q := range semanticQueries {
		rows := queryStrings(t, st, q)
		slices.Sort(rows)
		out[name] = rows
	}
	return out
}

// TestKilledAtRandomPoints kills crawls of a realistic simulated web with
// SIGKILL at random points (probes on, so many kills land mid-probe), and
// then Registry syncs mid-sync; after every kill the file passes PRAGMA
// integrity_check, and once the same commands have run to the end the
// database says exactly what an uninterrupted run's says: the same
// domains' outcomes, catalogs, entries, cards, remotes, listings, last
// probe decisions, probes, documents, observations and Registry entries,
// with nothing fetched, probed or stored twice.
func TestKilledAtRandomPoints(t *testing.T) {
	kills, syncKills, seed := killSettings(t)
	t.Logf("seed %d (CARDCRAWL_KILL_SEED=%d replays it), %d crawl kills, %d sync kills", seed, seed, kills, syncKills)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	_, net, domains := killWeb(t)
	dir := t.TempDir()
	ref, killedDB := filepath.Join(dir, "ref.db"), filepath.Join(dir, "killed.db")
	crawl := func(db string) []string {
		return append([]string{"crawl", "--db", db, "--domains", domains, "--probe", "always"}, net...)
	}
	sync := func(db string) []string {
		return append([]string{"registry", "sync", "--db", db, "--url", "https://registry.kill.example"}, net...)
	}

	crawlLines, _, _ := runUntilLine(t, crawl(ref), 0, nil)
	probeLines, _, _ := runUntilLine(t, crawl(filepath.Join(dir, "probes.db")), 0, probeStep)
	syncLines, _, _ := runUntilLine(t, sync(ref), 0, nil)

	// Each kill lands, on average, a kills-th of the way through what a
	// whole crawl logs, so together they walk through all of it; every
	// other one is counted in probe steps only, so it lands mid-probe.
	midProbe := 0
	for i := range kills {
		match, n := probeStep, probeLines
		if i%2 == 0 {
			match, n = nil, crawlLines
		}
		at := 1 + rng.IntN(max(1, 2*n/kills))
		_, last, killed := runUntilLine(t, crawl(killedDB), at, match)
		if killed && probeStep(last) {
			midProbe++
		}
		integrityOK(t, killedDB)
		if t.Failed() {
			t.Fatalf("after crawl kill %d at line %d (seed %d)", i, at, seed)
		}
	}
	runUntilLine(t, crawl(killedDB), 0, nil)
	for i := range syncKills {
		at := 1 + rng.IntN(syncLines)
		runUntilLine(t, sync(killedDB), at, nil)
		integrityOK(t, killedDB)
		if t.Failed() {
			t.Fatalf("after sync kill %d at line %d (seed %d)", i, at, seed)
		}
	}
	runUntilLine(t, sync(killedDB), 0, nil)
	t.Logf("%d of %d crawl kills landed on a probe step", midProbe, kills)

	want, got := semantic(t, ref), semantic(t, killedDB)
	for name := range semanticQueries {
		if diff := cmp.Diff(want[name], got[name]); diff != "" {
			t.Errorf("%s after kills differ from an uninterrupted run (seed %d) (-want +got):\n%s", name, seed, diff)
		}
		if len(want[name]) == 0 && name != "catalogs" && name != "duplicates" {
			t.Errorf("the uninterrupted run has no %s: the web is not realistic enough to test", name)
		}
	}
}

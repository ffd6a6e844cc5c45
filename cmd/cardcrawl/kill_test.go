package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestMain lets the test binary stand in for the cardcrawl binary, so a test
// can run a real crawl process and kill it.
func TestMain(m *testing.M) {
	if os.Getenv("CARDCRAWL_TEST_MAIN") == "1" {
		main()
		return
	}
	pgtest.Main(m)
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
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
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
	var statuses []string
	rows, err := st.SQL().Query(`SELECT status FROM runs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, s)
	}
	rows.Close()
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

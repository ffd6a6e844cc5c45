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
	os.Exit(m.Run())
}

// TestKilledCrawlResumes kills a crawl process with SIGKILL while it waits on
// a host, then runs the crawl again: the domains finished before the kill
// stay done, the rest are picked up, and nothing is duplicated.
func TestKilledCrawlResumes(t *testing.T) {
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var fixtures strings.Builder
	card := `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/%s","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://mcp.%s/mcp"}]}`
	before := []string{"a1.example", "a2.example", "a3.example"}
	after := []string{"z1.example", "z2.example"}
	for _, d := range append(append([]string{}, before...), after...) {
		fmt.Fprintf(&fixtures, "-- %s/.well-known/ai-catalog.json --\n{\"specVersion\":\"1.0\",\"entries\":[{\"identifier\":\"x\",\"type\":\"application/mcp-server-card+json\",\"data\":%s}]}\n",
			d, fmt.Sprintf(card, d, d))
	}
	if err := web.AddFixtures([]byte(fixtures.String())); err != nil {
		t.Fatal(err)
	}
	// hang.example blocks its first request (until the crawler is gone) and
	// says when that request arrived; later requests get a catalog.
	hit := make(chan struct{})
	var once sync.Once
	web.Handle("hang.example", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := false
		once.Do(func() { first = true; close(hit) })
		if first {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"specVersion":"1.0","entries":[{"identifier":"h","type":"application/mcp-server-card+json","data":%s}]}`,
			fmt.Sprintf(card, "hang", "hang.example"))
	}))
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "k.db")
	domains := append(append(append([]string{}, before...), "hang.example"), after...)
	args := append([]string{"crawl", "--db", db, "--connect-to", web.ConnectTo(), "--ca-cert", ca,
		"--concurrency", "1", "--probe", "never", "--timeout", "1m"}, domains...)

	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CARDCRAWL_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// With one domain in flight, hang.example is asked only after the domains
	// before it were committed.
	select {
	case <-hit:
	case <-time.After(30 * time.Second): // a guard against a broken test, not a wait
		cmd.Process.Kill()
		t.Fatal("the crawl never reached hang.example")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	states := func() map[string]string {
		t.Helper()
		st, err := store.Open(context.Background(), db, store.Options{})
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
	for _, d := range before {
		if got[d] != "done/catalog" {
			t.Errorf("after the kill, %s is %q, want done/catalog", d, got[d])
		}
	}
	for _, d := range append([]string{"hang.example"}, after...) {
		if got[d] != "pending/" {
			t.Errorf("after the kill, %s is %q, want pending", d, got[d])
		}
	}

	code, stdout, stderr := run(t, "", args...)
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
	st, err := store.Open(context.Background(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	servers, err := st.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != len(domains) {
		t.Errorf("%d servers, want one per domain (%d)", len(servers), len(domains))
	}
}

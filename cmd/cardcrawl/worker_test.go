package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/store"
)

// workerWeb is a simulated web for workers: the demo (with its Registry
// double), a generated web, and tenants whose cards all live on one shared
// host, which answers one card with 429 and Retry-After.
type workerWeb struct {
	web     *simweb.Web
	ca      string
	domains []string
	// rested is when the shared host said Retry-After: 1 (zero until then).
	mu     sync.Mutex
	rested time.Time
}

const (
	sharedHost = "cdn.shared.example"
	tenants    = 40
	restCard   = 7 // the tenant whose card answers 429 once
)

func newWorkerWeb(t *testing.T, generated int) *workerWeb {
	t.Helper()
	web, demo, err := simweb.Demo(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := web.Generate(simweb.GenerateOptions{Domains: generated, CatalogShare: 0.3, CardsPerCatalog: 2,
		MCPShare: 0.2, Seed: 10})
	if err != nil {
		t.Fatal(err)
	}
	w := &workerWeb{web: web, domains: append(demo, gen...)}
	for i := range tenants {
		d := fmt.Sprintf("tenant%d.shared.example", i)
		w.domains = append(w.domains, d)
		body := fmt.Sprintf(`{"specVersion":"1.0","entries":[{"identifier":"t%d","type":"application/mcp-server-card+json","url":"https://%s/card/%d"}]}`, i, sharedHost, i)
		web.Handle(d, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/.well-known/ai-catalog.json" {
				http.NotFound(rw, r)
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.Write([]byte(body))
		}))
	}
	var once sync.Once
	web.Handle(sharedHost, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n := strings.TrimPrefix(r.URL.Path, "/card/")
		if n == strconv.Itoa(restCard) {
			first := false
			once.Do(func() { first = true })
			if first {
				w.mu.Lock()
				w.rested = time.Now()
				w.mu.Unlock()
				rw.Header().Set("Retry-After", "1")
				rw.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		// Long enough that two workers asking at once would overlap.
		time.Sleep(5 * time.Millisecond)
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"example.shared/t%s","version":"1.0.0","description":"tenant %s"}`, n, n)
	}))
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	w.ca = filepath.Join(t.TempDir(), "ca.pem")
	if err := web.WriteCA(w.ca); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *workerWeb) netArgs() []string {
	return []string{"--connect-to", w.web.ConnectTo(), "--ca-cert", w.ca}
}

// seedFrontier puts the web's domains on the frontier of dsn, as
// 'domains add' does, and returns a read-only store on it and a reader of
// its status (workers of the last hour).
func (w *workerWeb) seedFrontier(t *testing.T, dsn string) (*store.DB, func() store.Status) {
	t.Helper()
	list := filepath.Join(t.TempDir(), "domains.txt")
	if err := os.WriteFile(list, []byte(strings.Join(w.domains, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "domains", "add", "--db", dsn, "--domains", list); code != exitOK {
		t.Fatalf("domains add: exit %d: %s", code, stderr)
	}
	st, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, func() store.Status {
		s, err := st.Status(context.Background(), time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// checkPoliteness fails the test if any host ever had two requests in
// flight at once, or if the shared host was asked again before the
// Retry-After it gave had passed.
func (w *workerWeb) checkPoliteness(t *testing.T) {
	t.Helper()
	hosts := map[string]bool{}
	for _, r := range w.web.Requests("") {
		hosts[r.Host] = true
	}
	for h := range hosts {
		if n := w.web.MaxConcurrent(h); n > 1 {
			var log []string
			for _, r := range w.web.Requests(h) {
				log = append(log, r.At.Format("15:04:05.000000")+" "+r.Method+" "+r.Path)
			}
			t.Errorf("%s had %d requests in flight at once; its requests:\n%s", h, n, strings.Join(log, "\n"))
		}
	}
	w.mu.Lock()
	rested := w.rested
	w.mu.Unlock()
	if rested.IsZero() {
		t.Fatalf("the shared host never answered 429")
	}
	for _, r := range w.web.Requests(sharedHost) {
		if r.At.After(rested) && r.At.Before(rested.Add(900*time.Millisecond)) {
			t.Errorf("%s asked %v after its Retry-After: 1", sharedHost, r.At.Sub(rested))
		}
	}
}

// runningProc is a cardcrawl process the test started.
type runningProc struct {
	cmd    *exec.Cmd
	stdout syncBuffer
	stderr syncBuffer
	done   chan struct{}
}

// syncBuffer is a strings.Builder the test may read while the process
// writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startProc(t testing.TB, args ...string) *runningProc {
	t.Helper()
	p := &runningProc{cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), "CARDCRAWL_TEST_MAIN=1")
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// stop sends SIGTERM and returns the exit code.
func (p *runningProc) stop(t testing.TB) int {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		<-p.done
		t.Fatalf("the process ended before SIGTERM (exit %d); stderr:\n%s", p.cmd.ProcessState.ExitCode(), p.stderr.String())
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute): // a guard against a broken worker, not a wait
		t.Fatalf("worker did not stop on SIGTERM; stderr:\n%s", p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// readStatus is what `status` reads of dsn (workers of the last hour), on
// a read-only handle opened for the read.
func readStatus(t *testing.T, dsn string) store.Status {
	t.Helper()
	st, err := store.Open(context.Background(), dsn, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Status(context.Background(), time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
}

func workerDomains() int {
	if n, err := strconv.Atoi(os.Getenv("CARDCRAWL_TEST_WORKER_DOMAINS")); err == nil && n > 0 {
		return n
	}
	if raceEnabled {
		return 300
	}
	return 2000
}

// TestWorkersShareFrontier: three worker processes on one PostgreSQL
// database crawl a simulated web; one is killed with SIGKILL mid-run.
// Every domain ends done, the only domains fetched twice are ones the
// killed worker held, no host ever has two requests in flight, the host
// that asked for a rest gets it from every worker, serve answers while the
// workers write, and SIGTERM stops the rest with exit 0.
func TestWorkersShareFrontier(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDB(t)
	w := newWorkerWeb(t, workerDomains())
	st, status := w.seedFrontier(t, dsn)
	total := status().Frontier.Domains
	if total != len(w.domains) {
		t.Fatalf("frontier holds %d domains, want %d", total, len(w.domains))
	}

	args := append([]string{"worker", "--db", dsn, "--lease", "4s", "--concurrency", "16", "--idle", "100ms",
		"--timeout", "5s", "--domain-timeout", "20s", "--grace", "20s"}, w.netArgs()...)
	var workers []*runningProc
	for range 3 {
		workers = append(workers, startProc(t, args...))
	}
	serve := startProc(t, "serve", "--db", dsn, "--addr", "127.0.0.1:0")
	var addr string
	waitFor(t, "serve to listen", 30*time.Second, func() bool {
		line := serve.stderr.String()
		if i := strings.Index(line, "http://"); i >= 0 {
			addr = strings.TrimSuffix(strings.Fields(line[i+len("http://"):])[0], "/")
			return true
		}
		return false
	})

	victim := workers[0]
	waitFor(t, "a quarter of the domains", 2*time.Minute, func() bool { return status().Frontier.Done >= total/4 })
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-victim.done

	reads := 0
	last := time.Now()
	waitFor(t, "every domain done", 5*time.Minute, func() bool {
		// serve keeps answering while the workers write.
		resp, err := http.Get("http://" + addr + "/v0.1/servers?limit=5")
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("serve answered %d while workers write", resp.StatusCode)
		}
		reads++
		f := status().Frontier
		if time.Now().After(last.Add(10 * time.Second)) {
			last = time.Now()
			t.Logf("frontier: %+v", f)
		}
		return f.Done == total
	})
	for i, p := range workers[1:] {
		if code := p.stop(t); code != exitOK {
			t.Errorf("worker %d exit %d on SIGTERM; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	serve.stop(t)
	if reads == 0 {
		t.Error("serve was never read while the workers ran")
	}

	s := status()
	if f := s.Frontier; f.Due != 0 || f.Leased != 0 || f.NeverCrawled != 0 {
		t.Errorf("after the run: %+v", f)
	}
	alive := 0
	for _, wk := range s.Workers {
		switch {
		case wk.PID == victim.cmd.Process.Pid:
			if wk.Alive || wk.StoppedAt != "" {
				t.Errorf("the killed worker shows alive=%v stopped=%q", wk.Alive, wk.StoppedAt)
			}
		case wk.StoppedAt == "":
			t.Errorf("worker %s did not record its stop", wk.ID)
		}
		if wk.Crawled > 0 {
			alive++
		}
	}
	if alive < 2 {
		t.Errorf("only %d workers crawled anything: %+v", alive, s.Workers)
	}

	// A domain fetched twice must be one the killed worker had started.
	rows, err := st.SQL().QueryContext(ctx, `SELECT o.domain || ' ' || o.url, COUNT(*),
		COUNT(CASE WHEN r.pid = ? THEN 1 END)
		FROM observations o JOIN runs r ON r.id = o.run_id
		WHERE o.kind = 'catalog' GROUP BY o.domain, o.url HAVING COUNT(*) > 1`, victim.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		var n, byVictim int
		if err := rows.Scan(&d, &n, &byVictim); err != nil {
			t.Fatal(err)
		}
		if n != 2 || byVictim != 1 {
			t.Errorf("%s: %d catalog fetches, %d by the killed worker; want 2 and 1", d, n, byVictim)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	w.checkPoliteness(t)
}

// TestWorkerLeaderSyncsOncePerPeriod: two workers with --registry-every;
// one leads, the Registry is synced once per period, and when the leader
// stops the other takes over.
func TestWorkerLeaderSyncsOncePerPeriod(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDB(t)
	w := newWorkerWeb(t, 0)
	const every = 500 * time.Millisecond
	args := append([]string{"worker", "--db", dsn, "--lease", "4s", "--idle", "100ms",
		"--registry-every", every.String(), "--registry-url", simweb.DemoRegistryURL}, w.netArgs()...)
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	began := time.Now()
	a, b := startProc(t, args...), startProc(t, args...)
	schedule := func() store.Schedule {
		s, err := st.Status(ctx, time.Now().Add(-time.Hour))
		if err != nil {
			return store.Schedule{}
		}
		return scheduleNamed(s, registrySchedule)
	}
	waitFor(t, "three syncs", time.Minute, func() bool { return schedule().Runs >= 3 })
	first := schedule().LastWorker
	leader, other := a, b
	if strings.Contains(first, ":"+strconv.Itoa(b.cmd.Process.Pid)+":") {
		leader, other = b, a
	}
	if !strings.Contains(first, ":"+strconv.Itoa(leader.cmd.Process.Pid)+":") {
		t.Fatalf("the sync ran in %s, neither worker", first)
	}
	if code := leader.stop(t); code != exitOK {
		t.Errorf("leader exit %d; stderr:\n%s", code, leader.stderr.String())
	}
	waitFor(t, "the other worker to take over", time.Minute, func() bool {
		s := schedule()
		return strings.Contains(s.LastWorker, ":"+strconv.Itoa(other.cmd.Process.Pid)+":") && s.LastDoneAt > s.LastStartedAt
	})
	if code := other.stop(t); code != exitOK {
		t.Errorf("second leader exit %d; stderr:\n%s", code, other.stderr.String())
	}
	// A sync starts with a first page (no cursor); starts are a period
	// apart, however many workers there are.
	var starts []time.Time
	for _, r := range w.web.Requests("registry.example") {
		if strings.HasPrefix(r.Path, "/v0.1/servers") && !strings.Contains(r.Path, "cursor=") {
			starts = append(starts, r.At)
		}
	}
	// At least two by the first leader (the third it claimed may have been
	// cut short by its SIGTERM) and one by the second.
	if len(starts) < 3 {
		t.Fatalf("%d syncs seen by the Registry, want at least 3", len(starts))
	}
	// Each start is claimed at least a period after the one before, but its
	// first request may leave a loaded machine some time later; so count:
	// at most one sync per period of the whole run, and two workers
	// syncing on their own would make about twice that.
	if limit := int(time.Since(began)/every) + 1; len(starts) > limit {
		t.Errorf("%d syncs in %v, more than one per %v", len(starts), time.Since(began).Round(time.Millisecond), every)
	}
}

// TestWorkerOnSQLite: the same loop runs on a SQLite file, as one process.
func TestWorkerOnSQLite(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	w := newWorkerWeb(t, 50)
	if code, _, stderr := run(t, "", append([]string{"domains", "add", "--db", db}, w.domains...)...); code != exitOK {
		t.Fatalf("domains add: exit %d: %s", code, stderr)
	}
	p := startProc(t, append([]string{"worker", "--db", db, "--lease", "2s", "--idle", "100ms", "--timeout", "5s"}, w.netArgs()...)...)
	waitFor(t, "every domain done", 2*time.Minute, func() bool {
		code, stdout, _ := run(t, "", "status", "--db", db, "--json")
		return code == exitOK && strings.Contains(stdout, fmt.Sprintf(`"done": %d,`, len(w.domains)))
	})
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit %d on SIGTERM; stderr:\n%s", code, p.stderr.String())
	}
	if s := readStatus(t, db); len(s.Workers) != 1 || s.Workers[0].StoppedAt == "" || s.Workers[0].Crawled == 0 {
		t.Errorf("workers = %+v", s.Workers)
	}
	w.checkPoliteness(t)
}

// TestMigrateSQLiteToPostgres: a crawled SQLite database copied with
// `migrate` reads the same from PostgreSQL, history included, and a second
// copy into the same database is refused (exit 2).
func TestMigrateSQLiteToPostgres(t *testing.T) {
	w := newWorkerWeb(t, 20)
	db := filepath.Join(t.TempDir(), "m.db")
	if code, _, stderr := run(t, "", append(append([]string{"crawl", "--db", db, "--probe", "never"}, w.netArgs()...), w.domains...)...); code != exitOK {
		t.Fatalf("crawl: exit %d: %s", code, stderr)
	}
	dsn := pgtest.NewDB(t)
	code, stdout, stderr := run(t, "", "migrate", "--from", db, "--to", dsn, "--json")
	if code != exitOK {
		t.Fatalf("migrate: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"observations": `) {
		t.Errorf("migrate output names no observations:\n%s", stdout)
	}
	for _, cmd := range [][]string{{"domains", "--json"}, {"servers", "--json"}} {
		_, fromFile, _ := run(t, "", append(cmd, "--db", db)...)
		_, fromPG, errPG := run(t, "", append(cmd, "--db", dsn)...)
		if fromFile != fromPG || fromFile == "" {
			t.Errorf("%v differs between the file and its copy (%s)", cmd, errPG)
		}
	}
	if code, _, _ := run(t, "", "migrate", "--from", db, "--to", dsn); code != exitUsage {
		t.Errorf("second migrate into a full database: exit %d, want %d", code, exitUsage)
	}
}

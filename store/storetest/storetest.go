// Package storetest is the contract every cardcrawl store passes: what the
// crawl, the probe decisions, the Registry sync, the reconciliation, the
// namespace checks and the listing commands rely on, stated as behaviour
// through the store's methods only (no SQL, no file), so a second backend
// (PostgreSQL) runs the same suite as SQLite:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store { … })
//	}
package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what the suite exercises: every interface the pipeline's steps
// declare, and the reads the listing commands make.
type Store interface {
	pipeline.Store
	EachDomain(ctx context.Context, fn func(store.DomainRow) error) error
	Probes(ctx context.Context) ([]store.ProbeRow, error)
	ReconcileResults(ctx context.Context) ([]store.ReconcileRow, error)
	Namespaces(ctx context.Context) ([]store.NamespaceRow, error)
	RegistryEntries(ctx context.Context, f store.RegistryFilter) ([]store.RegistryEntry, error)
	CountRegistryEntries(ctx context.Context, source string) (int, error)
}

// Open returns a new, empty store whose clock is now. The suite closes
// nothing: Open registers its own cleanup.
type Open func(t *testing.T, now func() time.Time) Store

// Run runs the contract against stores made by open.
func Run(t *testing.T, open Open) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"Enqueue", testEnqueue},
		{"SaveDomain", testSaveDomain},
		{"SharedNestedCatalog", testSharedNestedCatalog},
		{"Backoff", testBackoff},
		{"Observations", testObservations},
		{"Runs", testRuns},
		{"Probes", testProbes},
		{"DecisionsWithResult", testDecisionsWithResult},
		{"Registry", testRegistry},
		{"Reconcile", testReconcile},
		{"Namespaces", testNamespaces},
		{"Judgements", testJudgements},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

// clock is a settable clock for the store under test.
type clock struct{ t time.Time }

func newClock() *clock               { return &clock{time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)} }
func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

func domains(t *testing.T, st Store) map[string]store.DomainRow {
	t.Helper()
	out := map[string]store.DomainRow{}
	check(t, st.EachDomain(context.Background(), func(d store.DomainRow) error {
		out[d.Domain] = d
		return nil
	}))
	return out
}

// result is a domain whose root catalog lists one card declaring remotes.
func result(domain string, runID int64, remotes ...string) store.DomainResult {
	root := "https://" + domain + "/.well-known/ai-catalog.json"
	card := store.CardRecord{Key: "https://" + domain + "/card", SHA256: "h-" + domain, Name: "com.example/" + domain,
		Grade: "conformant", JSON: []byte(`{"name":"com.example/` + domain + `"}`), JudgedBy: "servercard/test",
		Findings: finding.List{{Severity: finding.Info, Code: "remote_templated", Message: "m"}}}
	r := store.DomainResult{Domain: domain, RunID: runID, Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: root,
		Catalogs: []store.CatalogRecord{{URL: root, SHA256: "c-" + domain, JudgedBy: "catalog/test"}},
		Cards:    []store.CardRecord{card}}
	for _, u := range remotes {
		r.Remotes = append(r.Remotes, store.RemoteRecord{URLNorm: u, URL: u, Type: "streamable-http", CardKey: card.Key, JSON: []byte(`{"url":"` + u + `"}`)})
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: root, Identifier: "i", CardKey: card.Key, RemoteNorm: u})
	}
	if len(remotes) == 0 {
		r.Listings = []store.ListingRecord{{CatalogURL: root, Identifier: "i", CardKey: card.Key}}
	}
	return r
}

func testEnqueue(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	got, err := st.Enqueue(ctx, []string{"a.example", "b.example", "c.example", "a.example"}, store.EnqueueOptions{RunID: 1})
	check(t, err)
	diff(t, "first batch", store.Enqueued{Due: []string{"a.example", "b.example", "c.example"}, Duplicates: 1}, got)
	// a: fresh for an hour; b: due already; c: still pending.
	for d, next := range map[string]time.Time{"a.example": c.now().Add(time.Hour), "b.example": c.now().Add(-time.Minute)} {
		r := result(d, 1)
		r.NextFetchAfter = next
		check(t, st.SaveDomain(ctx, r))
	}
	got, err = st.Enqueue(ctx, []string{"a.example", "b.example", "c.example"}, store.EnqueueOptions{RunID: 2})
	check(t, err)
	diff(t, "second run", store.Enqueued{Due: []string{"b.example", "c.example"}, Fresh: 1}, got)
	got, err = st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: 3, Force: true})
	check(t, err)
	diff(t, "forced", store.Enqueued{Due: []string{"a.example"}}, got)
	if d := domains(t, st); d["a.example"].State != store.StatePending || d["b.example"].State != store.StatePending {
		t.Errorf("states after enqueue: %+v", d)
	}
}

func testSaveDomain(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	_, err := st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: 1})
	check(t, err)
	r := result("a.example", 1, "https://one.example/mcp", "https://two.example/mcp")
	check(t, st.SaveDomain(ctx, r))
	check(t, st.SaveDomain(ctx, r)) // idempotent
	d := domains(t, st)["a.example"]
	if d.State != store.StateDone || d.Outcome != store.OutcomeCatalog || d.Cards != 1 || d.Remotes != 2 {
		t.Errorf("domain after save: %+v", d)
	}
	cards, remotes, err := st.RunTotals(ctx, 1)
	check(t, err)
	if cards != 1 || remotes != 2 {
		t.Errorf("run totals %d cards %d remotes, want 1 and 2", cards, remotes)
	}
	declared, err := st.StillDeclared(ctx, "https://two.example/mcp", "h-a.example")
	check(t, err)
	if !declared {
		t.Error("two.example not declared by the card that lists it")
	}
	// The domain stops listing two.
	check(t, st.SaveDomain(ctx, result("a.example", 2, "https://one.example/mcp")))
	if declared, err = st.StillDeclared(ctx, "https://two.example/mcp", "h-a.example"); err != nil || declared {
		t.Errorf("a retired listing still declares its remote (%v)", err)
	}
	counts := func(when string, cards, remotes int) {
		t.Helper()
		if d := domains(t, st)["a.example"]; d.Cards != cards || d.Remotes != remotes {
			t.Errorf("%s: %d card(s), %d remote(s), want %d and %d", when, d.Cards, d.Remotes, cards, remotes)
		}
	}
	counts("after retiring one remote", 1, 1)
	// A transient failure keeps what was listed; the card is read back whole.
	check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "a.example", RunID: 3, Outcome: store.OutcomeFailed, Class: "timeout"}))
	counts("after a transient failure", 1, 1)
	var got []store.ReconcileCard
	check(t, st.EachListedCard(ctx, func(c store.ReconcileCard) error { got = append(got, c); return nil }))
	diff(t, "listed cards", []store.ReconcileCard{{Key: "https://a.example/card", JSON: `{"name":"com.example/a.example"}`,
		Domains: []string{"a.example"}}}, got)
	// A result that is not definitive adds to what is listed.
	more := result("a.example", 4, "https://three.example/mcp")
	more.Definitive = false
	check(t, st.SaveDomain(ctx, more))
	counts("after adding one remote", 1, 2)
	// The catalog is gone: nothing is listed any more.
	check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "a.example", RunID: 5, Outcome: store.OutcomeNoCatalog,
		Definitive: true}))
	counts("after the catalog went", 0, 0)
}

// testSharedNestedCatalog: a nested catalog two domains reach belongs to
// both; its findings show on each, and a passing failure of one domain's
// root keeps what that domain listed through it.
func testSharedNestedCatalog(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	_, err := st.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{})
	check(t, err)
	const shared = "https://shared.example/catalog.json"
	nested := func(d string) store.DomainResult {
		r := result(d, 1)
		r.Catalogs = append(r.Catalogs, store.CatalogRecord{URL: shared, ParentURL: r.CatalogURL, Depth: 1, SHA256: "s",
			Findings: finding.List{{Severity: finding.Warning, Code: "spec_version_missing", Message: "m"}}})
		r.Listings = []store.ListingRecord{{CatalogURL: shared, Identifier: "i", CardKey: r.Cards[0].Key}}
		return r
	}
	check(t, st.SaveDomain(ctx, nested("a.example")))
	check(t, st.SaveDomain(ctx, nested("b.example")))
	for name, d := range domains(t, st) {
		diff(t, name+" catalog findings", []string{"spec_version_missing"}, d.CatalogFindings)
	}
	again := nested("a.example")
	again.Catalogs, again.Cards, again.Listings = again.Catalogs[:1], nil, nil
	again.KeepCatalogs = []string{again.CatalogURL}
	check(t, st.SaveDomain(ctx, again))
	if d := domains(t, st)["a.example"]; d.Cards != 1 {
		t.Errorf("a.example lists %d card(s) after a passing failure below its root, want 1", d.Cards)
	}
}

func testBackoff(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	_, err := st.Enqueue(ctx, []string{"down.example"}, store.EnqueueOptions{})
	check(t, err)
	var last time.Duration
	for attempt := 1; attempt <= 4; attempt++ {
		check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "down.example", Outcome: store.OutcomeFailed, Class: "connect",
			NextFetchAfter: c.now().Add(time.Hour)}))
		d := domains(t, st)["down.example"]
		if d.Attempts != attempt {
			t.Fatalf("attempts %d after failure %d", d.Attempts, attempt)
		}
		next, err := time.Parse(time.RFC3339Nano, d.NextFetchAfter)
		check(t, err)
		wait := next.Sub(c.now())
		want := max(time.Hour, store.Backoff("down.example", attempt))
		if wait != want || wait < last {
			t.Errorf("failure %d: next fetch after %v, want %v (and no sooner than %v)", attempt, wait, want, last)
		}
		last = wait
	}
	check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "down.example", Outcome: store.OutcomeNoCatalog, Class: "http_404",
		Definitive: true, NextFetchAfter: c.now().Add(24 * time.Hour)}))
	if d := domains(t, st)["down.example"]; d.Attempts != 0 {
		t.Errorf("attempts %d after an answer, want 0", d.Attempts)
	}
}

func testObservations(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	const u = "https://a.example/.well-known/ai-catalog.json"
	if _, ok, err := st.LastValidators(ctx, u); err != nil || ok {
		t.Fatalf("validators before any fetch: %v, %v", ok, err)
	}
	if _, ok, err := st.LastFetch(ctx, u); err != nil || ok {
		t.Fatalf("last fetch before any fetch: %v, %v", ok, err)
	}
	body := []byte(`{"entries":[]}`)
	check(t, st.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: u, FetchedAt: c.now(),
		Status: 200, ETag: `"v1"`, SHA256: "sha-1", Size: int64(len(body)), FinalURL: u}, Body: body}))
	check(t, st.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: u, FetchedAt: c.now(),
		Class: "timeout", Reason: "slow"}}))
	v, ok, err := st.LastValidators(ctx, u)
	check(t, err)
	diff(t, "validators of the last good fetch", store.Validators{ETag: `"v1"`, SHA256: "sha-1", FinalURL: u}, v)
	if !ok {
		t.Error("no validators after a good fetch")
	}
	last, ok, err := st.LastFetch(ctx, u)
	check(t, err)
	diff(t, "the last fetch, a failed one", store.LastFetch{FetchedAt: c.now(), Class: "timeout"}, last)
	if !ok {
		t.Error("no last fetch after two")
	}
	got, err := st.Document(ctx, "sha-1")
	check(t, err)
	diff(t, "stored body", body, got)

	// A domain's fetches written with its result are history like any
	// other: the latest good one gives the validators, its body is kept.
	const card = "https://a.example/card.json"
	cardBody := []byte(`{"name":"example/a"}`)
	_, err = st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: 1})
	check(t, err)
	check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "a.example", RunID: 1, Outcome: store.OutcomeNoCatalog,
		Definitive: true, Fetches: []store.Fetched{
			{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: u, FetchedAt: c.now(),
				Status: 304, ETag: `"v1"`, SHA256: "sha-1", Size: int64(len(body)), FinalURL: u, NotModified: true}},
			{Observation: store.Observation{Domain: "a.example", Kind: "card", URL: card, FetchedAt: c.now(),
				Status: 200, LastModified: "Mon, 30 Nov 2026 10:00:00 GMT", SHA256: "sha-2", Size: int64(len(cardBody)),
				FinalURL: card + "?v=2", Redirects: []string{card}}, Body: cardBody},
		}}))
	v, ok, err = st.LastValidators(ctx, card)
	check(t, err)
	diff(t, "validators of a fetch saved with its domain",
		store.Validators{LastModified: "Mon, 30 Nov 2026 10:00:00 GMT", SHA256: "sha-2", FinalURL: card + "?v=2"}, v)
	if !ok {
		t.Error("no validators after a fetch saved with its domain")
	}
	got, err = st.Document(ctx, "sha-2")
	check(t, err)
	diff(t, "body saved with its domain", cardBody, got)
	last, _, err = st.LastFetch(ctx, card)
	check(t, err)
	diff(t, "the last fetch saved with its domain", store.LastFetch{FetchedAt: c.now(), Status: 200, SHA256: "sha-2"}, last)
}

func testRuns(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	first, err := st.StartRun(ctx, store.RunStart{Host: "h", PID: 1})
	check(t, err)
	second, err := st.StartRun(ctx, store.RunStart{Host: "h", PID: 2})
	check(t, err)
	n, err := st.AbandonDeadRuns(ctx, "h", func(pid int) bool { return pid == 2 })
	check(t, err)
	if n != 1 {
		t.Errorf("abandoned %d run(s), want 1", n)
	}
	check(t, st.FinishRun(second, store.RunDone, map[string]int{"crawled": 0}))
	runs, err := st.UnsettledRuns(ctx)
	check(t, err)
	diff(t, "unsettled runs", []int64{first}, runs)
	check(t, st.SettleRun(ctx, first))
	runs, err = st.UnsettledRuns(ctx)
	check(t, err)
	if len(runs) != 0 {
		t.Errorf("unsettled after settling: %v", runs)
	}
}

func testProbes(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	const ep = "https://one.example/mcp"
	run, err := st.StartRun(ctx, store.RunStart{})
	check(t, err)
	_, err = st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: run})
	check(t, err)
	check(t, st.SaveDomain(ctx, result("a.example", run, ep)))
	var pending []string
	check(t, st.PendingProbes(ctx, "a.example", func(p store.PendingRemote) error {
		pending = append(pending, p.Norm+" "+p.CardSHA256)
		return nil
	}))
	diff(t, "pending before a decision", []string{ep + " h-a.example"}, pending)
	if done, err := st.DecidedInRun(ctx, run, ep); err != nil || done {
		t.Fatalf("decided before deciding: %v, %v", done, err)
	}
	check(t, st.AddProbeDecision(ctx, store.ProbeDecision{RunID: run, RemoteNorm: ep, URL: ep, Decision: "probe", Reason: "new"}))
	if done, err := st.DecidedInRun(ctx, run, ep); err != nil || !done {
		t.Fatalf("not decided after deciding: %v, %v", done, err)
	}
	// Decided to probe, not probed yet: still pending, for a later run.
	check(t, st.FinishRun(run, store.RunInterrupted, nil))
	var left []string
	check(t, st.PendingProbeDomains(ctx, run, func(d string) error { left = append(left, d); return nil }))
	diff(t, "domains with pending probes", []string{"a.example"}, left)

	tools := 3
	check(t, st.AddProbe(ctx, run, store.ProbeRow{RemoteNorm: ep, URL: ep, ProbedAt: c.now().Format(time.RFC3339Nano),
		Outcome: "ok", ToolCount: &tools, CardSHA256: "h-a.example", Result: `{"partial":true}`}))
	at, sha, ok, err := st.LastProbe(ctx, ep)
	check(t, err)
	if !ok || !at.Equal(c.now()) || sha != "h-a.example" {
		t.Errorf("last probe %v %q %v", at, sha, ok)
	}
	ps, err := st.Probes(ctx)
	check(t, err)
	if len(ps) != 1 || ps[0].Outcome != "ok" || ps[0].ToolCount == nil || *ps[0].ToolCount != 3 || !ps[0].Partial {
		t.Errorf("probes %+v", ps)
	}
	left = nil
	check(t, st.PendingProbeDomains(ctx, run, func(d string) error { left = append(left, d); return nil }))
	if len(left) != 0 {
		t.Errorf("pending after the probe: %v", left)
	}
}

// testDecisionsWithResult: decisions written with a domain's result leave
// out those its run already has (another domain lists the endpoint too)
// and say so; another run decides afresh.
func testDecisionsWithResult(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	const ep = "https://shared.example/mcp"
	skip := func(run int64) []store.ProbeDecision {
		return []store.ProbeDecision{{RunID: run, RemoteNorm: ep, URL: ep, Decision: "skip", Reason: "probe_disabled"}}
	}
	run, err := st.StartRun(ctx, store.RunStart{})
	check(t, err)
	_, err = st.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{RunID: run})
	check(t, err)
	a, b := result("a.example", run, ep), result("b.example", run, ep)
	a.Decisions, b.Decisions = skip(run), skip(run)
	check(t, st.SaveDomain(ctx, a))
	check(t, st.SaveDomain(ctx, b))
	diff(t, "repeated (a.example, b.example)", []bool{false, true}, []bool{a.Decisions[0].Repeated, b.Decisions[0].Repeated})
	if done, err := st.DecidedInRun(ctx, run, ep); err != nil || !done {
		t.Fatalf("decided in run: %v, %v", done, err)
	}
	check(t, st.FinishRun(run, store.RunDone, nil))

	next, err := st.StartRun(ctx, store.RunStart{})
	check(t, err)
	c.add(time.Hour)
	_, err = st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{RunID: next, Force: true})
	check(t, err)
	again := result("a.example", next, ep)
	again.Decisions = skip(next)
	check(t, st.SaveDomain(ctx, again))
	if again.Decisions[0].Repeated {
		t.Error("a new run's decision taken for a repeat of the last run's")
	}
	if done, err := st.DecidedInRun(ctx, next, ep); err != nil || !done {
		t.Fatalf("decided in the next run: %v, %v", done, err)
	}
}

func testRegistry(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	const src = "https://registry.example"
	pick := func(vs []store.RegistryVersion) string {
		best := ""
		for _, v := range vs {
			best = max(best, v.Version)
		}
		return best
	}
	bad := finding.List{{Severity: finding.Error, Code: "schema_unknown", Path: "/$schema", Message: "m"}}
	state := store.RegistrySyncState{Source: src, Watermark: "2025-08-07T13:15:04.28Z", Pages: 1, Entries: 1}
	check(t, st.WriteRegistry(ctx, store.RegistryWrite{Source: src, PickLatest: pick, State: &state, Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "1", Status: "active", PublishedAt: "2025-08-07T13:15:04Z", ServerJSON: `{"v":1}`,
			Findings: bad, JudgedBy: "registry/test"}}}))
	c.add(time.Hour)
	check(t, st.WriteRegistry(ctx, store.RegistryWrite{Source: src, PickLatest: pick, Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "2", Status: "active", ServerJSON: `{"v":2}`}}}))
	es, err := st.RegistryEntries(ctx, store.RegistryFilter{Source: src})
	check(t, err)
	if len(es) != 2 || es[0].IsLatest || !es[1].IsLatest {
		t.Fatalf("entries %+v: want 1 then 2, 2 latest", es)
	}
	diff(t, "findings read back", bad, es[0].Findings)
	if es[0].JudgedBy != "registry/test" || es[0].PublishedAt != "2025-08-07T13:15:04.000000000Z" {
		t.Errorf("entry 1: judged by %q, published %q (want the fixed-width form)", es[0].JudgedBy, es[0].PublishedAt)
	}
	var latest []string
	check(t, st.EachLatestRegistryEntry(ctx, func(e store.RegistryEntry) error {
		latest = append(latest, e.Name+"@"+e.Version)
		return nil
	}))
	diff(t, "latest entries", []string{"com.example/a@2"}, latest)
	n, err := st.CountRegistryEntries(ctx, "")
	check(t, err)
	if n != 2 {
		t.Errorf("count %d, want 2", n)
	}
	got, err := st.RegistrySyncState(ctx, src)
	check(t, err)
	if got.Watermark != "2025-08-07T13:15:04.280000000Z" || got.Pages != 1 {
		t.Errorf("sync state %+v", got)
	}
	check(t, st.SaveRegistrySyncState(ctx, store.RegistrySyncState{Source: src, LastError: "boom"}))
	if got, err = st.RegistrySyncState(ctx, src); err != nil || got.LastError != "boom" || got.Watermark != "" {
		t.Errorf("sync state after saving on its own: %+v, %v", got, err)
	}
}

func testReconcile(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	write := func(rows ...store.ReconcileRow) store.ReconcileWriter {
		w, err := st.NewReconcileWriter(ctx)
		check(t, err)
		for _, r := range rows {
			check(t, w.Add(ctx, r))
		}
		return w
	}
	check(t, write(store.ReconcileRow{Kind: "card_only", CardKey: "k1"}, store.ReconcileRow{Kind: "registry_only", Name: "n"}).Commit(ctx))
	write(store.ReconcileRow{Kind: "card_only", CardKey: "dropped"}).Abort(ctx)
	rows, err := st.ReconcileResults(ctx)
	check(t, err)
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, r.Kind+":"+r.CardKey+r.Name)
		if r.Diffs != "[]" || r.ComputedAt == "" {
			t.Errorf("row %+v: want diffs [] and a computation time", r)
		}
	}
	diff(t, "stored reconciliation, in order", []string{"card_only:k1", "registry_only:n"}, kinds)
	check(t, write(store.ReconcileRow{Kind: "pair", CardKey: "k2", Name: "m", Diffs: `[{"field":"title"}]`}).Commit(ctx))
	rows, err = st.ReconcileResults(ctx)
	check(t, err)
	if len(rows) != 1 || rows[0].Kind != "pair" || rows[0].Diffs != `[{"field":"title"}]` {
		t.Errorf("a new reconciliation replaces the old as a whole: %+v", rows)
	}
}

func testNamespaces(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	_, err := st.Enqueue(ctx, []string{"b.example", "a.example", "c.example"}, store.EnqueueOptions{})
	check(t, err)
	check(t, st.SaveDomain(ctx, result("b.example", 1)))
	check(t, st.SaveDomain(ctx, result("a.example", 1)))
	org := result("c.example", 1)
	org.Cards[0].Name, org.Cards[0].JSON = "org.example/c", []byte(`{"name":"org.example/c"}`)
	check(t, st.SaveDomain(ctx, org))
	check(t, st.WriteRegistry(ctx, store.RegistryWrite{Source: "r", Entries: []store.RegistryEntry{
		{Name: "com.example/a.example", Version: "1", ReportedLatest: true, ServerJSON: `{}`},
		{Name: "net.example/z", Version: "1", ReportedLatest: true, ServerJSON: `{}`}}}))
	var names []string
	check(t, st.EachNamedDoc(ctx, nil, func(d store.NamedDoc) error { names = append(names, d.Name); return nil }))
	diff(t, "named documents in byte order", []string{"com.example/a.example", "com.example/a.example", "com.example/b.example",
		"net.example/z", "org.example/c"}, names)

	sweep := st.StartNamespaceSweep()
	check(t, sweep.Save(ctx, []store.NamespaceRow{
		{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http", Result: `{"ok":true}`, CheckedAt: "2026-11-01T12:00:00Z"},
		{Namespace: "net.example", Kind: "domain", Domain: "example.net"},
		{Namespace: "org.example", Kind: "domain", Domain: "example.org"}}))
	check(t, sweep.Finish(ctx))
	c.add(time.Minute)
	// c.example stops listing its card, so nothing names org.example; a
	// later sweep names the others, and only classifies com.example: the
	// earlier check's outcome stays; org.example goes.
	check(t, st.SaveDomain(ctx, store.DomainResult{Domain: "c.example", RunID: 2, Outcome: store.OutcomeNoCatalog,
		Definitive: true, Class: "http_404", Reason: "gone"}))
	sweep = st.StartNamespaceSweep()
	check(t, sweep.Save(ctx, []store.NamespaceRow{{Namespace: "com.example", Kind: "domain", Domain: "example.com"},
		{Namespace: "net.example", Kind: "domain", Domain: "example.net"}}))
	check(t, sweep.Finish(ctx))
	rows, err := st.Namespaces(ctx)
	check(t, err)
	diff(t, "namespaces", []store.NamespaceRow{{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http",
		Result: `{"ok":true}`, CheckedAt: "2026-11-01T12:00:00.000000000Z"},
		{Namespace: "net.example", Kind: "domain", Domain: "example.net", Result: "{}"}}, rows)
	r, ok, err := st.Namespace(ctx, "com.example")
	check(t, err)
	if !ok || r.Method != "http" {
		t.Errorf("namespace com.example: %+v, %v", r, ok)
	}
	if _, ok, err := st.Namespace(ctx, "org.example"); err != nil || ok {
		t.Errorf("org.example still stored (%v)", err)
	}
	if !slices.IsSorted(names) {
		t.Errorf("names not sorted: %v", names)
	}
}

// testJudgements: documents judged by another rules version are listed
// with their stored body, and a new judgement replaces findings and
// version, so the document is not listed again.
func testJudgements(t *testing.T, open Open) {
	ctx, c := context.Background(), newClock()
	st := open(t, c.now)
	body := []byte(`{"name":"com.example/a.example"}`)
	check(t, st.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "card", URL: "https://a.example/card",
		FetchedAt: c.now(), Status: 200, SHA256: "h-a.example"}, Body: body}))
	_, err := st.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{})
	check(t, err)
	check(t, st.SaveDomain(ctx, result("a.example", 1)))
	var stale []store.Judged
	check(t, st.EachStaleCard(ctx, "servercard/next", func(j store.Judged) error { stale = append(stale, j); return nil }))
	if len(stale) != 1 || string(stale[0].Body) != string(body) || stale[0].JudgedBy != "servercard/test" {
		t.Fatalf("stale cards %+v", stale)
	}
	check(t, st.SaveCardJudgement(ctx, store.Judgement{Key: stale[0].Key, SHA256: stale[0].SHA256, Grade: "near_conformant",
		JudgedBy: "servercard/next"}))
	stale = nil
	check(t, st.EachStaleCard(ctx, "servercard/next", func(j store.Judged) error { stale = append(stale, j); return nil }))
	if len(stale) != 0 {
		t.Errorf("still stale after re-judging: %+v", stale)
	}
	var catalogs []string
	check(t, st.EachStaleCatalog(ctx, "catalog/next", func(j store.Judged) error { catalogs = append(catalogs, j.Key); return nil }))
	diff(t, "stale catalogs", []string{"https://a.example/.well-known/ai-catalog.json"}, catalogs)

	check(t, st.WriteRegistry(ctx, store.RegistryWrite{Source: "r", Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "1", ServerJSON: `{}`, JudgedBy: "registry/old"}}}))
	var entries []store.StaleRegistryEntry
	check(t, st.EachStaleRegistryEntry(ctx, "registry/new", func(e store.StaleRegistryEntry) error {
		entries = append(entries, e)
		return nil
	}))
	if len(entries) != 1 {
		t.Fatalf("stale entries %+v", entries)
	}
	entries[0].Findings = finding.List{{Severity: finding.Error, Code: "schema_field_required", Message: "m"}}
	check(t, st.SaveRegistryJudgement(ctx, entries[0], "registry/new"))
	es, err := st.RegistryEntries(ctx, store.RegistryFilter{})
	check(t, err)
	if len(es) != 1 || es[0].JudgedBy != "registry/new" || !es[0].Findings.HasError() {
		t.Errorf("entry after re-validation %+v", es)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

func open(t *testing.T, path string, now func() time.Time) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// feedVersion is the store's change counter, as serve's ETags read it.
func feedVersion(t *testing.T, db *store.DB) string {
	t.Helper()
	v, err := db.FeedVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenTwiceKeepsData(t *testing.T) { eachDialect(t, testOpenTwiceKeepsData) }

func testOpenTwiceKeepsData(t *testing.T, path string) {
	ctx := context.Background()
	db := open(t, path, nil)
	if _, err := db.Enqueue(ctx, []string{"example.com"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2 := open(t, path, nil) // migrations must not re-run
	rows, err := db2.Domains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Domain != "example.com" || rows[0].State != store.StatePending {
		t.Errorf("domains after reopen = %+v", rows)
	}
}

// TestEnqueueFreshness checks the frontier: new and due domains are handed
// out, fresh ones are not unless forced, and pending ones always are.
func TestEnqueueFreshness(t *testing.T) { eachDialect(t, testEnqueueFreshness) }

func testEnqueueFreshness(t *testing.T, dsn string) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db := open(t, dsn, clock)
	ctx := context.Background()
	all := []string{"a.example", "b.example", "c.example"}
	got, err := db.Enqueue(ctx, all, store.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, got.Due); diff != "" || got.Fresh != 0 {
		t.Fatalf("first enqueue: due diff %s, fresh %d", diff, got.Fresh)
	}
	// a: fresh for an hour; b: due already; c: left pending (interrupted).
	for d, next := range map[string]time.Time{"a.example": now.Add(time.Hour), "b.example": now.Add(-time.Minute)} {
		if err := db.SaveDomain(ctx, store.DomainResult{Domain: d, Outcome: store.OutcomeNoCatalog, Class: "http_404",
			NextFetchAfter: next, Definitive: true}); err != nil {
			t.Fatal(err)
		}
	}
	got, err = db.Enqueue(ctx, all, store.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b.example", "c.example"}, got.Due); diff != "" {
		t.Errorf("due (-want +got):\n%s", diff)
	}
	if got.Fresh != 1 {
		t.Errorf("fresh = %d, want 1 (a.example)", got.Fresh)
	}
	got, err = db.Enqueue(ctx, all, store.EnqueueOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, got.Due); diff != "" {
		t.Errorf("forced due (-want +got):\n%s", diff)
	}
}

// TestEnqueueDuplicatesPerRun: a run that is handed a name twice (in two
// batches) crawls it once; another run takes it on again.
func TestEnqueueDuplicatesPerRun(t *testing.T) { eachDialect(t, testEnqueueDuplicatesPerRun) }

func testEnqueueDuplicatesPerRun(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	first, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{RunID: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.Enqueue(ctx, []string{"b.example", "c.example", "c.example"}, store.EnqueueOptions{RunID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.example", "b.example"}, first.Due); diff != "" {
		t.Errorf("first batch due (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(store.Enqueued{Due: []string{"c.example"}, Duplicates: 2}, again); diff != "" {
		t.Errorf("second batch (-want +got):\n%s", diff)
	}
	next, err := db.Enqueue(ctx, []string{"b.example"}, store.EnqueueOptions{RunID: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(store.Enqueued{Due: []string{"b.example"}}, next); diff != "" {
		t.Errorf("another run (-want +got):\n%s", diff)
	}
}

func result(domain string, remotes ...string) store.DomainResult {
	r := store.DomainResult{Domain: domain, Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: "https://" + domain + "/.well-known/ai-catalog.json"}
	card := store.CardRecord{Key: "https://" + domain + "/card", SHA256: "h-" + domain, Name: "com.example/x",
		Grade: "conformant", JSON: []byte(`{}`)}
	r.Cards = append(r.Cards, card)
	for _, u := range remotes {
		r.Remotes = append(r.Remotes, store.RemoteRecord{URLNorm: u, URL: u, Type: "streamable-http", CardKey: card.Key, JSON: []byte(`{}`)})
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: card.Key, RemoteNorm: u})
	}
	return r
}

func endpoints(t *testing.T, db *store.DB) []string {
	t.Helper()
	ss, err := db.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.EndpointNorm)
	}
	return out
}

func TestSaveDomainIsIdempotentAndRetiresListings(t *testing.T) {
	eachDialect(t, testSaveDomainIsIdempotentAndRetiresListings)
}

func testSaveDomainIsIdempotentAndRetiresListings(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r := result("a.example", "https://one.example/mcp", "https://two.example/mcp")
	for range 2 {
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"https://one.example/mcp", "https://two.example/mcp"}, endpoints(t, db)); diff != "" {
		t.Errorf("after two saves (-want +got):\n%s", diff)
	}
	// The domain stops listing two: it leaves the server list, its row stays.
	if err := db.SaveDomain(ctx, result("a.example", "https://one.example/mcp")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://one.example/mcp"}, endpoints(t, db)); diff != "" {
		t.Errorf("after retiring (-want +got):\n%s", diff)
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM listings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d listing rows, want 2 (history kept, one retired)", n)
	}
	// A transient failure keeps what was listed.
	if err := db.SaveDomain(ctx, store.DomainResult{Domain: "a.example", Outcome: store.OutcomeFailed, Class: "http_5xx"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://one.example/mcp"}, endpoints(t, db)); diff != "" {
		t.Errorf("after a transient failure (-want +got):\n%s", diff)
	}
}

func TestObservationsAndValidators(t *testing.T) { eachDialect(t, testObservationsAndValidators) }

func testObservationsAndValidators(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	u := "https://a.example/.well-known/ai-catalog.json"
	if _, ok, err := db.LastValidators(ctx, u); err != nil || ok {
		t.Fatalf("validators before any fetch: ok=%v err=%v", ok, err)
	}
	body := []byte(`{"specVersion":"1.0","entries":[]}`)
	if err := db.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: u, Status: 200,
		ETag: `"v1"`, SHA256: "abc", FinalURL: u, FetchedAt: time.Now()}, Body: body}); err != nil {
		t.Fatal(err)
	}
	// A 304 carries no body: the validators still come from the 200.
	if err := db.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: u, Status: 304,
		NotModified: true, FetchedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	v, ok, err := db.LastValidators(ctx, u)
	if err != nil || !ok {
		t.Fatalf("validators: ok=%v err=%v", ok, err)
	}
	if diff := cmp.Diff(store.Validators{ETag: `"v1"`, SHA256: "abc", FinalURL: u}, v); diff != "" {
		t.Errorf("validators (-want +got):\n%s", diff)
	}
	got, err := db.Document(ctx, "abc")
	if err != nil || string(got) != string(body) {
		t.Errorf("document = %q, %v", got, err)
	}
}

// TestTimesSortAsText: stored times are compared as text (next_fetch_after),
// so a whole second must not sort after a fraction of it.
func TestTimesSortAsText(t *testing.T) { eachDialect(t, testTimesSortAsText) }

func testTimesSortAsText(t *testing.T, dsn string) {
	base := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var clock time.Time
	db := open(t, dsn, func() time.Time { return clock })
	var stamps []string
	for _, d := range []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond} {
		clock = base.Add(d)
		stamps = append(stamps, db.Now())
	}
	for i := 1; i < len(stamps); i++ {
		if stamps[i-1] >= stamps[i] {
			t.Errorf("%q does not sort before %q", stamps[i-1], stamps[i])
		}
	}
}

func TestAbandonDeadRuns(t *testing.T) { eachDialect(t, testAbandonDeadRuns) }

func testAbandonDeadRuns(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	start := func(host string, pid int) int64 {
		id, err := db.StartRun(ctx, store.RunStart{Options: map[string]any{}, Host: host, PID: pid})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	dead, live, elsewhere := start("here", 101), start("here", 102), start("there", 103)
	finished := start("here", 104)
	if err := db.FinishRun(finished, store.RunDone, nil); err != nil {
		t.Fatal(err)
	}
	n, err := db.AbandonDeadRuns(ctx, "here", func(pid int) bool { return pid == 102 })
	if err != nil || n != 1 {
		t.Fatalf("AbandonDeadRuns = %d, %v; want 1", n, err)
	}
	got := map[int64]string{}
	rows, err := db.SQL().Query(`SELECT id, status FROM runs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		got[id] = s
	}
	want := map[int64]string{dead: "abandoned", live: "running", elsewhere: "running", finished: "done"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run statuses (-want +got):\n%s", diff)
	}
}

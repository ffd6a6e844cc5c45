package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// bigCardResult is a domain whose one large card (cardBytes of JSON)
// declares n remotes: the shape that drove a crawl to an OOM kill when
// every pending remote carried the whole card.
func bigCardResult(domain string, runID int64, n, cardBytes int) store.DomainResult {
	r := store.DomainResult{Domain: domain, RunID: runID, Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: "https://" + domain + "/.well-known/ai-catalog.json"}
	type remote struct{ Type, URL string }
	card := struct {
		Name, Version, Description string
		Remotes                    []remote
	}{Name: "com.example/big", Version: "1.0.0"}
	for i := range n {
		card.Remotes = append(card.Remotes, remote{"streamable-http", fmt.Sprintf("https://m%d.%s/mcp", i, domain)})
	}
	raw, _ := json.Marshal(card)
	card.Description = strings.Repeat("x", max(0, cardBytes-len(raw)))
	raw, _ = json.Marshal(card)
	key := "https://" + domain + "/card"
	r.Cards = []store.CardRecord{{Key: key, SHA256: "sha-" + domain, Name: card.Name, Version: card.Version,
		Grade: "conformant", JSON: raw}}
	for _, m := range card.Remotes {
		rj, _ := json.Marshal(m)
		r.Remotes = append(r.Remotes, store.RemoteRecord{URLNorm: m.URL, URL: m.URL, Type: m.Type, CardKey: key, JSON: rj})
		r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: r.CatalogURL, Identifier: "big", CardKey: key, RemoteNorm: m.URL})
	}
	return r
}

// save enqueues and saves a domain result, as a crawl does.
func save(tb testing.TB, db *store.DB, r store.DomainResult) {
	tb.Helper()
	ctx := context.Background()
	if _, err := db.Enqueue(ctx, []string{r.Domain}, store.EnqueueOptions{RunID: r.RunID}); err != nil {
		tb.Fatal(err)
	}
	if err := db.SaveDomain(ctx, r); err != nil {
		tb.Fatal(err)
	}
}

// rowBytes is how many bytes of strings one value holds.
func rowBytes(v any) int {
	n := 0
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.String {
			n += f.Len()
		}
	}
	return n
}

func pending(t *testing.T, db *store.DB, domain string) []store.PendingRemote {
	t.Helper()
	var out []store.PendingRemote
	if err := db.PendingProbes(context.Background(), domain, func(p store.PendingRemote) error {
		out = append(out, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// pendingDomains lists the domains with pending remotes of every stopped,
// unsettled run.
func pendingDomains(t *testing.T, db *store.DB) []string {
	t.Helper()
	runs, err := db.UnsettledRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, run := range runs {
		if err := db.PendingProbeDomains(context.Background(), run, func(d string) error {
			out = append(out, d)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestPendingProbesCarryNoCard: the remotes a stopped run left undecided
// stream a page at a time, and no row carries the card: memory follows the
// remotes, not remotes × card size.
func TestPendingProbesCarryNoCard(t *testing.T) { eachDialect(t, testPendingProbesCarryNoCard) }

func testPendingProbesCarryNoCard(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	run, err := db.StartRun(ctx, store.RunStart{Host: "h", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	const remotes, cardBytes = 3000, 256 << 10
	save(t, db, bigCardResult("big.example", run, remotes, cardBytes))
	if err := db.FinishRun(run, store.RunAbandoned, nil); err != nil {
		t.Fatal(err)
	}
	rows := pending(t, db, "big.example")
	if len(rows) != remotes {
		t.Fatalf("%d pending remotes, want %d", len(rows), remotes)
	}
	for _, p := range rows {
		if n := rowBytes(p); n > 1024 {
			t.Fatalf("a pending remote carries %d bytes (card %d bytes): %.80s…", n, cardBytes, fmt.Sprint(p))
		}
	}
	if p := rows[0]; p.CardName != "com.example/big" || p.CardVersion != "1.0.0" || p.CardSHA256 != "sha-big.example" {
		t.Errorf("first pending remote = %+v, want the card's name, version and hash", p)
	}
}

// TestPendingProbesScope: a remote is pending until a decision about it is
// recorded in or after its domain's last crawl (or until the probe a
// decision asked for is stored), and only domains whose last run stopped
// without finishing are handed out: a concurrent run's work is its own, and
// a settled run is not searched again.
func TestPendingProbesScope(t *testing.T) { eachDialect(t, testPendingProbesScope) }

func testPendingProbesScope(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	dead, _ := db.StartRun(ctx, store.RunStart{Host: "h", PID: 1})
	live, _ := db.StartRun(ctx, store.RunStart{Host: "h", PID: 2})
	save(t, db, bigCardResult("a.example", dead, 3, 100))
	save(t, db, bigCardResult("b.example", live, 2, 100))
	if err := db.FinishRun(dead, store.RunInterrupted, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.example"}, pendingDomains(t, db)); diff != "" {
		t.Errorf("domains with pending probes (-want +got):\n%s", diff)
	}
	m := func(i int) string { return fmt.Sprintf("https://m%d.a.example/mcp", i) }
	// m0 skipped, m1 to be probed (and never was), m2 probed.
	for i, d := range []string{"skip", "probe", "probe"} {
		if err := db.AddProbeDecision(ctx, store.ProbeDecision{RunID: dead, RemoteNorm: m(i), URL: m(i), Decision: d, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddProbe(ctx, dead, store.ProbeRow{RemoteNorm: m(2), URL: m(2), Outcome: "ok", Result: "{}"}); err != nil {
		t.Fatal(err)
	}
	var norms []string
	for _, p := range pending(t, db, "a.example") {
		norms = append(norms, p.Norm)
	}
	if diff := cmp.Diff([]string{m(1)}, norms); diff != "" {
		t.Errorf("pending remotes of a.example (-want +got):\n%s", diff)
	}
	if err := db.FinishRun(live, store.RunFailed, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.example", "b.example"}, pendingDomains(t, db)); diff != "" {
		t.Errorf("after the live run failed (-want +got):\n%s", diff)
	}
	if err := db.SettleRun(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b.example"}, pendingDomains(t, db)); diff != "" {
		t.Errorf("after settling the first run (-want +got):\n%s", diff)
	}
	decided, err := db.DecidedInRun(ctx, dead, m(0))
	if err != nil || !decided {
		t.Errorf("DecidedInRun(m0) = %v, %v; want true", decided, err)
	}
}

// BenchmarkPendingProbesBigCard reports the bytes allocated to stream the
// pending remotes of one 256 KiB card with 3,000 remotes
// (go test -bench PendingProbesBigCard -benchmem ./store).
func BenchmarkPendingProbesBigCard(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "x.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	run, _ := db.StartRun(ctx, store.RunStart{Host: "h", PID: 1})
	save(b, db, bigCardResult("big.example", run, 3000, 256<<10))
	if err := db.FinishRun(run, store.RunAbandoned, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := db.PendingProbes(ctx, "big.example", func(store.PendingRemote) error { n++; return nil }); err != nil || n != 3000 {
			b.Fatalf("%d rows, %v", n, err)
		}
	}
}

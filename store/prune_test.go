package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestPrune: history older than the cutoff goes, except what is read as
// current (each URL's latest fetch and latest fetch with a body, each
// endpoint's latest decision, latest probe, latest ok probe and the
// probes of its latest decision's run, the documents those, the cards and
// the catalogs name); a dry run counts the same and drops nothing; a
// second prune finds nothing; the feed's probe counts stay whole.
func TestPrune(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testPrune(t, filepath.Join(t.TempDir(), "p.db")) })
	t.Run("postgres", func(t *testing.T) { testPrune(t, pgtest.NewDB(t)) })
}

func testPrune(t *testing.T, dsn string) {
	ctx := context.Background()
	day := func(n int) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n) }
	clock := day(0)
	db, err := Open(ctx, dsn, Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const card, cat, other = "https://a.example/card", "https://a.example/.well-known/ai-catalog.json", "https://b.example/x"
	const endpoint = "https://mcp.a.example/one"
	fetch := func(url string, d int, sha string, notModified bool) Fetched {
		f := Fetched{Observation: Observation{Domain: "a.example", Kind: "catalog", URL: url, FetchedAt: day(d), Status: 200,
			SHA256: sha, NotModified: notModified}}
		if sha != "" && !notModified {
			f.Body = []byte("body " + sha)
		}
		if sha == "" {
			f.Status, f.Class = 0, "timeout"
		}
		return f
	}
	if err := db.AddObservations(ctx,
		fetch(cat, 1, "h1", false), fetch(cat, 2, "h2", false), fetch(cat, 3, "h2", true), fetch(cat, 4, "", false),
		fetch(other, 1, "h4", false), fetch(other, 2, "", false),
		fetch(card, 1, "h-a.example", false), fetch(card, 2, "h5", false),
	); err != nil {
		t.Fatal(err)
	}
	// The domain's card (hash h-a.example) is saved on day 3, its catalog
	// fetched again on day 40, after the cutoff.
	if _, err := db.Enqueue(ctx, []string{"a.example"}, EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r := DomainResult{Domain: "a.example", Outcome: OutcomeCatalog, Definitive: true, CatalogURL: cat,
		Cards: []CardRecord{{Key: card, SHA256: "h-a.example", Name: "com.example/x", Grade: "conformant", JSON: []byte(`{}`)}},
		Remotes: []RemoteRecord{{URLNorm: endpoint, URL: endpoint, Type: "streamable-http", CardKey: card,
			JSON: []byte(`{}`)}},
		Listings: []ListingRecord{{CatalogURL: cat, Identifier: "i", CardKey: card, RemoteNorm: endpoint}}}
	clock = day(3)
	if err := db.SaveDomain(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := db.AddObservations(ctx, fetch(cat, 40, "h3", false)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		run int64
		day int
	}{{1, 1}, {3, 3}} {
		clock = day(d.day)
		if err := db.AddProbeDecision(ctx, ProbeDecision{RunID: d.run, RemoteNorm: endpoint, URL: endpoint, Decision: "probe",
			Reason: "warranted"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct {
		run     int64
		day     int
		outcome string
	}{{1, 1, "ok"}, {2, 2, "ok"}, {2, 2, "timeout"}, {3, 3, "timeout"}, {4, 4, "timeout"}} {
		if err := db.AddProbe(ctx, p.run, ProbeRow{RemoteNorm: endpoint, URL: endpoint, ProbedAt: ts(day(p.day)),
			Outcome: p.outcome, Result: `{}`}); err != nil {
			t.Fatal(err)
		}
	}
	clock = day(41)

	const (
		observations = `SELECT url, substr(fetched_at, 1, 10), sha256 FROM observations ORDER BY url, id`
		documents    = `SELECT sha256 FROM documents ORDER BY sha256`
		probes       = `SELECT run_id, outcome FROM probes ORDER BY id`
		decisions    = `SELECT run_id FROM probe_decisions ORDER BY id`
		outcomes     = `SELECT outcome, probe_count FROM probe_outcomes ORDER BY outcome`
	)
	all := func() [][][]string {
		return [][][]string{rowsOf(t, db, observations), rowsOf(t, db, documents), rowsOf(t, db, probes),
			rowsOf(t, db, decisions), rowsOf(t, db, outcomes)}
	}
	version := func() string {
		t.Helper()
		v, err := db.FeedVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before, v0 := all(), version()
	opts := PruneOptions{Before: day(30), DryRun: true}
	dry, err := db.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, all()); diff != "" || version() != v0 {
		t.Fatalf("a dry run changed the database (-before +after):\n%s", diff)
	}
	opts.DryRun = false
	got, err := db.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := PruneResult{Observations: 5, Decisions: 1, Probes: 2, Documents: 2,
		DocumentBytes: int64(len("body h1") + len("body h2"))}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pruned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, dry); diff != "" {
		t.Errorf("dry run (-want +got):\n%s", diff)
	}
	wantRows := [][][]string{
		{ // the catalog's and the card's latest (each also its latest with a body), and b's latest and latest with a body
			{cat, "2026-02-10", "h3"}, {card, "2026-01-03", "h5"}, {other, "2026-01-02", "h4"}, {other, "2026-01-03", ""}},
		{{"h-a.example"}, {"h3"}, {"h4"}, {"h5"}},
		{{"2", "ok"}, {"3", "timeout"}, {"4", "timeout"}}, // the latest ok, one of the latest decision's run, the latest
		{{"3"}},
		{{"ok", "2"}, {"timeout", "3"}},
	}
	if diff := cmp.Diff(wantRows, all()); diff != "" {
		t.Errorf("after the prune (-want +got):\n%s", diff)
	}
	v1 := version()
	if v1 == v0 {
		t.Errorf("the change counter stayed at %s: pages that list past probes would be served as they were", v0)
	}
	again, err := db.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again != (PruneResult{}) || version() != v1 {
		t.Errorf("a second prune dropped %+v, the counter %s → %s; want nothing", again, v1, version())
	}
}

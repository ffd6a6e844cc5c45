package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/store"
	"github.com/google/go-cmp/cmp"
)

const dump = `[{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
 "name":"io.github.example/weather","version":"1.0.0","description":"Forecasts",
 "remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp"}]}]`

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t *testing.T) *store.DB {
	t.Helper()
	return openDSN(t, filepath.Join(t.TempDir(), "p.db"))
}

func openDSN(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// eachDialect runs test on a SQLite file and on a PostgreSQL database.
func eachDialect(t *testing.T, test func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { test(t, open(t)) })
	t.Run("postgres", func(t *testing.T) { test(t, openDSN(t, pgtest.NewDB(t))) })
}

// An import is followed by the reconciliation and then the namespace list,
// both reading what the import stored.
func TestImportThenReconcileThenNamespaces(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	out, err := pipeline.Import(ctx, db, registry.ImportOptions{Source: "https://registry.example"}, []byte(dump), pipeline.Options{})
	if err != nil || out.SyncErr != nil {
		t.Fatalf("import: %v, %v", err, out.SyncErr)
	}
	if out.Result.Entries != 1 || out.Recomputed == nil {
		t.Fatalf("import stored %d entries, recomputed %v; want 1 and the steps after it", out.Result.Entries, out.Recomputed)
	}
	if got := out.Recomputed.Reconcile.RegistryOnly; got != 1 {
		t.Errorf("registry-only results = %d, want 1", got)
	}
	if got := out.Recomputed.Namespaces.Namespaces; got != 1 {
		t.Errorf("namespaces = %d, want 1", got)
	}
	rows, err := db.ReconcileResults(ctx)
	if err != nil || len(rows) != 1 || rows[0].Name != "io.github.example/weather" {
		t.Errorf("stored reconciliation %+v, %v", rows, err)
	}
	if _, ok, err := db.Namespace(ctx, "io.github.example"); err != nil || !ok {
		t.Errorf("namespace io.github.example stored = %v, %v", ok, err)
	}
	// The categories written after the namespace pass move the change
	// number; the namespaces' mark is taken after them, so ns=unknown
	// reads the namespaces never checked until the next change.
	var nsMarked, catMarked bool
	if err := db.SQL().QueryRow(`SELECT seq = namespaces_seq, seq = categories_seq FROM feed_state WHERE id = 1`).Scan(&nsMarked,
		&catMarked); err != nil {
		t.Fatal(err)
	}
	if !nsMarked || !catMarked {
		t.Errorf("after the recomputation: namespaces marked %v, categories marked %v; want both", nsMarked, catMarked)
	}
}

// After an interruption the steps do not run: the next run reconciles.
func TestInterruptedImportSkipsTheSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	db := open(t)
	out, err := pipeline.Import(ctx, db, registry.ImportOptions{Source: "https://registry.example"}, []byte(dump), pipeline.Options{})
	if err != nil || out.Recomputed != nil {
		t.Fatalf("import after cancel: recomputed %v, err %v; want neither", out.Recomputed, err)
	}
	if rows, err := db.ReconcileResults(context.Background()); err != nil || len(rows) != 0 {
		t.Errorf("stored reconciliation %+v, %v; want none", rows, err)
	}
}

// A recomputation that changed nothing is remembered with its inputs; the
// next one with the same inputs and build is skipped, and any write it reads
// (a Registry entry, a probe, a card, a listing) or another build runs it
// again. Network checks of namespaces always run.
func TestRecomputeSkipsWhenNothingItReadsChanged(t *testing.T) {
	eachDialect(t, testRecomputeSkipsWhenNothingItReadsChanged)
}

func testRecomputeSkipsWhenNothingItReadsChanged(t *testing.T, db *store.DB) {
	ctx := context.Background()
	opts := pipeline.Options{Build: "b1"}
	if _, err := pipeline.Import(ctx, db, registry.ImportOptions{Source: "https://registry.example"}, []byte(dump), opts); err != nil {
		t.Fatal(err)
	}
	// settle recomputes until a run is skipped and returns how many ran;
	// a run that wrote is repeated once before its inputs are recorded.
	settle := func(what string, opts pipeline.Options) int {
		t.Helper()
		for ran := 0; ran < 4; ran++ {
			rec, err := pipeline.Recompute(ctx, db, opts)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if rec.Skipped {
				return ran
			}
		}
		t.Fatalf("%s: four recomputations in a row ran", what)
		return 0
	}
	settle("after the import", opts)
	rec, err := pipeline.Recompute(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pipeline.Recomputed{Reconcile: reconcile.Counts{RegistryOnly: 1}, Skipped: true}, *rec); diff != "" {
		t.Errorf("nothing changed (-want +got):\n%s", diff)
	}

	changes := []struct {
		what   string
		change func() error
		opts   pipeline.Options
	}{
		{"a Registry entry", func() error {
			_, err := registry.ImportDump(ctx, registry.ImportOptions{Store: db, Source: "https://registry.example"},
				[]byte(strings.Replace(dump, "weather", "tides", -1)))
			return err
		}, opts},
		{"a probe of a Registry remote", func() error {
			return db.AddProbe(ctx, 0, store.ProbeRow{RemoteNorm: "https://mcp.weather.example/mcp",
				URL: "https://mcp.weather.example/mcp", ProbedAt: "2026-12-03T00:00:00Z", Outcome: "ok", Result: "{}"})
		}, opts},
		{"a card", func() error {
			if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
				return err
			}
			return db.SaveDomain(ctx, cardResult("a.example", "io.github.example/weather"))
		}, opts},
		{"the card's listing gone", func() error {
			r := cardResult("a.example", "io.github.example/weather")
			r.Listings = nil
			return db.SaveDomain(ctx, r)
		}, opts},
		{"another build", func() error { return nil }, pipeline.Options{Build: "b2"}},
	}
	for _, c := range changes {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		if ran := settle(c.what, c.opts); ran == 0 {
			t.Errorf("after %s the recomputation was skipped", c.what)
		}
		if ran := settle(c.what+", again", c.opts); ran != 0 {
			t.Errorf("after %s, settled, the recomputation ran %d time(s) more", c.what, ran)
		}
	}
	checked := opts
	checked.Namespaces.Checker = namespace.NewChecker(namespace.Options{})
	if rec, err := pipeline.Recompute(ctx, db, checked); err != nil || rec.Skipped {
		t.Errorf("with network checks: skipped %v, err %v; want a run", rec != nil && rec.Skipped, err)
	}
}

// cardResult is a domain's catalog listing one card named name, whose one
// remote is an endpoint of its own.
func cardResult(domain, name string) store.DomainResult {
	r := store.DomainResult{Domain: domain, Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: "https://" + domain + "/.well-known/ai-catalog.json"}
	card := store.CardRecord{Key: "https://" + domain + "/card", SHA256: "h-" + domain, Name: name, Grade: "conformant",
		JSON: []byte(`{"name":"` + name + `","version":"1.0.0"}`)}
	u := "https://mcp." + domain + "/mcp"
	r.Cards = []store.CardRecord{card}
	r.Remotes = []store.RemoteRecord{{URLNorm: u, URL: u, Type: "streamable-http", CardKey: card.Key, JSON: []byte(`{}`)}}
	r.Listings = []store.ListingRecord{{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: card.Key, RemoteNorm: u}}
	return r
}

// writeDuring is a store that another writer writes to while the
// reconciliation reads the cards.
type writeDuring struct {
	*store.DB
	write func() error
}

func (w writeDuring) EachListedCardStamp(ctx context.Context, fn func([]store.CardStamp) error) error {
	if err := w.write(); err != nil {
		return err
	}
	return w.DB.EachListedCardStamp(ctx, fn)
}

// A write by another process during a recomputation that itself changed
// nothing is not taken for part of its inputs: the next one runs.
func TestRecomputeMarksOnlyWhatItRead(t *testing.T) {
	eachDialect(t, testRecomputeMarksOnlyWhatItRead)
}

func testRecomputeMarksOnlyWhatItRead(t *testing.T, db *store.DB) {
	ctx := context.Background()
	opts := pipeline.Options{Build: "b1"}
	if _, err := pipeline.Import(ctx, db, registry.ImportOptions{Source: "https://registry.example"}, []byte(dump), opts); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second changes nothing
		if _, err := pipeline.Recompute(ctx, db, opts); err != nil {
			t.Fatal(err)
		}
	}
	// Another build's first run reads everything again, and would change
	// nothing itself.
	opts.Build = "b2"
	during := writeDuring{DB: db, write: func() error {
		return db.AddProbe(ctx, 0, store.ProbeRow{RemoteNorm: "https://mcp.weather.example/mcp",
			URL: "https://mcp.weather.example/mcp", ProbedAt: "2026-12-03T00:00:00Z", Outcome: "ok", Result: "{}"})
	}}
	if _, err := pipeline.Recompute(ctx, during, opts); err != nil {
		t.Fatal(err)
	}
	rec, err := pipeline.Recompute(ctx, db, opts)
	if err != nil || rec.Skipped {
		t.Errorf("after a write during the last recomputation: skipped %v, err %v; want a run", rec != nil && rec.Skipped, err)
	}
}

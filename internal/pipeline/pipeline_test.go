package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/store"
)

const dump = `[{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
 "name":"io.github.example/weather","version":"1.0.0","description":"Forecasts",
 "remotes":[{"type":"streamable-http","url":"https://mcp.weather.example/mcp"}]}]`

func open(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
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

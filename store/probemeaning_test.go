package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProbeMeaningBackfill: a database from before migration 0012 gets the
// probe_meaning AddProbe would have kept: for each endpoint, the latest
// probe's meaning and when it last changed (a re-probe that found the same
// does not count; a new tool count or partial flag does).
func TestProbeMeaningBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(ctx, path, Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	tools := func(n int) *int { return &n }
	for _, p := range []ProbeRow{
		{RemoteNorm: "https://a.example/mcp", Outcome: "ok"},
		{RemoteNorm: "https://b.example/mcp", Outcome: "ok", ToolCount: tools(2)},
		{RemoteNorm: "https://a.example/mcp", Outcome: "ok"},
		{RemoteNorm: "https://a.example/mcp", Outcome: "timeout"},
		{RemoteNorm: "https://b.example/mcp", Outcome: "ok", ToolCount: tools(3)},
		{RemoteNorm: "https://a.example/mcp", Outcome: "timeout"},
		{RemoteNorm: "https://c.example/mcp", Outcome: "ok", ToolCount: tools(3)},
		{RemoteNorm: "https://c.example/mcp", Outcome: "ok", ToolCount: tools(3), Result: `{"partial":true}`},
		{RemoteNorm: "https://c.example/mcp", Outcome: "ok", ToolCount: tools(3), Result: `{"partial":true}`},
	} {
		clock = clock.Add(time.Minute)
		p.URL, p.ProbedAt = p.RemoteNorm, clock.Format(time.RFC3339Nano)
		if err := db.AddProbe(ctx, 0, p); err != nil {
			t.Fatal(err)
		}
	}
	type row struct{ Norm, Meaning, ChangedAt string }
	read := func(db *DB) []row {
		t.Helper()
		rows, err := collect(ctx, db.sql, func(rows *sql.Rows) (row, error) {
			var r row
			err := rows.Scan(&r.Norm, &r.Meaning, &r.ChangedAt)
			return r, err
		}, `SELECT remote_norm, meaning, changed_at FROM probe_meaning ORDER BY remote_norm`)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	kept := read(db)
	at := func(minute int) string { return ts(time.Date(2026, 11, 1, 0, minute, 0, 0, time.UTC)) }
	want := []row{
		{"https://a.example/mcp", "timeout\x1f\x1f\x1f\x1f\x1f\x1ffalse", at(4)},
		{"https://b.example/mcp", "ok\x1f\x1f\x1f\x1f\x1f3\x1ffalse", at(5)},
		{"https://c.example/mcp", "ok\x1f\x1f\x1f\x1f\x1f3\x1ftrue", at(8)},
	}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("kept by AddProbe (-want +got):\n%s", diff)
	}
	for _, q := range []string{`DROP TABLE probe_meaning`, `DELETE FROM schema_migrations WHERE version = '0012_probe_meaning'`} {
		if _, err := db.sql.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if diff := cmp.Diff(kept, read(db)); diff != "" {
		t.Errorf("filled by the migration (-want kept by AddProbe, +got):\n%s", diff)
	}
}

// BenchmarkAddProbe stores probes of an endpoint only the Registry
// declares, whose outcome alternates: each keeps probe_meaning and moves
// the change counter.
func BenchmarkAddProbe(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "x.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const u = "https://only.example/mcp"
	if err := db.WriteRegistry(ctx, RegistryWrite{Source: "https://registry.example", Entries: []RegistryEntry{{
		Source: "https://registry.example", Name: "example.only/x", Version: "1", Status: "active", ReportedLatest: true,
		ServerJSON: `{"name":"example.only/x","version":"1"}`}}}); err != nil {
		b.Fatal(err)
	}
	doc := RegistryEntryDoc{Source: "https://registry.example", Name: "example.only/x", Version: "1", ChangedAt: "t"}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", []RegistryRemote{{URLNorm: u, URL: u, Type: "streamable-http"}}); err != nil {
		b.Fatal(err)
	}
	outcomes := []string{"ok", "ok", "timeout"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := db.AddProbe(ctx, 0, ProbeRow{RemoteNorm: u, URL: u, Outcome: outcomes[i%3]}); err != nil {
			b.Fatal(err)
		}
	}
}

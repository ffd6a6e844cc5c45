package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSafeCardPartsMigration: records written before 0013 (remote and
// icons as the card decoded: links unchecked, HTML escaped) are rewritten
// as the feed republishes them when the database is next opened for
// writing, and nothing a mirror sees moves.
func TestSafeCardPartsMigration(t *testing.T) {
	db := migrateAgain(t,
		`INSERT INTO feed_servers (kind, key, endpoint, updated_at, seq, remote, icons) VALUES
			(0, 'https://a.example/mcp?x=1&y=2', 'https://a.example/mcp?x=1&y=2', 'then', 1,
			 '{"type":"streamable-http","url":"https://a.example/mcp?x=1\u0026y=2"}',
			 '[{"src":"http://a.example/i.png"},{"src":"https://a.example/i.png?s=\u003c1\u003e","sizes":["48x48"]}]'),
			(0, 'javascript:alert(1)', 'javascript:alert(1)', 'then', 1, '{"type":"sse","url":"javascript:alert(1)"}',
			 '[{"src":"data:image/png;base64,AAAA"}]'),
			(1, 'https://b.example/card', '', 'then', 1, '', '')`,
		`DELETE FROM schema_migrations WHERE version = '0013_feed_safe_parts'`,
	)
	got := rowsOf(t, db, `SELECT key, remote, icons, updated_at, seq FROM feed_servers ORDER BY kind, key`)
	want := [][]string{
		{"https://a.example/mcp?x=1&y=2", `{"type":"streamable-http","url":"https://a.example/mcp?x=1&y=2"}`,
			`[{"src":"https://a.example/i.png?s=<1>","sizes":["48x48"]}]`, "then", "1"},
		{"javascript:alert(1)", "", "", "then", "1"},
		{"https://b.example/card", "", "", "then", "1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after 0013 (-want +got):\n%s", diff)
	}
}

// migrateAgain opens a new database, runs stmts on it (they leave it as it
// was before a migration and mark that one not applied) and opens it again
// for writing, which applies the migration.
func migrateAgain(t *testing.T, stmts ...string) *DB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	db.Close()
	if db, err = Open(ctx, path, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rowsOf reads a query's rows, each column as text.
func rowsOf(t *testing.T, db *DB, query string) [][]string {
	t.Helper()
	rows, err := db.sql.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	if err := scanEach(rows, func() error {
		r := make([]string, len(cols))
		dests := make([]any, len(r))
		for i := range r {
			dests[i] = &r[i]
		}
		got = append(got, r)
		return rows.Scan(dests...)
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestProbeOutcomesMigration: a database whose probes were written before
// 0033 gets the same brief histories from the migration as AddProbe keeps.
func TestProbeOutcomesMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range []string{"2026-10-05", "2026-10-01", "2026-10-09", "2026-10-03", "2026-10-02"} {
		norm := "https://mcp.a.example/" + string(rune('a'+i%2))
		if err := db.AddProbe(ctx, 0, ProbeRow{RemoteNorm: norm, URL: norm, ProbedAt: at + "T00:00:00Z",
			Outcome: []string{"ok", "timeout"}[i%3%2]}); err != nil {
			t.Fatal(err)
		}
	}
	const all = `SELECT remote_norm, outcome, probe_count, first_at, last_at, last_id FROM probe_outcomes
		ORDER BY remote_norm, outcome`
	kept := rowsOf(t, db, all)
	if len(kept) != 4 {
		t.Fatalf("AddProbe kept %d brief histories, want 4: %v", len(kept), kept)
	}
	for _, q := range []string{`DROP TABLE probe_outcomes`, `DELETE FROM schema_migrations WHERE version = '0033_probe_outcomes'`} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if db, err = Open(ctx, path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if diff := cmp.Diff(kept, rowsOf(t, db, all)); diff != "" {
		t.Errorf("brief histories after 0033 (-AddProbe +migration):\n%s", diff)
	}
}

package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oldSchema builds a database the way cardcrawl did before migration 0006
// (every earlier migration applied) and fills it through plain SQL.
func oldSchema(t *testing.T, path string, rows ...string) {
	t.Helper()
	sdb, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	versions, err := migrationVersions()
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`}
	for _, v := range versions {
		if v >= "0006" {
			break
		}
		body, err := migrations.ReadFile("migrations/" + v + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(body), `INSERT INTO schema_migrations VALUES ('`+v+`', 'then')`)
	}
	for _, q := range append(stmts, rows...) {
		if _, err := sdb.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
}

// TestUpgradeKeepsData: a database filled by the old schema is migrated in
// place: every row kept, ownership filled in from catalogs.domain, keys
// declared and satisfied, Registry times in the one sortable format.
func TestUpgradeKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	const then = "2026-01-02T03:04:05.000000000Z"
	oldSchema(t, path,
		`INSERT INTO domains (domain, added_at, state, outcome, catalog_url, cards) VALUES
			('a.example', '`+then+`', 'done', 'catalog', 'https://a.example/.well-known/ai-catalog.json', 1)`,
		`INSERT INTO catalogs (url, domain, parent_url, depth, sha256, findings, first_seen, last_seen, changed_at) VALUES
			('https://a.example/.well-known/ai-catalog.json', 'a.example', '', 0, 'r', '[]', '`+then+`', '`+then+`', '`+then+`'),
			('https://n.example/c.json', 'a.example', 'https://a.example/.well-known/ai-catalog.json', 1, 'n',
			 '[{"severity":"warning","code":"spec_version_missing","message":"m"}]', '`+then+`', '`+then+`', '`+then+`')`,
		`INSERT INTO entries (catalog_url, identifier, type, raw, inline, first_seen, last_seen, changed_at) VALUES
			('https://n.example/c.json', 'i', 'application/mcp-server-card+json', '{}', 0, '`+then+`', '`+then+`', '`+then+`')`,
		`INSERT INTO cards (key, sha256, grade, json, inline, first_seen, last_seen, changed_at) VALUES
			('https://cards.example/a', 's', 'conformant', '{}', 0, '`+then+`', '`+then+`', '`+then+`')`,
		`INSERT INTO remotes (url_norm, url, type, card_key, json, templated, first_seen, last_seen, changed_at) VALUES
			('https://mcp.example/mcp', 'https://mcp.example/mcp', 'streamable-http', 'https://cards.example/a', '{}', 0,
			 '`+then+`', '`+then+`', '`+then+`')`,
		`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen) VALUES
			('a.example', 'https://n.example/c.json', 'i', 'https://cards.example/a', 'https://mcp.example/mcp', 1, '`+then+`', '`+then+`')`,
		`INSERT INTO registry_entries (source, name, version, published_at, updated_at, status_changed_at, server_json,
			first_seen, last_seen, changed_at) VALUES
			('r', 'com.example/a', '1.0.0', '2025-08-07T13:15:04Z', '2025-08-07T13:15:04.28Z', '', '{}', '`+then+`', '`+then+`', '`+then+`')`,
		`INSERT INTO registry_sync (source, watermark, last_done_at, updated_at) VALUES
			('r', '2025-08-07T13:15:04.123456789Z', '2025-08-07T13:15:05.5Z', '`+then+`')`,
		`INSERT INTO namespaces (namespace, kind, checked_at) VALUES ('com.example', 'domain', '2026-07-01T00:00:00Z')`,
	)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	count := func(table string) int {
		var n int
		if err := db.sql.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for table, want := range map[string]int{"domains": 1, "catalogs": 2, "entries": 1, "cards": 1, "remotes": 1,
		"listings": 1, "registry_entries": 1, "registry_sync": 1, "domain_catalogs": 2, "namespaces": 1} {
		if got := count(table); got != want {
			t.Errorf("%s: %d row(s) after the upgrade, want %d", table, got, want)
		}
	}
	var violations int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&violations); err != nil || violations != 0 {
		t.Errorf("foreign key check: %d violation(s), %v", violations, err)
	}
	var fks int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM pragma_foreign_key_list('listings')`).Scan(&fks); err != nil || fks != 2 {
		t.Errorf("listings declares %d foreign key(s), %v; want 2", fks, err)
	}
	rows, err := db.Domains(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("domains %v, %v", rows, err)
	}
	if diff := cmp.Diff([]string{"spec_version_missing"}, rows[0].CatalogFindings); diff != "" {
		t.Errorf("catalog findings after the upgrade (-want +got):\n%s", diff)
	}
	es, err := db.RegistryEntries(ctx, RegistryFilter{})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %v, %v", es, err)
	}
	got := []string{es[0].PublishedAt, es[0].UpdatedAt, es[0].StatusChangedAt}
	want := []string{"2025-08-07T13:15:04.000000000Z", "2025-08-07T13:15:04.280000000Z", ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registry times (-want +got):\n%s", diff)
	}
	st, err := db.RegistrySyncState(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if st.Watermark != "2025-08-07T13:15:04.123456789Z" || st.LastDoneAt != "2025-08-07T13:15:05.500000000Z" {
		t.Errorf("sync state times %q %q", st.Watermark, st.LastDoneAt)
	}
	ns, _, err := db.Namespace(ctx, "com.example")
	if err != nil || ns.CheckedAt != "2026-07-01T00:00:00.000000000Z" {
		t.Errorf("namespace checked at %q (%v)", ns.CheckedAt, err)
	}
	for _, idx := range []string{"catalogs_domain", "observations_domain", "reconcile_results_kind"} {
		var n int
		if err := db.sql.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, idx).Scan(&n); err != nil || n != 0 {
			t.Errorf("index %s still there (%d, %v)", idx, n, err)
		}
	}
}

package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestKeptSearchIndex: an index kept in its file is taken up by the next
// process: ready at once, finding what a walk of every server finds
// (the servers written while no process held it too), and its first
// Refresh reads only what was written since, the Registry's change with
// it. One process holds it at a time. An index of another database, of
// another layout, or ahead of the database is made new.
func TestKeptSearchIndex(t *testing.T) { eachDialect(t, testKeptSearchIndex) }

func testKeptSearchIndex(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	scan := open(t, dsn, nil) // the same database, never indexed
	path := filepath.Join(t.TempDir(), "kept.db")
	const reg = "https://registry.example"
	save := func(i int, extra string) {
		t.Helper()
		saveSearchDomain(t, db, i, store.CardRecord{Name: fmt.Sprintf("com.example/server-%02d", i),
			Title: fmt.Sprintf("Title %02d", i), Description: "an MCP server" + extra}, extra)
	}
	registry := func(description string) {
		t.Helper()
		const name, url = "io.example/only", "https://only.registry.example/mcp"
		e := store.RegistryEntry{Source: reg, Name: name, Version: "1.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: fmt.Sprintf(`{"name":%q,"version":"1.0.0","description":%q}`, name, description)}
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{e}}); err != nil {
			t.Fatal(err)
		}
		doc := store.RegistryEntryDoc{Source: reg, Name: name, Version: "1.0.0", ChangedAt: db.Now()}
		if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-"+description,
			[]store.RegistryRemote{{URLNorm: url, URL: url, Type: "streamable-http"}}); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(db *store.DB) (*store.SearchIndex, error) {
		return db.OpenSearchIndex(ctx, store.SearchIndexOptions{Path: path, Keep: true})
	}
	mustKeep := func(db *store.DB) *store.SearchIndex {
		t.Helper()
		ix, err := keep(db)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	refresh := func(ix *store.SearchIndex) int {
		t.Helper()
		n, err := ix.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	terms := []string{"server-07", "title 1", "mcp1.d04", "d10.example", "zebrafish", "narwhal", "new kind", "server-31",
		"an mcp server", "d2", "nothing matches me"}
	check := func(when string) {
		t.Helper()
		for _, q := range terms {
			want := walkSite(t, scan, store.SiteFilter{Q: q, Limit: 10})
			if diff := cmp.Diff(want, walkSite(t, db, store.SiteFilter{Q: q, Limit: 10})); diff != "" {
				t.Errorf("%s: search %q, index against scan (-scan +index):\n%s", when, q, diff)
			}
		}
	}

	for i := range 30 {
		save(i, "")
	}
	registry("zebrafish")
	ix := mustKeep(db)
	if ix.Ready() {
		t.Fatal("a new kept index is ready before its first refresh")
	}
	whole := refresh(ix)
	if _, err := keep(scan); !errors.Is(err, store.ErrSearchIndexBusy) {
		t.Errorf("a second holder of the kept index: %v, want %v", err, store.ErrSearchIndexBusy)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Written while no process holds the index.
	save(31, " of the new kind")
	ix = mustKeep(db)
	if !ix.Ready() {
		t.Fatal("the kept index of this database was not taken up")
	}
	check("taken up, before its first refresh")
	narrowed := func() bool {
		t.Helper()
		before := ix.Narrowed()
		if _, _, err := db.FeedEntries(ctx, store.EntryQuery{Search: "server-07", Limit: 3}); err != nil {
			t.Fatal(err)
		}
		return ix.Narrowed() > before
	}
	if !narrowed() {
		t.Error("the taken-up index narrowed no search before its first refresh")
	}
	if n := refresh(ix); n == 0 || n >= whole {
		t.Errorf("the first refresh of the taken-up index read %d records, want more than none and fewer than the %d of a new one",
			n, whole)
	}
	check("taken up and refreshed")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// A Registry sync while no process holds it: the index waits for its
	// first refresh, the searches reading every server meanwhile.
	registry("narwhal")
	ix = mustKeep(db)
	if ix.Ready() {
		t.Error("taken up as ready with the Registry's rows out of date")
	}
	check("taken up after a Registry sync, before its first refresh")
	if n := refresh(ix); n == 0 || n >= whole {
		t.Errorf("the refresh after a Registry sync read %d records, want the Registry's, fewer than %d", n, whole)
	}
	check("taken up after a Registry sync, refreshed")
	if got := walkSite(t, db, store.SiteFilter{Q: "zebrafish", Limit: 10}); len(got) != 0 {
		t.Errorf("the Registry's old server.json is still found: %v", got)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// What the file says of itself, changed as another build, or an index
	// of a later state of the database, would leave it.
	tamper := func(set string) {
		t.Helper()
		f, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.ExecContext(ctx, `UPDATE search_meta SET `+set); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []string{"layout = 'another'", "seq = seq + 1000000", "db_id = 'another'"} {
		tamper(set)
		ix = mustKeep(db)
		if ix.Ready() {
			t.Errorf("%s: taken up", set)
		}
		if n := refresh(ix); n != whole+1 {
			t.Errorf("%s: the new index read %d records, want %d", set, n, whole+1)
		}
		check("made new after " + set)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A file that is not an index at all is made new too.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
	if err := os.WriteFile(path, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix = mustKeep(db)
	if ix.Ready() {
		t.Error("a file that is no index was taken up")
	}
	if n := refresh(ix); n != whole+1 {
		t.Errorf("over a file that is no index: the new index read %d records, want %d", n, whole+1)
	}
	check("made new over a file that is no index")
	ix.Close()

	// Another database's index is not this one's.
	otherDSN := filepath.Join(t.TempDir(), "other.db")
	if strings.HasPrefix(dsn, "postgres") {
		otherDSN = pgtest.NewDB(t)
	}
	other := open(t, otherDSN, nil)
	ix = mustKeep(other)
	if ix.Ready() {
		t.Error("another database's kept index was taken up")
	}
	if n := refresh(ix); n != 0 {
		t.Errorf("an empty database's new index read %d records", n)
	}
	ix.Close()
	if _, err := other.OpenSearchIndex(ctx, store.SearchIndexOptions{Keep: true}); err == nil {
		t.Error("a kept index without a path was opened")
	}
}

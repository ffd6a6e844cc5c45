package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestListedCardsOnlyActiveListings: a card no domain lists any more,
// and a domain that stopped listing a card, take no part in reconciliation
// (as they take no part in 'servers').
func TestListedCardsOnlyActiveListings(t *testing.T) {
	eachDialect(t, testListedCardsOnlyActiveListings)
}

func testListedCardsOnlyActiveListings(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	for _, q := range []string{
		`INSERT INTO domains (domain, added_at, state) VALUES ('a.example', 'now', 'done'), ('old.example', 'now', 'done'),
			('gone.example', 'now', 'done')`,
		`INSERT INTO cards (key, sha256, grade, json, first_seen, last_seen, changed_at) VALUES
			('https://a.example/card', 'x', 'conformant', '{"name":"com.example/a"}', 'now', 'now', 'now'),
			('https://gone.example/card', 'x', 'conformant', '{"name":"com.example/gone"}', 'now', 'now', 'now')`,
		`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen) VALUES
			('a.example', 'https://a.example/c', 'i', 'https://a.example/card', '', 1, 'now', 'now'),
			('old.example', 'https://old.example/c', 'i', 'https://a.example/card', '', 0, 'now', 'now'),
			('gone.example', 'https://gone.example/c', 'i', 'https://gone.example/card', '', 0, 'now', 'now')`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var got []store.ReconcileCard
	if err := db.EachListedCard(context.Background(), func(c store.ReconcileCard) error {
		got = append(got, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []store.ReconcileCard{{Key: "https://a.example/card", JSON: `{"name":"com.example/a"}`, Domains: []string{"a.example"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
}

func TestNamespaceSweepRemovesTheRest(t *testing.T) { eachDialect(t, testNamespaceSweepRemovesTheRest) }

func testNamespaceSweepRemovesTheRest(t *testing.T, dsn string) {
	var clock time.Time
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	db := open(t, dsn, tick)
	ctx := context.Background()
	// Named now: com.example by a listed card, io.github.octo by a latest
	// Registry entry. No longer: org.example (its card's one listing is
	// retired), net.example (an older Registry version only).
	for _, q := range []string{
		`INSERT INTO domains (domain, added_at, state) VALUES ('a.example', 'now', 'done'), ('old.example', 'now', 'done')`,
		`INSERT INTO cards (key, sha256, grade, name, json, first_seen, last_seen, changed_at) VALUES
			('https://a.example/card', 'x', 'conformant', 'com.example/a', '{}', 'now', 'now', 'now'),
			('https://old.example/card', 'x', 'conformant', 'org.example/old', '{}', 'now', 'now', 'now')`,
		`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen) VALUES
			('a.example', 'https://a.example/c', 'i', 'https://a.example/card', '', TRUE, 'now', 'now'),
			('old.example', 'https://old.example/c', 'i', 'https://old.example/card', '', FALSE, 'now', 'now')`,
		`INSERT INTO registry_entries (source, name, version, is_latest, server_json, first_seen, last_seen, changed_at) VALUES
			('https://registry.example', 'io.github.octo/t', '1.0.0', TRUE, '{}', 'now', 'now', 'now'),
			('https://registry.example', 'net.example/t', '0.9.0', FALSE, '{}', 'now', 'now', 'now')`,
	} {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SaveNamespaces(ctx, []store.NamespaceRow{
		{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "dns", Result: `{"method":"dns"}`, CheckedAt: "t1"},
		{Namespace: "net.example", Kind: "domain", Domain: "example.net", Method: "none", CheckedAt: "t1"},
		{Namespace: "org.example", Kind: "domain", Domain: "example.org", Method: "none", CheckedAt: "t1"},
	}); err != nil {
		t.Fatal(err)
	}
	// com.example is still named (only classified this time), org.example
	// and net.example are not: their rows go, com.example keeps its
	// earlier outcome. The sweep saves in two batches.
	sweep := db.StartNamespaceSweep()
	for _, batch := range [][]store.NamespaceRow{
		{{Namespace: "com.example", Kind: "domain", Domain: "example.com"}},
		{{Namespace: "io.github.octo", Kind: "github", Method: "github", CheckedAt: "t2"}},
	} {
		if err := sweep.Save(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := sweep.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := db.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.NamespaceRow{
		{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "dns", Result: `{"method":"dns"}`, CheckedAt: "t1"},
		{Namespace: "io.github.octo", Kind: "github", Method: "github", Result: "{}", CheckedAt: "t2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	// A new check of a stored namespace is written, its kind and domain
	// the same.
	checked := store.NamespaceRow{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http",
		Result: `{"method":"http"}`, CheckedAt: "t3"}
	if err := db.SaveNamespaces(ctx, []store.NamespaceRow{checked}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := db.Namespace(ctx, "com.example"); err != nil || !ok || got != checked {
		t.Errorf("after a new check: %+v, %v, %v; want %+v", got, ok, err, checked)
	}
}

// TestEachNamedDocMergesInNameOrder: listed cards and latest Registry
// entries come out as one stream in byte order of their names, across
// pages of both, so one namespace's names are adjacent.
func TestEachNamedDocMergesInNameOrder(t *testing.T) {
	eachDialect(t, testEachNamedDocMergesInNameOrder)
}

func testEachNamedDocMergesInNameOrder(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	var want []string
	var entries []store.RegistryEntry
	if _, err := db.SQL().Exec(`INSERT INTO domains (domain, added_at, state) VALUES ('d.example', 'now', 'done')`); err != nil {
		t.Fatal(err)
	}
	for i := range 1100 { // past a page of names (500) and of entries
		card := fmt.Sprintf("com.example.n%04d/card", i)
		key := "https://c" + strconv.Itoa(i) + ".example/card"
		if _, err := db.SQL().Exec(`INSERT INTO cards (key, sha256, name, grade, json, first_seen, last_seen, changed_at)
			VALUES (?, 'x', ?, 'conformant', ?, 'now', 'now', 'now')`, key, card, `{"name":"`+card+`"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL().Exec(`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen)
			VALUES ('d.example', 'c', ?, ?, '', ?, 'now', 'now')`, key, key, i%10 != 0); err != nil {
			t.Fatal(err)
		}
		if i%10 != 0 {
			want = append(want, card)
		}
		entry := fmt.Sprintf("com.example.n%04d/entry", i)
		if i%2 == 0 {
			entry = fmt.Sprintf("com.example.n%04d.sub/entry", i)
		}
		entries = append(entries, store.RegistryEntry{Name: entry, Version: "1", ReportedLatest: true, ServerJSON: `{"name":"` + entry + `"}`})
		want = append(want, entry)
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "https://registry.example", Entries: entries}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	var got []string
	if err := db.EachNamedDoc(ctx, nil, func(d store.NamedDoc) error {
		if !strings.Contains(d.JSON, d.Name) {
			t.Errorf("document %s does not go with name %s", d.JSON, d.Name)
		}
		got = append(got, d.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	// Documents only where asked for.
	withJSON := func(name string) bool { return strings.HasPrefix(name, "com.example.n07") }
	got = got[:0]
	if err := db.EachNamedDoc(ctx, withJSON, func(d store.NamedDoc) error {
		if withJSON(d.Name) != strings.Contains(d.JSON, d.Name) || (d.JSON != "") != withJSON(d.Name) {
			t.Errorf("%s: document %q", d.Name, d.JSON)
		}
		got = append(got, d.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names with some documents (-want +got):\n%s", diff)
	}
}

// TestSaveNamespacesInStatements: rows saved many to a statement end as
// they would one at a time: past a statement's size, and with a namespace
// named twice in one call (a check, then a classification that must not
// undo it).
func TestSaveNamespacesInStatements(t *testing.T) {
	eachDialect(t, testSaveNamespacesInStatements)
}

func testSaveNamespacesInStatements(t *testing.T, dsn string) {
	var clock time.Time
	db := open(t, dsn, func() time.Time { clock = clock.Add(time.Second); return clock })
	ctx := context.Background()
	var rows, want []store.NamespaceRow
	for i := range 300 {
		r := store.NamespaceRow{Namespace: fmt.Sprintf("com.example%03d", i), Kind: "domain", Domain: fmt.Sprintf("example%03d.com", i)}
		if i%7 == 0 {
			r.Method, r.Result, r.CheckedAt = "http", `{"method":"http"}`, "t1"
		}
		rows = append(rows, r)
		w := r
		if w.Result == "" {
			w.Result = "{}"
		}
		want = append(want, w)
	}
	// com.example007 again, only classified: it keeps the check above.
	rows = append(rows[:50], append([]store.NamespaceRow{{Namespace: "com.example007", Kind: "domain", Domain: "example007.com"}},
		rows[50:]...)...)
	if err := db.SaveNamespaces(ctx, rows); err != nil {
		t.Fatal(err)
	}
	got, err := db.Namespaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}

// TestReconcileWriterKeepsWhatIsUnchanged: a reconciliation equal to the
// stored one, row for row, writes nothing (its rows, their time and the
// swap's generation stay); one that differs anywhere replaces it whole,
// the rows before the first difference included; and one that compared
// with rows another computation replaced meanwhile says so.
func TestReconcileWriterKeepsWhatIsUnchanged(t *testing.T) {
	eachDialect(t, testReconcileWriterKeepsWhatIsUnchanged)
}

func testReconcileWriterKeepsWhatIsUnchanged(t *testing.T, dsn string) {
	var clock time.Time
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	db := open(t, dsn, tick)
	ctx := context.Background()
	// Rows over three pages of the comparison (500 each).
	var base []store.ReconcileRow
	for i := range 1203 {
		base = append(base, store.ReconcileRow{Kind: "card_only", CardKey: fmt.Sprintf("https://c%04d.example/card", i),
			CardName: "com.example/c" + strconv.Itoa(i), Detail: fmt.Sprintf("c%04d.example", i), Diffs: "[]"})
	}
	base[3] = store.ReconcileRow{Kind: "pair", CardKey: base[3].CardKey, CardName: "com.example/c3", Source: "https://registry.example",
		Name: "com.example/c3", Version: "1.0.0", Basis: "name", Detail: "com.example/c3", Diffs: `[{"field":"version"}]`}
	type state struct {
		Rows []store.ReconcileRow
		Gen  int64
	}
	read := func() state {
		t.Helper()
		rows, err := db.ReconcileResults(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var s state
		if err := db.SQL().QueryRow(`SELECT reconcile_gen FROM feed_state WHERE id = 1`).Scan(&s.Gen); err != nil {
			t.Fatal(err)
		}
		s.Rows = rows
		return s
	}
	without := func(rows []store.ReconcileRow) []store.ReconcileRow {
		out := make([]store.ReconcileRow, len(rows))
		for i, r := range rows {
			r.ComputedAt = ""
			out[i] = r
		}
		return out
	}
	if err := db.ReplaceReconcile(ctx, base); err != nil {
		t.Fatal(err)
	}
	stored := read()
	if err := db.ReplaceReconcile(ctx, base); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, read()); diff != "" {
		t.Errorf("the same reconciliation again changed what is stored (-before +after):\n%s", diff)
	}

	edit := func(f func(rows []store.ReconcileRow) []store.ReconcileRow) []store.ReconcileRow {
		return f(append([]store.ReconcileRow(nil), base...))
	}
	for _, c := range []struct {
		what string
		rows []store.ReconcileRow
	}{
		{"a row on the second page", edit(func(r []store.ReconcileRow) []store.ReconcileRow { r[700].Detail = "x"; return r })},
		{"the first row", edit(func(r []store.ReconcileRow) []store.ReconcileRow { r[0].CardName = "x"; return r })},
		{"the pair's diffs", edit(func(r []store.ReconcileRow) []store.ReconcileRow { r[3].Diffs = ""; return r })},
		{"the last rows gone", base[:1190]},
		{"rows after the last", append(append([]store.ReconcileRow(nil), base...), base[:5]...)},
		{"every row gone", nil},
		{"back", base},
	} {
		before := read()
		if err := db.ReplaceReconcile(ctx, c.rows); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		after := read()
		want := without(c.rows)
		for i := range want {
			if want[i].Diffs == "" {
				want[i].Diffs = "[]"
			}
		}
		if diff := cmp.Diff(want, without(after.Rows), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: stored (-want +got):\n%s", c.what, diff)
		}
		if after.Gen != before.Gen+1 {
			t.Errorf("%s: generation %d -> %d, want one swap", c.what, before.Gen, after.Gen)
		}
	}

	// Another computation swaps its rows in while this one compares.
	other := edit(func(r []store.ReconcileRow) []store.ReconcileRow { r[1].Detail = "other"; return r })
	for _, c := range []struct {
		what  string
		added []store.ReconcileRow // before the other swap; then a row that differs, then Commit
		last  []store.ReconcileRow
	}{
		{"before the first difference", base[:600], []store.ReconcileRow{{Kind: "card_only", CardKey: "new"}}},
		{"with nothing different", base, nil},
	} {
		if err := db.ReplaceReconcile(ctx, base); err != nil {
			t.Fatal(err)
		}
		w, err := db.NewReconcileWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.added {
			if err := w.Add(ctx, r); err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
		}
		if err := db.ReplaceReconcile(ctx, other); err != nil {
			t.Fatal(err)
		}
		err = nil
		for _, r := range c.last {
			if err = w.Add(ctx, r); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Commit(ctx)
		}
		w.Abort(ctx)
		if !errors.Is(err, store.ErrReconcileMoved) {
			t.Errorf("%s: %v, want ErrReconcileMoved", c.what, err)
		}
		if diff := cmp.Diff(without(other), without(read().Rows)); diff != "" {
			t.Errorf("%s: the other computation's rows (-want +got):\n%s", c.what, diff)
		}
	}
}

// EachNamespace reads every namespace once, in byte order, across pages.
func TestEachNamespacePages(t *testing.T) { eachDialect(t, testEachNamespacePages) }

func testEachNamespacePages(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	var rows []store.NamespaceRow
	var want []string
	for i := range 1203 {
		// Upper case sorts before lower case in byte order, not in a
		// language's collation.
		ns := fmt.Sprintf("com.example%04d", i)
		if i%3 == 0 {
			ns = fmt.Sprintf("com.Example%04d", i)
		}
		rows = append(rows, store.NamespaceRow{Namespace: ns, Kind: "other", Method: "none", Result: "{}", CheckedAt: "t"})
		want = append(want, ns)
	}
	if err := db.SaveNamespaces(ctx, rows); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	var got []string
	if err := db.EachNamespace(ctx, func(r store.NamespaceRow) error {
		got = append(got, r.Namespace)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}

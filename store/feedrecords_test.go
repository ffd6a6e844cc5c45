package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestFeedSources: a feed read carries what the Registry, the
// reconciliation, the namespace check and the probe history say about each
// record, and with source registry or all the endpoints only the Registry
// declares are records too, merged into the feed's order.
func TestFeedSources(t *testing.T) { eachDialect(t, testFeedSources) }

func testFeedSources(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	domains := []string{"a.example", "b.example"}
	if _, err := db.Enqueue(ctx, domains, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		if err := db.SaveDomain(ctx, result(d, "https://mcp."+d+"/one", "https://mcp."+d+"/two")); err != nil {
			t.Fatal(err)
		}
	}
	const reg = "https://registry.example"
	var bad finding.List
	bad.Add(finding.Error, "schema_violation", "/remotes/0", "type is missing")
	entries := []store.RegistryEntry{
		{Source: reg, Name: "example.b/srv", Version: "1.0.0", Status: "active", PublishedAt: "2026-10-01T00:00:00Z",
			UpdatedAt: "2026-10-02T00:00:00Z", ReportedLatest: true, Findings: bad,
			ServerJSON: `{"name":"example.b/srv","version":"1.0.0","title":"B in the Registry","description":"from server.json"}`},
		{Source: reg, Name: "example.c/only", Version: "2.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: `{"name":"example.c/only","version":"2.0.0","description":"only the Registry has it"}`},
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	// example.b/srv declares a card's endpoint and one of its own, sorting
	// between the card's two; example.c/only one after every card endpoint.
	remotes := map[string][]string{
		"example.b/srv":  {"https://mcp.b.example/one", "https://mcp.b.example/three"},
		"example.c/only": {"https://only.c.example/mcp"},
	}
	for _, e := range entries {
		var rs []store.RegistryRemote
		for _, u := range remotes[e.Name] {
			rs = append(rs, store.RegistryRemote{URLNorm: u, URL: u, Type: "streamable-http"})
		}
		doc := store.RegistryEntryDoc{Source: reg, Name: e.Name, Version: e.Version, ChangedAt: "2026-10-02T00:00:00Z"}
		if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-"+e.Name, rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.ReplaceReconcile(ctx, []store.ReconcileRow{{Kind: "pair", CardKey: "https://b.example/card",
		CardName: "com.example/x", Source: reg, Name: "example.b/srv", Version: "1.0.0", Basis: "remote_url",
		Detail: "https://mcp.b.example/one", Diffs: `[{"field":"name"}]`}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveNamespaces(ctx, []store.NamespaceRow{{Namespace: "com.example", Kind: "domain", Domain: "example.com",
		Method: "http", Result: `{"http":"key ed25519"}`, CheckedAt: "2026-10-03T00:00:00Z"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []store.ProbeRow{
		{RemoteNorm: "https://mcp.b.example/one", URL: "https://mcp.b.example/one", ProbedAt: "2026-10-04T00:00:00Z", Outcome: "timeout"},
		{RemoteNorm: "https://mcp.b.example/one", URL: "https://mcp.b.example/one", ProbedAt: "2026-10-05T00:00:00Z", Outcome: "ok"},
		{RemoteNorm: "https://only.c.example/mcp", URL: "https://only.c.example/mcp", ProbedAt: "2026-10-05T00:00:00Z", Outcome: "ok"},
	} {
		if err := db.AddProbe(ctx, 0, p); err != nil {
			t.Fatal(err)
		}
	}

	type rec struct {
		Key, Card, Name, Registry, Reconcile, Namespace string
		Probes                                          int
		Outcome                                         string
	}
	read := func(q store.FeedQuery) []rec {
		t.Helper()
		var out []rec
		err := db.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
			r := rec{Key: s.Cursor().Key, Card: s.CardKey, Name: s.Name}
			if s.Registry != nil {
				r.Registry = s.Registry.Name + "@" + s.Registry.Version
				if s.Registry.Findings.HasError() != (s.Registry.Name == "example.b/srv") {
					t.Errorf("%s: findings %v", r.Key, s.Registry.Findings)
				}
			}
			if s.Reconcile != nil {
				r.Reconcile = s.Reconcile.Basis + " " + s.Reconcile.Diffs
			}
			if s.Namespace != nil {
				r.Namespace = s.Namespace.Method
			}
			for _, c := range s.ProbeHistory {
				r.Probes += c.Count
			}
			if s.Probe != nil {
				r.Outcome = s.Probe.Outcome
			}
			out = append(out, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	aOne := rec{Key: "https://mcp.a.example/one", Card: "https://a.example/card", Name: "com.example/x", Namespace: "http"}
	aTwo := rec{Key: "https://mcp.a.example/two", Card: "https://a.example/card", Name: "com.example/x", Namespace: "http"}
	bOne := rec{Key: "https://mcp.b.example/one", Card: "https://b.example/card", Name: "com.example/x",
		Registry: "example.b/srv@1.0.0", Reconcile: `remote_url [{"field":"name"}]`, Namespace: "http", Probes: 2, Outcome: "ok"}
	bThree := rec{Key: "https://mcp.b.example/three", Name: "example.b/srv", Registry: "example.b/srv@1.0.0"}
	bTwo := rec{Key: "https://mcp.b.example/two", Card: "https://b.example/card", Name: "com.example/x",
		Reconcile: `remote_url [{"field":"name"}]`, Namespace: "http"}
	cOnly := rec{Key: "https://only.c.example/mcp", Name: "example.c/only", Registry: "example.c/only@2.0.0", Probes: 1, Outcome: "ok"}

	for _, tc := range []struct {
		name string
		q    store.FeedQuery
		want []rec
	}{
		{"default: cards", store.FeedQuery{}, []rec{aOne, aTwo, bOne, bTwo}},
		{"card", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "card"}}, []rec{aOne, aTwo, bOne, bTwo}},
		{"registry", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "registry"}}, []rec{bOne, bThree, cOnly}},
		{"all", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all"}}, []rec{aOne, aTwo, bOne, bThree, bTwo, cOnly}},
		{"all, probed ok", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all", Outcome: "ok"}}, []rec{bOne, cOnly}},
		{"all, never probed", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all", NotProbed: true}},
			[]rec{aOne, aTwo, bThree, bTwo}},
		{"all, graded", store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all", Grade: "conformant"}}, []rec{aOne, aTwo, bOne, bTwo}},
		{"all, search", store.FeedQuery{Search: "ONLY", FeedFilter: store.FeedFilter{Source: "all"}}, []rec{cOnly}},
		{"all, limit", store.FeedQuery{Limit: 4, FeedFilter: store.FeedFilter{Source: "all"}}, []rec{aOne, aTwo, bOne, bThree}},
		{"all, after a cursor", store.FeedQuery{After: store.FeedCursor{Key: "https://mcp.b.example/one"},
			FeedFilter: store.FeedFilter{Source: "all"}}, []rec{bThree, bTwo, cOnly}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, read(tc.q)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			// Asking for some facts reads those and leaves the others out,
			// a card record's latest probe among them (an endpoint only the
			// Registry declares is read whole).
			some := tc.q
			some.Facts = store.FactRegistry | store.FactNamespace
			want := slices.Clone(tc.want)
			for i := range want {
				want[i].Reconcile, want[i].Probes = "", 0
				if want[i].Card != "" {
					want[i].Outcome = ""
				}
			}
			if diff := cmp.Diff(want, read(some)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			n, err := db.CountFeedServers(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if tc.q.Limit == 0 && tc.q.After == (store.FeedCursor{}) && n != len(tc.want) {
				t.Errorf("count %d, want %d", n, len(tc.want))
			}
		})
	}
	if err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: store.FeedFilter{Source: "cards"}},
		func(*store.FeedServer) error { return nil }); err == nil {
		t.Error("source cards: no error")
	}

	// The Registry-shaped feed with source all: the cards' entries, then
	// the Registry entries declaring endpoints no card declares, with those
	// endpoints only; walked one entry a page, across the two parts.
	var walked []string
	q := store.EntryQuery{Limit: 1, FeedFilter: store.FeedFilter{Source: "all"}}
	for range 10 {
		page, more, err := db.FeedEntries(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			w := e.CardKey
			if e.Registry != nil {
				w = e.Registry.Name + "@" + e.Registry.Version
			}
			for _, r := range e.Records {
				w += " " + r.Cursor().Key
			}
			walked = append(walked, w)
			q.After = e.Cursor()
		}
		if !more {
			break
		}
	}
	want := []string{"https://a.example/card https://mcp.a.example/one https://mcp.a.example/two",
		"https://b.example/card https://mcp.b.example/one https://mcp.b.example/two",
		"example.b/srv@1.0.0 https://mcp.b.example/three", "example.c/only@2.0.0 https://only.c.example/mcp"}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("entries with source all, a page each (-want +got):\n%s", diff)
	}
	var streamed []string
	if err := db.EachFeedEntry(ctx, store.FeedFilter{Source: "all", Outcome: "ok"}, 0, func(e *store.FeedEntry) error {
		streamed = append(streamed, e.Cursor())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://b.example/card", "\x00registry\x00" + reg + "\x00example.c/only"}, streamed); diff != "" {
		t.Errorf("entries with source all, probed ok (-want +got):\n%s", diff)
	}

	// The Registry entry stops declaring a card's endpoint: that record's
	// meaning changed (it is no longer in the Registry), so it is in the
	// delta feed after the change, and the others are not.
	since := store.FormatTime(clock)
	clock = clock.Add(time.Hour)
	doc := store.RegistryEntryDoc{Source: reg, Name: "example.b/srv", Version: "1.0.0", ChangedAt: "2026-10-03T00:00:00Z"}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-2", []store.RegistryRemote{{URLNorm: "https://mcp.b.example/three",
		URL: "https://mcp.b.example/three", Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	bOne.Registry = ""
	if diff := cmp.Diff([]rec{bOne}, read(store.FeedQuery{Since: since})); diff != "" {
		t.Errorf("delta after the Registry dropped an endpoint (-want +got):\n%s", diff)
	}

	// The Registry deletes the entry of a server only it declared: the
	// delta feed with the Registry's servers has its tombstone, and the
	// feed no longer has the server.
	since = store.FormatTime(clock)
	clock = clock.Add(time.Hour)
	gone := entries[1]
	gone.Status = "deleted"
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{gone}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PruneRegistryRemotes(ctx); err != nil {
		t.Fatal(err)
	}
	type tomb struct{ Key, Reason, At string }
	var got []tomb
	err := db.EachFeedServer(ctx, store.FeedQuery{Since: since, FeedFilter: store.FeedFilter{Source: "all"}}, func(s *store.FeedServer) error {
		got = append(got, tomb{s.Cursor().Key, s.RemovedReason, s.RemovedAt})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTombs := []tomb{{"https://only.c.example/mcp", store.RemovedRegistryDeleted, store.FormatTime(clock)}}
	if diff := cmp.Diff(wantTombs, got); diff != "" {
		t.Errorf("delta after the Registry deleted an entry (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]rec{aOne, aTwo, bOne, bThree, bTwo}, read(store.FeedQuery{FeedFilter: store.FeedFilter{Source: "all"}})); diff != "" {
		t.Errorf("feed after the deletion (-want +got):\n%s", diff)
	}

	// The reconciliation and the namespace check are part of a record: a
	// recomputation that finds the same leaves updatedAt, a change moves it
	// on the records it concerns.
	ns := store.NamespaceRow{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http",
		Result: `{"http":"key ed25519"}`, CheckedAt: "2026-10-03T00:00:00Z"}
	pair := store.ReconcileRow{Kind: "pair", CardKey: "https://b.example/card", CardName: "com.example/x", Source: reg,
		Name: "example.b/srv", Version: "1.0.0", Basis: "remote_url", Detail: "https://mcp.b.example/one", Diffs: `[{"field":"name"}]`}
	step := func(what string, change func(), want ...rec) {
		t.Helper()
		since := store.FormatTime(clock)
		clock = clock.Add(time.Hour)
		change()
		if diff := cmp.Diff(want, read(store.FeedQuery{Since: since})); diff != "" {
			t.Errorf("delta after %s (-want +got):\n%s", what, diff)
		}
	}
	step("the same checks again", func() {
		ns.CheckedAt = "2026-10-09T00:00:00Z"
		if err := db.SaveNamespaces(ctx, []store.NamespaceRow{ns}); err != nil {
			t.Fatal(err)
		}
		if err := db.ReplaceReconcile(ctx, []store.ReconcileRow{pair}); err != nil {
			t.Fatal(err)
		}
	})
	aOne.Namespace, aTwo.Namespace, bOne.Namespace, bTwo.Namespace = "dns", "dns", "dns", "dns"
	step("a namespace verified another way", func() {
		ns.Method = "dns"
		if err := db.SaveNamespaces(ctx, []store.NamespaceRow{ns}); err != nil {
			t.Fatal(err)
		}
	}, aOne, aTwo, bOne, bTwo)
	bOne.Reconcile, bTwo.Reconcile = `remote_url []`, `remote_url []`
	step("a pairing that no longer differs", func() {
		pair.Diffs = `[]`
		if err := db.ReplaceReconcile(ctx, []store.ReconcileRow{pair}); err != nil {
			t.Fatal(err)
		}
	}, bOne, bTwo)
}

package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestRegistryOnlyServers: a server only the Registry declares is a record
// like a card's: its updatedAt moves on a new probe outcome (and the delta
// feed then has it), not on a re-probe that finds the same; the versions of
// its name are found with source registry or all; and when its entry goes
// away, a delta of the Registry-shaped feed marks the entry removed.
func TestRegistryOnlyServers(t *testing.T) { eachDialect(t, testRegistryOnlyServers) }

func testRegistryOnlyServers(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	const (
		card    = "https://mcp.a.example/one"
		only    = "https://only.r.example/mcp"
		goneURL = "https://gone.s.example/mcp"
		reg     = "https://registry.example"
	)
	if err := db.SaveDomain(ctx, result("a.example", card)); err != nil {
		t.Fatal(err)
	}
	entries := []store.RegistryEntry{
		{Source: reg, Name: "example.r/only", Version: "1.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: `{"name":"example.r/only","version":"1.0.0","description":"r"}`},
		{Source: reg, Name: "example.s/gone", Version: "2.0.0", Status: "active", ReportedLatest: true,
			ServerJSON: `{"name":"example.s/gone","version":"2.0.0","description":"s"}`},
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	for name, urls := range map[string][]string{"example.r/only": {only, card}, "example.s/gone": {goneURL}} {
		var rs []store.RegistryRemote
		for _, u := range urls {
			rs = append(rs, store.RegistryRemote{URLNorm: u, URL: u, Type: "streamable-http"})
		}
		v := "1.0.0"
		if name == "example.s/gone" {
			v = "2.0.0"
		}
		doc := store.RegistryEntryDoc{Source: reg, Name: name, Version: v, ChangedAt: store.FormatTime(clock)}
		if err := db.ReplaceRegistryRemotes(ctx, doc, "sha-"+name, rs); err != nil {
			t.Fatal(err)
		}
	}

	// delta is what the JSONL delta feed and the Registry-shaped delta with
	// a source say changed since a time: "key updatedAt" per record (and
	// removedReason on a tombstone), "entry: key ..." per entry.
	delta := func(since, source string) (records, entries []string) {
		t.Helper()
		q := store.FeedQuery{Since: since, FeedFilter: store.FeedFilter{Source: source}}
		err := db.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
			records = append(records, s.Cursor().Key+" "+s.UpdatedAt+" "+s.RemovedReason)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		es, _, err := db.FeedEntries(ctx, store.EntryQuery{Since: since, Limit: 100, FeedFilter: store.FeedFilter{Source: source}})
		if err != nil {
			t.Fatal(err)
		}
		return records, describeEntries(es)
	}
	version := func() string { return feedVersion(t, db) }
	probe := func(url, outcome string) func() {
		return func() {
			p := store.ProbeRow{RemoteNorm: url, URL: url, ProbedAt: clock.Format(time.RFC3339Nano), Outcome: outcome}
			if err := db.AddProbe(ctx, 0, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := clock

	// Each step happens an hour after the one before; {t} in a want is its
	// time.
	for _, step := range []struct {
		name             string
		do               func()
		source           string
		records, entries []string
		versionStays     bool
	}{
		{name: "first probe of a Registry-only server", do: probe(only, "ok"), source: "all",
			records: []string{only + " {t} "}, entries: []string{"entry " + reg + " example.r/only@1.0.0 updated {t}: " + only}},
		{name: "the same outcome again", do: probe(only, "ok"), source: "all"},
		{name: "the same outcome, source registry", do: probe(only, "ok"), source: "registry"},
		{name: "a new outcome", do: probe(only, "timeout"), source: "registry",
			records: []string{only + " {t} "}, entries: []string{"entry " + reg + " example.r/only@1.0.0 updated {t}: " + only}},
		{name: "nothing happens", do: func() {}, source: "all", versionStays: true},
		{name: "a card's endpoint probed: its card's entry, not the Registry's", do: probe(card, "ok"), source: "all",
			records: []string{card + " {t} "}, entries: []string{"card https://a.example/card: " + card}},
		{name: "the Registry deletes an entry", source: "all", do: func() {
			gone := entries[1]
			gone.Status = "deleted"
			if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{gone}}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.PruneRegistryRemotes(ctx); err != nil {
				t.Fatal(err)
			}
		},
			records: []string{goneURL + " {t} " + store.RemovedRegistryDeleted},
			entries: []string{"entry " + reg + " example.s/gone@2.0.0 updated {t} removed: " + goneURL}},
	} {
		since := store.FormatTime(clock)
		before := version()
		clock = clock.Add(time.Hour)
		step.do()
		at := func(ws []string) []string {
			for i := range ws {
				ws[i] = strings.ReplaceAll(ws[i], "{t}", store.FormatTime(clock))
			}
			return ws
		}
		records, es := delta(since, step.source)
		if diff := cmp.Diff(at(step.records), records); diff != "" {
			t.Errorf("%s: delta records with source %s (-want +got):\n%s", step.name, step.source, diff)
		}
		if diff := cmp.Diff(at(step.entries), es); diff != "" {
			t.Errorf("%s: delta entries with source %s (-want +got):\n%s", step.name, step.source, diff)
		}
		if after := version(); (after == before) != step.versionStays {
			t.Errorf("%s: feed version %s, then %s", step.name, before, after)
		}
	}

	// The gone entry is a tombstone in a delta with the Registry's servers
	// only; the card feed's delta has none, and no entry is removed in it.
	_, es := delta(store.FormatTime(start), "registry")
	want := []string{"card https://a.example/card: " + card,
		"entry " + reg + " example.r/only@1.0.0 updated " + store.FormatTime(start.Add(4*time.Hour)) + ": " + only,
		"entry " + reg + " example.s/gone@2.0.0 updated " + store.FormatTime(start.Add(7*time.Hour)) + " removed: " + goneURL}
	if diff := cmp.Diff(want, es); diff != "" {
		t.Errorf("delta since the start, source registry (-want +got):\n%s", diff)
	}
	if _, es := delta(store.FormatTime(start), "card"); len(es) != 1 {
		t.Errorf("delta since the start, source card: %v", es)
	}
	// Without a delta, gone entries are not there.
	es2, _, err := db.FeedEntries(ctx, store.EntryQuery{Limit: 100, FeedFilter: store.FeedFilter{Source: "all"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"card https://a.example/card: " + card,
		"entry " + reg + " example.r/only@1.0.0 updated " + store.FormatTime(start.Add(4*time.Hour)) + ": " + only},
		describeEntries(es2)); diff != "" {
		t.Errorf("the Registry-shaped feed, source all (-want +got):\n%s", diff)
	}

	// The versions of a name: cards claiming it, then with source registry
	// or all the Registry's entry of servers only it declares.
	for _, tc := range []struct {
		name, source string
		want         []string
	}{
		{"example.r/only", "", nil},
		{"example.r/only", "card", nil},
		{"example.r/only", "registry", []string{"entry " + reg + " example.r/only@1.0.0 updated " +
			store.FormatTime(start.Add(4*time.Hour)) + ": " + only}},
		{"example.r/only", "all", []string{"entry " + reg + " example.r/only@1.0.0 updated " +
			store.FormatTime(start.Add(4*time.Hour)) + ": " + only}},
		{"example.s/gone", "all", nil},
		{"com.example/x", "card", []string{"card https://a.example/card: " + card}},
		{"com.example/x", "registry", []string{"card https://a.example/card: " + card}},
	} {
		es, err := db.FeedEntriesNamed(ctx, store.NamedQuery{Name: tc.name, FeedFilter: store.FeedFilter{Source: tc.source}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, describeEntries(es)); diff != "" {
			t.Errorf("versions of %s, source %q (-want +got):\n%s", tc.name, tc.source, diff)
		}
	}
	if _, err := db.FeedEntriesNamed(ctx, store.NamedQuery{Name: "x", FeedFilter: store.FeedFilter{Source: "cards"}}); err == nil {
		t.Error("versions with source cards: no error")
	}
}

// describeEntries writes each entry as "card KEY: endpoints" or "entry
// REGISTRY NAME@VERSION updated T[ removed]: endpoints".
func describeEntries(es []store.FeedEntry) []string {
	var out []string
	for _, e := range es {
		s := "card " + e.CardKey
		if r := e.Registry; r != nil {
			updated := r.ChangedAt
			for _, rec := range e.Records {
				updated = max(updated, rec.UpdatedAt)
			}
			s = "entry " + r.Source + " " + r.Name + "@" + r.Version + " updated " + updated
			if e.Removed() {
				s += " removed"
			}
		}
		s += ":"
		for _, rec := range e.Records {
			s += " " + rec.Cursor().Key
		}
		out = append(out, s)
	}
	return out
}

// TestRegistryVersionsNamed: the versions of a name only the Registry
// declares are its latest entry and the others it holds, newest published
// first by time (not by the text of the time: the Registry writes
// fractional seconds only when there are some), deleted ones when asked.
func TestRegistryVersionsNamed(t *testing.T) { eachDialect(t, testRegistryVersionsNamed) }

func testRegistryVersionsNamed(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	const reg, name, u = "https://registry.example", "example.v/multi", "https://multi.v.example/mcp"
	entry := func(version, status, published string, latest bool) store.RegistryEntry {
		return store.RegistryEntry{Source: reg, Name: name, Version: version, Status: status, PublishedAt: published,
			ReportedLatest: latest, ServerJSON: `{"name":"` + name + `","version":"` + version + `","description":"v"}`}
	}
	entries := []store.RegistryEntry{
		entry("1.0.0", "active", "2026-10-01T00:00:00Z", false),
		entry("1.1.0", "deleted", "2026-10-01T00:00:00.5Z", false),
		entry("2.0.0", "active", "2026-10-02T00:00:00Z", true),
		entry("1.2.0", "deprecated", "2026-10-03T00:00:00Z", false),
	}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: reg, Name: name, Version: "2.0.0", ChangedAt: store.FormatTime(clock)}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", []store.RegistryRemote{{URLNorm: u, URL: u, Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		source         string
		includeDeleted bool
		want           []string
	}{
		{"card", false, nil},
		{"registry", false, []string{"1.2.0 deprecated 0", "2.0.0 active 1 " + u, "1.0.0 active 0"}},
		{"all", true, []string{"1.2.0 deprecated 0", "2.0.0 active 1 " + u, "1.1.0 deleted 0", "1.0.0 active 0"}},
	} {
		es, err := db.FeedEntriesNamed(ctx, store.NamedQuery{Name: name, FeedFilter: store.FeedFilter{Source: tc.source},
			IncludeDeleted: tc.includeDeleted})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			s := fmt.Sprintf("%s %s %d", e.Registry.Version, e.Registry.Status, map[bool]int{true: 1}[e.Registry.Latest])
			for _, r := range e.Records {
				s += " " + r.EndpointNorm
			}
			if e.Removed() {
				s += " removed"
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("source %s, deleted %v (-want +got):\n%s", tc.source, tc.includeDeleted, diff)
		}
	}

	// The latest version deprecated: its servers stay, as they stay in the
	// Registry's own list; the latest deleted: no record of the name is
	// left, its versions are listed, the deleted ones only when asked.
	for _, step := range []struct {
		status         string
		includeDeleted bool
		want           []string
	}{
		{"deprecated", false, []string{"1.2.0 deprecated 0", "2.0.0 deprecated 1 " + u, "1.0.0 active 0"}},
		{"deleted", false, []string{"1.2.0 deprecated 0", "1.0.0 active 0"}},
		{"deleted", true, []string{"1.2.0 deprecated 0", "2.0.0 deleted 1", "1.1.0 deleted 0", "1.0.0 active 0"}},
	} {
		entries[2].Status = step.status
		clock = clock.Add(time.Minute)
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: entries[2:3]}); err != nil {
			t.Fatal(err)
		}
		es, err := db.FeedEntriesNamed(ctx, store.NamedQuery{Name: name, FeedFilter: store.FeedFilter{Source: "registry"},
			IncludeDeleted: step.includeDeleted})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			s := fmt.Sprintf("%s %s %d", e.Registry.Version, e.Registry.Status, map[bool]int{true: 1}[e.Registry.Latest])
			for _, r := range e.Records {
				s += " " + r.EndpointNorm
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("latest %s, deleted %v (-want +got):\n%s", step.status, step.includeDeleted, diff)
		}
	}
}

// TestRegistryDeprecatedListed: a server whose latest Registry version is
// deprecated stays in the feed, with its status, as it stays in the
// Registry's own list; the probe pass no longer reaches it; deleted, it
// leaves the feed with a tombstone that says so.
func TestRegistryDeprecatedListed(t *testing.T) { eachDialect(t, testRegistryDeprecatedListed) }

func testRegistryDeprecatedListed(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	const reg, name, u = "https://registry.example", "example.d/old", "https://old.d.example/mcp"
	entry := store.RegistryEntry{Source: reg, Name: name, Version: "1.0.0", Status: "active", ReportedLatest: true,
		ServerJSON: `{"name":"example.d/old","version":"1.0.0","description":"d"}`}
	// write stores entry as the Registry has it now and runs the remote
	// pass as a crawl does: the entries whose remotes are not current
	// come with their server.json.
	write := func() {
		t.Helper()
		clock = clock.Add(time.Hour)
		entry.ChangedAt = store.FormatTime(clock)
		if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: []store.RegistryEntry{entry}}); err != nil {
			t.Fatal(err)
		}
		err := db.EachListedEntry(ctx, func(e store.RegistryEntryDoc) error {
			if e.ServerJSON == "" {
				return nil
			}
			return db.ReplaceRegistryRemotes(ctx, e, "sha", []store.RegistryRemote{{URLNorm: u, URL: u, Type: "streamable-http"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.PruneRegistryRemotes(ctx); err != nil {
			t.Fatal(err)
		}
	}
	type state struct {
		Status, Removed string
		Probed          int
	}
	read := func(since string) []state {
		t.Helper()
		var out []state
		err := db.EachFeedServer(ctx, store.FeedQuery{Since: since, FeedFilter: store.FeedFilter{Source: "registry"}},
			func(s *store.FeedServer) error {
				st := state{Removed: s.RemovedReason}
				if s.Registry != nil {
					st.Status = s.Registry.Status
				}
				out = append(out, st)
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		probed := 0
		if err := db.EachActiveRegistryRemote(ctx, func(store.DeclaredRemote) error { probed++; return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			out[i].Probed = probed
		}
		return out
	}
	write()
	if diff := cmp.Diff([]state{{"active", "", 1}}, read("")); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	for _, step := range []struct {
		status string
		want   []state
	}{
		{"deprecated", []state{{"deprecated", "", 0}}},
		{"active", []state{{"active", "", 1}}},
		{"deleted", []state{{"", store.RemovedRegistryDeleted, 0}}},
	} {
		since := store.FormatTime(clock)
		entry.Status = step.status
		write()
		if diff := cmp.Diff(step.want, read(since)); diff != "" {
			t.Errorf("delta after %s (-want +got):\n%s", step.status, diff)
		}
	}
	if got := read(""); len(got) != 0 {
		t.Errorf("feed after the deletion: %v", got)
	}
}

// TestRegistryOnlyCategory: a server only the Registry declares has its
// entry's category in the feed, not that of a row its endpoint kept from
// a card that once listed it; a listed one has its own.
func TestRegistryOnlyCategory(t *testing.T) { eachDialect(t, testRegistryOnlyCategory) }

func testRegistryOnlyCategory(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { return clock })
	ctx := context.Background()
	const (
		listed = "https://mcp.a.example/one"
		only   = "https://only.r.example/mcp"
		reg    = "https://registry.example"
	)
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDomain(ctx, result("a.example", listed)); err != nil {
		t.Fatal(err)
	}
	entries := []store.RegistryEntry{{Source: reg, Name: "example.r/only", Version: "1.0.0", Status: "active",
		ReportedLatest: true, ServerJSON: `{"name":"example.r/only","version":"1.0.0","description":"r"}`}}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: reg, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: reg, Name: "example.r/only", Version: "1.0.0", ChangedAt: store.FormatTime(clock)}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", []store.RegistryRemote{{URLNorm: only, URL: only,
		Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	at := store.FormatTime(clock)
	if err := db.SaveCategories(ctx, []store.CategoryRow{
		{Kind: store.KindEndpoint, Subject: listed, Category: "finance", Source: "name", ComputedAt: at},
		{Kind: store.KindEndpoint, Subject: only, Category: "maps_transport", Source: "name", ComputedAt: at},
		{Kind: store.KindRegistry, Registry: reg, Subject: "example.r/only", Category: "travel", Source: "description",
			ComputedAt: at},
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: store.FeedFilter{Source: store.FeedSourceAll}},
		func(s *store.FeedServer) error {
			got[s.EndpointNorm] = s.Category + " (" + s.CategorySource + ")"
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{listed: "finance (name)", only: "travel (description)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
}

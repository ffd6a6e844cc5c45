package store_test

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// view is what both ways of reading the feed must agree on.
type view struct {
	Norm, Endpoint, Transport, CardKey, Name, Version, Grade string
	Findings                                                 []string
	FirstSeen, LastSeen, Probe, Decision                     string
	Listings                                                 []store.Listing
	Category                                                 string // category (source); "" when none
	Remote, Icons                                            string // from the card, as JSON
}

// cardParts is what a record takes from its card, as the feed republishes
// it: the remote with the endpoint's URL when that is a web URL, and the
// https icons, as JSON with HTML left unescaped.
func cardParts(t *testing.T, card, endpoint string) (remote, icons string) {
	t.Helper()
	var c servercard.Card
	_ = json.Unmarshal([]byte(card), &c)
	encode := func(v any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	if ics := slices.DeleteFunc(c.Icons, func(ic servercard.Icon) bool { return !servercard.IsHTTPSURL(ic.Src) }); len(ics) > 0 {
		icons = encode(ics)
	}
	if i := slices.IndexFunc(c.Remotes, func(r servercard.Remote) bool { return r.URL == endpoint }); i >= 0 && endpoint != "" &&
		servercard.IsWebRemoteURL(c.Remotes[i].URL) {
		remote = encode(c.Remotes[i])
	}
	return remote, icons
}

func fromServers(t *testing.T, db *store.DB) []view {
	t.Helper()
	ss, err := db.Servers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := []view{}
	for _, s := range ss {
		v := view{Norm: s.EndpointNorm, Endpoint: s.Endpoint, Transport: s.Transport, CardKey: s.Card.Key, Name: s.Card.Name,
			Version: s.Card.Version, Grade: s.Card.Grade, FirstSeen: s.FirstSeen, LastSeen: s.LastSeen, Listings: s.Listings}
		v.Findings = []string{}
		for _, f := range s.Card.Findings {
			v.Findings = append(v.Findings, f.Code)
		}
		slices.Sort(v.Findings)
		v.Findings = slices.Compact(v.Findings)
		if c := s.Category; c != nil && c.Category != "" {
			v.Category = c.Category + " (" + c.Source + ")"
		}
		if s.Probe != nil {
			v.Probe = s.Probe.Outcome + s.Probe.ProbedAt
		}
		if s.Decision != nil {
			v.Decision = s.Decision.Decision + ":" + s.Decision.Reason
		}
		v.Remote, v.Icons = cardParts(t, s.Card.JSON, s.Endpoint)
		out = append(out, v)
	}
	return out
}

func fromReadModel(t *testing.T, db *store.DB) []view {
	t.Helper()
	out := []view{}
	err := db.EachFeedServer(context.Background(), store.FeedQuery{}, func(s *store.FeedServer) error {
		v := view{Norm: s.EndpointNorm, Endpoint: s.Endpoint, Transport: s.Transport, CardKey: s.CardKey, Name: s.Name,
			Version: s.Version, Grade: s.Grade, Findings: s.Findings, FirstSeen: s.FirstSeen, LastSeen: s.LastSeen,
			Listings: s.Listings, Remote: s.Remote, Icons: s.Icons}
		if s.Probe != nil {
			v.Probe = s.Probe.Outcome + s.Probe.ProbedAt
		}
		if s.Decision != nil {
			v.Decision = s.Decision.Decision + ":" + s.Decision.Reason
		}
		if s.Category != "" {
			v.Category = s.Category + " (" + s.CategorySource + ")"
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadModelMatchesTheCrawlTables: after crawls that add, share, regrade,
// remove and bring back servers, and probes, the read model says what a
// fresh computation from the crawl's own tables says.
func TestReadModelMatchesTheCrawlTables(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, filepath.Join(t.TempDir(), "x.db"), func() time.Time { return now })
	step := func(name string) {
		t.Helper()
		want := fromServers(t, db)
		if diff := cmp.Diff(want, fromReadModel(t, db)); diff != "" {
			t.Fatalf("after %s (-crawl tables +read model):\n%s", name, diff)
		}
		if n, err := db.CountFeedServers(ctx, store.FeedQuery{}); err != nil || n != len(want) {
			t.Fatalf("after %s: the kept count says %d servers (%v), the crawl tables %d", name, n, err, len(want))
		}
		now = now.Add(time.Minute)
	}
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 23, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	step("the first crawl")
	if err := feedtest.Fill(ctx, db, feedtest.Options{From: 5, Domains: 10, RunID: 2}); err != nil {
		t.Fatal(err)
	}
	step("a re-crawl")
	// d000005 stops listing d000004's card: the shared endpoint now has
	// one card less; d000010 loses its catalog.
	if err := feedtest.Save(ctx, db, 3, feedtest.Domain(5), feedtest.Card{Key: "https://d000004.example/card-a.json",
		Name: "regraded", Version: "9", Grade: "non_conformant", Remotes: []string{"https://mcp.d000004.example/a"}}); err != nil {
		t.Fatal(err)
	}
	step("a regraded shared card")
	if err := feedtest.Save(ctx, db, 3, feedtest.Domain(10)); err != nil {
		t.Fatal(err)
	}
	step("a lost catalog")
	if err := feedtest.Fill(ctx, db, feedtest.Options{From: 10, Domains: 1, RunID: 4}); err != nil {
		t.Fatal(err)
	}
	step("a catalog back")
	if err := db.AddProbe(ctx, 4, store.ProbeRow{RemoteNorm: "https://mcp.d000004.example/a", URL: "https://mcp.d000004.example/a",
		ProbedAt: "2026-11-03T00:00:00Z", Outcome: "rate_limited", Result: `{}`}); err != nil {
		t.Fatal(err)
	}
	step("a probe")
}

// TestBestCardOfASharedEndpoint: an endpoint many cards declare is
// described by the best-graded of them, ties going to the smallest key,
// whatever the order of keys and grades, as cards are regraded, stop being
// listed and come in; the read model says what the crawl tables say.
func TestBestCardOfASharedEndpoint(t *testing.T) { eachDialect(t, testBestCardOfASharedEndpoint) }

func testBestCardOfASharedEndpoint(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	const shared = "https://mcp.shared.example/mcp"
	save := func(i int, grade string) {
		t.Helper()
		var cards []feedtest.Card
		if grade != "" {
			cards = append(cards, feedtest.Card{Key: "https://" + feedtest.Domain(i) + "/card.json", Name: "com.example/" +
				feedtest.Domain(i), Grade: grade, Remotes: []string{shared}})
		}
		if err := feedtest.Save(ctx, db, 1, feedtest.Domain(i), cards...); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		name   string
		saves  map[int]string // domain → its card's grade; "" lists none
		wantBy int            // the domain whose card describes the endpoint
	}{
		{"a conformant card after lesser ones", map[int]string{1: "near_conformant", 2: "non_conformant",
			3: "conformant", 4: "near_conformant"}, 3},
		{"the conformant card regraded", map[int]string{3: "non_conformant"}, 1},
		{"the best near card gone", map[int]string{1: ""}, 4},
		{"only non-conformant left", map[int]string{4: "non_conformant"}, 2},
		{"a conformant card with the smallest key", map[int]string{0: "conformant"}, 0},
		{"two conformant cards", map[int]string{5: "conformant", 2: "conformant"}, 0},
		{"the first of them gone", map[int]string{0: ""}, 2},
	} {
		for _, i := range slices.Sorted(maps.Keys(step.saves)) {
			save(i, step.saves[i])
		}
		want := fromServers(t, db)
		if diff := cmp.Diff(want, fromReadModel(t, db)); diff != "" {
			t.Fatalf("%s (-crawl tables +read model):\n%s", step.name, diff)
		}
		if len(want) != 1 || want[0].CardKey != "https://"+feedtest.Domain(step.wantBy)+"/card.json" {
			t.Fatalf("%s: servers %+v, want the endpoint described by %s's card", step.name, want, feedtest.Domain(step.wantBy))
		}
	}
}

// TestChangedCardReachesOtherDomainsRecords: when one domain saves a card
// that changed (another document, or the same judged differently), the
// records another domain's listings of that card reach follow, though
// this domain does not list them.
func TestChangedCardReachesOtherDomainsRecords(t *testing.T) {
	eachDialect(t, testChangedCardReachesOtherDomainsRecords)
}

func testChangedCardReachesOtherDomainsRecords(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	const key = "https://cards.example/shared.json"
	const older, newer = "https://mcp.cards.example/v1", "https://mcp.cards.example/v2"
	v2 := `{"name":"com.example/shared","version":"2","remotes":[{"type":"streamable-http","url":"` + newer + `"}]}`
	for _, step := range []struct {
		name, domain string
		card         feedtest.Card
		want         map[string]string // endpoint → version and grade its record shows
	}{
		{"b lists the card's first version", feedtest.Domain(2),
			feedtest.Card{Key: key, Name: "com.example/shared", Version: "1", Remotes: []string{older}},
			map[string]string{older: "1 conformant"}},
		{"a lists its second, with another endpoint", feedtest.Domain(1),
			feedtest.Card{Key: key, Name: "com.example/shared", Version: "2", JSON: v2, Remotes: []string{newer}},
			map[string]string{older: "2 conformant", newer: "2 conformant"}},
		{"a lists it again, judged otherwise", feedtest.Domain(1),
			feedtest.Card{Key: key, Name: "com.example/shared", Version: "2", JSON: v2, Grade: "non_conformant",
				Remotes: []string{newer}},
			map[string]string{older: "2 non_conformant", newer: "2 non_conformant"}},
	} {
		if err := feedtest.Save(ctx, db, 1, step.domain, step.card); err != nil {
			t.Fatal(err)
		}
		want := fromServers(t, db)
		got := fromReadModel(t, db)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s (-crawl tables +read model):\n%s", step.name, diff)
		}
		shown := map[string]string{}
		for _, v := range got {
			shown[v.Norm] = v.Version + " " + v.Grade
		}
		if diff := cmp.Diff(step.want, shown); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.name, diff)
		}
	}
}

// TestUpdatedAtMovesOnMeaningOnly: a re-crawl with nothing new and a new
// probe decision leave updated_at; a new version, a new probe outcome and
// a removal move it, and a removal leaves a tombstone.
func TestUpdatedAtMovesOnMeaningOnly(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, filepath.Join(t.TempDir(), "x.db"), func() time.Time { return now })
	card := feedtest.Card{Key: "https://a.example/card.json", Name: "com.example/a", Version: "1",
		Remotes: []string{"https://a.example/mcp"}}
	updated := func() (string, string) {
		t.Helper()
		var u, removed string
		if err := db.EachFeedServer(ctx, store.FeedQuery{Since: "0"}, func(s *store.FeedServer) error {
			u, removed = s.UpdatedAt, s.RemovedReason
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return u, removed
	}
	version := func() string { return feedVersion(t, db) }
	if err := feedtest.Save(ctx, db, 1, "a.example", card); err != nil {
		t.Fatal(err)
	}
	first, _ := updated()
	v1 := version()
	for _, change := range []struct {
		name    string
		do      func() error
		meaning bool
	}{
		{"a re-crawl with nothing new", func() error { return feedtest.Save(ctx, db, 2, "a.example", card) }, false},
		{"a new decision", func() error {
			return db.AddProbeDecision(ctx, store.ProbeDecision{RunID: 2, RemoteNorm: "https://a.example/mcp", Decision: "skip", Reason: "fresh"})
		}, false},
		{"a probe", func() error {
			return db.AddProbe(ctx, 2, store.ProbeRow{RemoteNorm: "https://a.example/mcp", Outcome: "ok", Result: `{}`})
		}, true},
		{"the same outcome again", func() error {
			return db.AddProbe(ctx, 3, store.ProbeRow{RemoteNorm: "https://a.example/mcp", Outcome: "ok", Result: `{}`})
		}, false},
		{"a new version", func() error {
			c := card
			c.Version = "2"
			return feedtest.Save(ctx, db, 3, "a.example", c)
		}, true},
		{"the catalog gone", func() error { return feedtest.Save(ctx, db, 4, "a.example") }, true},
	} {
		now = now.Add(time.Hour)
		before, _ := updated()
		if err := change.do(); err != nil {
			t.Fatal(err)
		}
		after, removed := updated()
		if moved := after != before; moved != change.meaning {
			t.Errorf("%s: updated_at %s -> %s; want moved=%v", change.name, before, after, change.meaning)
		}
		if change.name == "the catalog gone" && removed != store.RemovedCatalogGone {
			t.Errorf("tombstone reason %q", removed)
		}
	}
	if first == "" || version() == v1 {
		t.Errorf("feed version did not change (%s)", v1)
	}
}

// TestMigrationBuildsTheReadModel: a database from before migration 0005
// (here: one whose read model is dropped and the migration forgotten) gets
// its read model built when it is opened for writing.
func TestMigrationBuildsTheReadModel(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db := open(t, path, nil)
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 12, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	want := fromServers(t, db)
	// A database that old has none of the later migrations of the read
	// model either.
	for _, q := range []string{`DROP TABLE feed_servers`, `DROP TABLE feed_state`,
		`DELETE FROM schema_migrations WHERE version IN ('0005_feed_servers', '0010_feed_card_parts', '0014_feed_catalog_card')`} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if _, err := store.Open(ctx, path, store.Options{ReadOnly: true}); err == nil {
		t.Fatal("a read-only open used a database without its read model")
	}
	db = open(t, path, nil)
	if diff := cmp.Diff(want, fromReadModel(t, db)); diff != "" {
		t.Errorf("built read model (-crawl tables +read model):\n%s", diff)
	}
	if _, err := db.FeedVersion(ctx); err != nil {
		t.Error(err)
	}
	if n, err := db.CountFeedServers(ctx, store.FeedQuery{}); err != nil || n != len(want) {
		t.Errorf("the kept count says %d servers (%v), want %d", n, err, len(want))
	}
}

// TestMigrationFillsCardParts: a database whose read model predates
// migration 0010 gets each record's remote and icons, and the count of
// listed records, when it is opened for writing, without a change a
// mirror would see.
func TestMigrationFillsCardParts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db := open(t, path, nil)
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 12, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	// A tombstone among them: it is not counted.
	if err := feedtest.Save(ctx, db, 2, feedtest.Domain(3)); err != nil {
		t.Fatal(err)
	}
	want := fromReadModel(t, db)
	version, err := db.FeedVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE feed_servers DROP COLUMN remote`, `ALTER TABLE feed_servers DROP COLUMN icons`,
		`ALTER TABLE feed_state DROP COLUMN live`, `DELETE FROM schema_migrations WHERE version = '0010_feed_card_parts'`} {
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = open(t, path, nil)
	if diff := cmp.Diff(want, fromReadModel(t, db)); diff != "" {
		t.Errorf("filled read model (-before +after):\n%s", diff)
	}
	if n, err := db.CountFeedServers(ctx, store.FeedQuery{}); err != nil || n != len(want) {
		t.Errorf("the kept count says %d servers (%v), want %d", n, err, len(want))
	}
	if v, err := db.FeedVersion(ctx); err != nil || v != version {
		t.Errorf("feed version %s (%v) after the fill, want %s", v, err, version)
	}
	remotes, icons := 0, 0
	for _, v := range want {
		if v.Remote != "" {
			remotes++
		}
		if v.Icons != "" {
			icons++
		}
	}
	if remotes == 0 || icons == 0 {
		t.Errorf("%d records with a remote, %d with icons: the fill is not tested", remotes, icons)
	}
}

// TestFeedCategoryFilter: the read model carries each record's stored
// category, and FeedQuery keeps one category, or the records without one,
// so that the two walks split the feed.
func TestFeedCategoryFilter(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "x.db"), time.Now)
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 23, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	walk := func(q store.FeedQuery) map[string]string {
		out := map[string]string{}
		if err := db.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
			out[s.EndpointNorm+" "+s.CardKey] = s.Category + "/" + s.CategorySource
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all, travel, none := walk(store.FeedQuery{}), walk(store.FeedQuery{FeedFilter: store.FeedFilter{Category: "travel"}}), walk(store.FeedQuery{FeedFilter: store.FeedFilter{NoCategory: true}})
	if len(travel) == 0 || len(none) == 0 || len(travel)+len(none) != len(all) {
		t.Fatalf("%d travel + %d without != %d records", len(travel), len(none), len(all))
	}
	for k, c := range all {
		want := none
		if c != "/" {
			want = travel
		}
		if want[k] != c {
			t.Errorf("%s (%s) not in its walk", k, c)
		}
	}
	if travel["https://mcp.d000002.example/a https://d000002.example/card-a.json"] != "travel/name" ||
		travel[" https://d000014.example/card-a.json"] != "travel/description" {
		t.Errorf("travel walk: %v", travel)
	}
}

// TestFeedGradeOutcomeFilter: each filter, and filters together, keep
// exactly the records whose grade and latest probe outcome say so, in
// EachFeedServer, EachFeedEntry and FeedEntries alike.
func TestFeedGradeOutcomeFilter(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "x.db"), time.Now)
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: 23, RunID: 1}); err != nil {
		t.Fatal(err)
	}
	type rec struct{ Key, Grade, Outcome string }
	toRec := func(s *store.FeedServer) rec {
		r := rec{Key: s.EndpointNorm + " " + s.CardKey, Grade: s.Grade}
		if s.Probe != nil {
			r.Outcome = s.Probe.Outcome
		}
		return r
	}
	walk := func(f store.FeedFilter) []rec {
		out := []rec{}
		if err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: f}, func(s *store.FeedServer) error {
			out = append(out, toRec(s))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	entries := func(f store.FeedFilter) []rec {
		out := []rec{}
		if err := db.EachFeedEntry(ctx, f, 0, func(e *store.FeedEntry) error {
			for i := range e.Records {
				out = append(out, toRec(&e.Records[i]))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(out, func(a, b rec) int { return strings.Compare(a.Key, b.Key) })
		return out
	}
	listed := func(f store.FeedFilter) []rec {
		out := []rec{}
		es, _, err := db.FeedEntries(ctx, store.EntryQuery{FeedFilter: f, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			for i := range e.Records {
				out = append(out, toRec(&e.Records[i]))
			}
		}
		slices.SortFunc(out, func(a, b rec) int { return strings.Compare(a.Key, b.Key) })
		return out
	}
	all := walk(store.FeedFilter{})
	for _, tc := range []struct {
		name   string
		filter store.FeedFilter
		keep   func(rec) bool
	}{
		{"conformant", store.FeedFilter{Grade: "conformant"}, func(r rec) bool { return r.Grade == "conformant" }},
		{"near", store.FeedFilter{Grade: "near_conformant"}, func(r rec) bool { return r.Grade == "near_conformant" }},
		{"non", store.FeedFilter{Grade: "non_conformant"}, func(r rec) bool { return r.Grade == "non_conformant" }},
		{"ok", store.FeedFilter{Outcome: "ok"}, func(r rec) bool { return r.Outcome == "ok" }},
		{"timeout", store.FeedFilter{Outcome: "timeout"}, func(r rec) bool { return r.Outcome == "timeout" }},
		{"never probed", store.FeedFilter{NotProbed: true}, func(r rec) bool { return r.Outcome == "" }},
		{"conformant and ok", store.FeedFilter{Grade: "conformant", Outcome: "ok"},
			func(r rec) bool { return r.Grade == "conformant" && r.Outcome == "ok" }},
		{"non_conformant and never probed", store.FeedFilter{Grade: "non_conformant", NotProbed: true},
			func(r rec) bool { return r.Grade == "non_conformant" && r.Outcome == "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []rec{}
			for _, r := range all {
				if tc.keep(r) {
					want = append(want, r)
				}
			}
			if len(want) == 0 || len(want) == len(all) {
				t.Fatalf("the fixture does not exercise this filter: %d of %d records", len(want), len(all))
			}
			if diff := cmp.Diff(want, walk(tc.filter)); diff != "" {
				t.Errorf("EachFeedServer (-want +got):\n%s", diff)
			}
			// Entries hold exactly the records the filter keeps; the
			// Registry list leaves out cards with no name, so only what it
			// keeps is checked there.
			sorted := slices.Clone(want)
			slices.SortFunc(sorted, func(a, b rec) int { return strings.Compare(a.Key, b.Key) })
			if diff := cmp.Diff(sorted, entries(tc.filter)); diff != "" {
				t.Errorf("EachFeedEntry (-want +got):\n%s", diff)
			}
			for _, r := range listed(tc.filter) {
				if !tc.keep(r) {
					t.Errorf("FeedEntries kept %v", r)
				}
			}
		})
	}
}

package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/store"
)

// The pages' queries on both databases: paging walks every server once,
// search and the grade filter narrow, the counts add up, and a server's
// detail page finds its card and listing.
func TestSiteQueries(t *testing.T) { eachDialect(t, testSiteQueries) }

func testSiteQueries(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	domains := []string{"a.example", "b.example", "c.example"}
	if _, err := db.Enqueue(ctx, domains, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		if err := db.SaveDomain(ctx, result(d, "https://mcp."+d+"/one", "https://mcp."+d+"/two")); err != nil {
			t.Fatal(err)
		}
	}
	var walked []string
	for _, k := range walkSite(t, db, store.SiteFilter{Limit: 2}) {
		walked = append(walked, k.Subject)
	}
	want := []string{"https://mcp.a.example/one", "https://mcp.a.example/two", "https://mcp.b.example/one",
		"https://mcp.b.example/two", "https://mcp.c.example/one", "https://mcp.c.example/two"}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("paged walk (-want +got):\n%s", diff)
	}

	// Every card is named com.example/x: its namespace is com.example, and
	// neither a namespace it merely starts with nor one it has no "/" after
	// is its own.
	err := db.SaveNamespaces(ctx, []store.NamespaceRow{
		{Namespace: "com.example", Kind: "domain", Domain: "example.com", Method: "http", Result: "{}", CheckedAt: db.Now()},
		{Namespace: "com", Kind: "other", Method: "dns", Result: "{}", CheckedAt: db.Now()},
		{Namespace: "com.example/x", Kind: "other", Method: "github", Result: "{}", CheckedAt: db.Now()},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    store.SiteFilter
		want int
	}{
		{"namespace method", store.SiteFilter{NSMethod: "http"}, 6},
		{"a namespace the name only starts with", store.SiteFilter{NSMethod: "dns"}, 0},
		{"the whole name as a namespace", store.SiteFilter{NSMethod: "github"}, 0},
		{"search by domain", store.SiteFilter{Q: "B.EXAMPLE"}, 2},
		{"search matches nothing", store.SiteFilter{Q: "100%_"}, 0},
		{"grade", store.SiteFilter{Grade: "conformant"}, 6},
		{"other grade", store.SiteFilter{Grade: "non_conformant"}, 0},
	} {
		page, err := db.SiteServers(ctx, tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(page.Rows) != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.name, len(page.Rows), tc.want)
		}
	}

	// A server only the Registry declares: no grade, an unchecked namespace.
	registryServer(t, db, "io.example/only", "https://only.example/mcp")
	counts, err := db.SiteCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	two := func(a, b string) []store.SiteCount {
		return []store.SiteCount{{Value: a, Count: 6}, {Value: b, Count: 1}}
	}
	all := []store.SiteCount{{Value: "", Count: 7}}
	wantCounts := store.SiteCounts{Total: 7, BySource: two("card", "registry"), ByGrade: two("conformant", ""),
		ByOutcome: all, ByCategory: all, ByNSMethod: two("http", "")}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	// "none" is a namespace checked and not verified; "unknown" one never
	// checked.
	nsRows := func(when, ns string, want ...string) {
		t.Helper()
		page, err := db.SiteServers(ctx, store.SiteFilter{NSMethod: ns})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range page.Rows {
			got = append(got, r.Subject)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ns=%s %s (-want +got):\n%s", ns, when, diff)
		}
	}
	nsRows("before the check", "none")
	nsRows("before the check", store.NSUnknown, "https://only.example/mcp")
	err = db.SaveNamespaces(ctx, []store.NamespaceRow{{Namespace: "io.example", Kind: "other", Method: "none", Result: "{}", CheckedAt: db.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	nsRows("after the check", "none", "https://only.example/mcp")
	nsRows("after the check", store.NSUnknown)
	d, ok, err := db.SiteServer(ctx, store.SiteKey{Kind: store.KindEndpoint, Subject: "https://mcp.b.example/two"})
	if err != nil || !ok {
		t.Fatalf("detail: ok=%v err=%v", ok, err)
	}
	if len(d.Cards) != 1 || d.Cards[0].Key != "https://b.example/card" || len(d.Listings) != 1 {
		t.Errorf("detail: %d cards (%+v), %d listings", len(d.Cards), d.Cards, len(d.Listings))
	}
}

// A filtered page read in windows of driving keys (PostgreSQL's way,
// forced here on both databases with windows of one and two keys) holds
// exactly the servers an unfiltered walk does that match, in order: with
// cards that declare no remote, endpoints only the Registry declares
// between the cards' endpoints, and filters that match many, few or none.
func TestSiteFilteredWindows(t *testing.T) { eachDialect(t, testSiteFilteredWindows) }

func testSiteFilteredWindows(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	grades := []string{"conformant", "near_conformant", "non_conformant"}
	var domains []string
	for i := range 24 {
		domains = append(domains, fmt.Sprintf("d%02d.example", i))
	}
	if _, err := db.Enqueue(ctx, domains, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, d := range domains {
		var r store.DomainResult
		switch i % 4 {
		case 0: // a card without remotes
			r = result(d)
			r.Listings = []store.ListingRecord{{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: r.Cards[0].Key}}
		case 1:
			r = result(d, "https://mcp."+d+"/one", "https://mcp."+d+"/two")
		default:
			r = result(d, "https://mcp."+d+"/one")
		}
		r.Cards[0].Grade = grades[i%3]
		r.Cards[0].Name = []string{"com.ns0/x", "com.ns1/x", "com.ns2/a/b"}[i%3]
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%5 != 2 {
			continue
		}
		// An endpoint only the Registry declares, sorting among the cards'.
		registryServer(t, db, fmt.Sprintf("io.example/only%02d", i), "https://mcp."+d+"/reg")
	}
	// A second entry declaring a Registry-only endpoint, first by name:
	// its name stands for the endpoint.
	registryServer(t, db, "io.example/a-second", "https://mcp.d02.example/reg")
	// Registry entries declaring two of the cards' endpoints: one whose
	// own category (none) stands before its entry's, one that has none of
	// its own and takes its entry's.
	for _, d := range []string{"d05.example", "d06.example"} {
		registryServer(t, db, "io.example/also-"+d, "https://mcp."+d+"/one")
	}
	travel := func(kind, registry, subject string) store.CategoryRow {
		return store.CategoryRow{Kind: kind, Registry: registry, Subject: subject, Category: "travel", Source: "name"}
	}
	cats := []store.CategoryRow{
		travel("registry", siteRegistry, "io.example/also-d05.example"),
		travel("registry", siteRegistry, "io.example/also-d06.example"),
		travel("registry", siteRegistry, "io.example/only12"),
		{Kind: store.KindEndpoint, Subject: "https://mcp.d05.example/one", Reason: "no rule matched"},
	}
	run, err := db.StartRun(ctx, store.RunStart{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range domains {
		switch i % 4 {
		case 0:
			if i%8 == 0 {
				cats = append(cats, travel(store.KindCard, "", "https://"+d+"/card"))
			}
			continue
		case 1:
			cats = append(cats, travel(store.KindEndpoint, "", "https://mcp."+d+"/two"))
		}
		// Probes: the latest outcome is a row's, so an endpoint that timed
		// out once and then answered is not one that times out.
		outcomes := [][]string{{"timeout"}, {"ok"}, {"timeout", "ok"}}[i%3]
		if i%7 == 3 {
			outcomes = []string{"auth_required"}
		}
		for _, o := range outcomes {
			if err := db.AddProbe(ctx, run, store.ProbeRow{RemoteNorm: "https://mcp." + d + "/one", Outcome: o, Result: `{}`}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.AddProbe(ctx, run, store.ProbeRow{RemoteNorm: "https://mcp.d12.example/reg", Outcome: "timeout", Result: `{}`}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveCategories(ctx, cats); err != nil {
		t.Fatal(err)
	}
	// com.ns2/a/b's namespace is com.ns2, never checked: com.ns2/a only
	// starts it.
	var nss []store.NamespaceRow
	for _, n := range [][2]string{{"com.ns0", "http"}, {"com.ns1", "none"}, {"com.ns2/a", "dns"}, {"io.example", "dns"}} {
		nss = append(nss, store.NamespaceRow{Namespace: n[0], Kind: "other", Method: n[1], Result: "{}", CheckedAt: db.Now()})
	}
	if err := db.SaveNamespaces(ctx, nss); err != nil {
		t.Fatal(err)
	}
	all, err := db.SiteServers(ctx, store.SiteFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Rows) != 6*1+6*2+12*1+5 {
		t.Fatalf("%d servers, want 35", len(all.Rows))
	}
	count := func(match func(store.SiteRow) bool) int {
		n := 0
		for _, r := range all.Rows {
			if match(r) {
				n++
			}
		}
		return n
	}
	isTravel := func(r store.SiteRow) bool { return r.Category == "travel" }
	if n := count(isTravel); n != 3+6+2 {
		t.Errorf("%d travel servers, want 11 (3 cards, 6 endpoints of their own, 2 by their Registry entry)", n)
	}
	cases := []siteCase{
		{"grade", store.SiteFilter{Grade: "conformant"}, func(r store.SiteRow) bool { return r.Grade == "conformant" }},
		{"no grade", store.SiteFilter{Grade: "none"}, func(r store.SiteRow) bool { return r.Grade == "" }},
		{"registry", store.SiteFilter{Source: store.SourceRegistry}, func(r store.SiteRow) bool { return r.InRegistry }},
		{"cards", store.SiteFilter{Source: store.SourceCard}, func(r store.SiteRow) bool { return r.InCards }},
		{"none", store.SiteFilter{Grade: "near_conformant", Source: store.SourceRegistry}, func(store.SiteRow) bool { return false }},
		{"category", store.SiteFilter{Category: "travel"}, isTravel},
		{"category and grade", store.SiteFilter{Category: "travel", Grade: "near_conformant"},
			func(r store.SiteRow) bool { return isTravel(r) && r.Grade == "near_conformant" }},
		{"no category", store.SiteFilter{Category: "none"}, func(r store.SiteRow) bool { return r.Category == "" }},
		{"outcome", store.SiteFilter{Outcome: "timeout"}, func(r store.SiteRow) bool { return r.Outcome == "timeout" }},
		{"rare outcome", store.SiteFilter{Outcome: "auth_required"}, func(r store.SiteRow) bool { return r.Outcome == "auth_required" }},
		{"outcome and category", store.SiteFilter{Outcome: "timeout", Category: "travel"},
			func(r store.SiteRow) bool { return r.Outcome == "timeout" && isTravel(r) }},
		{"outcome and source", store.SiteFilter{Outcome: "timeout", Source: store.SourceRegistry},
			func(r store.SiteRow) bool { return r.Outcome == "timeout" && r.InRegistry }},
		{"never probed", store.SiteFilter{Outcome: "none"}, func(r store.SiteRow) bool { return r.Outcome == "" }},
		{"never probed, in the Registry", store.SiteFilter{Outcome: "none", Source: store.SourceRegistry},
			func(r store.SiteRow) bool { return r.Outcome == "" && r.InRegistry }},
		{"never probed, by category", store.SiteFilter{Outcome: "none", Category: "travel"},
			func(r store.SiteRow) bool { return r.Outcome == "" && isTravel(r) }},
		{"registry, by category", store.SiteFilter{Source: store.SourceRegistry, Category: "travel"},
			func(r store.SiteRow) bool { return r.InRegistry && isTravel(r) }},
		{"namespace method", store.SiteFilter{NSMethod: "http"}, func(r store.SiteRow) bool { return r.NSMethod == "http" }},
		{"namespace checked, not verified", store.SiteFilter{NSMethod: "none"}, func(r store.SiteRow) bool { return r.NSMethod == "none" }},
		{"namespace by Registry entry", store.SiteFilter{NSMethod: "dns"}, func(r store.SiteRow) bool { return r.NSMethod == "dns" }},
		{"namespace never checked", store.SiteFilter{NSMethod: store.NSUnknown}, func(r store.SiteRow) bool { return r.NSMethod == "" }},
		{"namespace and outcome", store.SiteFilter{NSMethod: "http", Outcome: "timeout"},
			func(r store.SiteRow) bool { return r.NSMethod == "http" && r.Outcome == "timeout" }},
		{"search and grade", store.SiteFilter{Q: "MCP.D0", Grade: "conformant"},
			func(r store.SiteRow) bool { return strings.Contains(r.URL, "mcp.d0") && r.Grade == "conformant" }},
		{"grade and category", store.SiteFilter{Grade: "near_conformant", Category: "travel", NSMethod: "none"},
			func(r store.SiteRow) bool { return r.Grade == "near_conformant" && isTravel(r) && r.NSMethod == "none" }},
	}
	check := func(when string) {
		t.Helper()
		checkSiteCases(t, db, when, cases, "none")
		// Never probed is read from an index, not walked.
		if ok, err := db.FacetAnswers(ctx, store.SiteFilter{Outcome: "none"}); err != nil || !ok {
			t.Errorf("%s: a facet drives outcome=none: %v, %v", when, ok, err)
		}
		// The Registry list API's entries of the same filters, proposed by
		// the same indexes where they can.
		for _, f := range []store.FeedFilter{{Outcome: "timeout"}, {Outcome: "auth_required"}, {Source: store.FeedSourceRegistry},
			{Source: store.FeedSourceRegistry, Outcome: "timeout"}, {Grade: "conformant", Outcome: "timeout"},
			{Category: "travel", NotProbed: true}, {Source: store.FeedSourceRegistry, Grade: "conformant"}} {
			if checkEntries(t, db, when, f) == 0 {
				t.Errorf("%s: no entry of %+v; the case tests nothing", when, f)
			}
		}
		// The feed's walks (export, the feed files) merge the cards'
		// records with the endpoints only the Registry declares.
		for _, q := range []store.FeedQuery{{FeedFilter: store.FeedFilter{Source: store.FeedSourceAll}},
			{FeedFilter: store.FeedFilter{Source: store.FeedSourceRegistry}},
			{FeedFilter: store.FeedFilter{Source: store.FeedSourceAll, Outcome: "timeout"}}} {
			checkFeedWalk(t, db, when, q)
		}
	}
	check("without serve's index")

	// serve's index drives a grade's pages; what changed since its last
	// refresh is read from the feed records written since, or, past its
	// bound, the servers are walked.
	ix := openSearchIndex(t, db)
	for range 2 { // the second makes it exact as of the first
		if _, err := ix.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check("with serve's index")
	func() {
		// A search over the index's bound goes by the filter's facets.
		defer ix.SetMaxCandidates(ix.SetMaxCandidates(3))
		check("with serve's index, terms over its bound")
	}()
	again := result("d01.example", "https://mcp.d01.example/one", "https://mcp.d01.example/two")
	again.Cards[0].Grade, again.Cards[0].Name = "conformant", "com.ns1/x"
	if err := db.SaveDomain(ctx, again); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, []string{"d24.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	added := result("d24.example", "https://mcp.d24.example/one")
	added.Cards[0].Grade = "non_conformant"
	if err := db.SaveDomain(ctx, added); err != nil {
		t.Fatal(err)
	}
	check("after grades changed, before a refresh")
	defer ix.SetMaxCandidates(ix.SetMaxCandidates(1))
	check("after grades changed, more than the index's bound since")

	// Domains that stop listing their cards leave tombstones in the read
	// model (a card without remotes, an endpoint), which no count holds.
	for _, d := range []string{"d00.example", "d03.example"} {
		if err := db.SaveDomain(ctx, result(d)); err != nil {
			t.Fatal(err)
		}
	}
	check("after two domains stopped listing their cards")
}

// checkFeedWalk walks the feed records q selects a few at a time and
// compares them with a walk in pages of the default size.
func checkFeedWalk(t *testing.T, db *store.DB, when string, q store.FeedQuery) {
	t.Helper()
	walk := func() []string {
		var out []string
		last := ""
		err := db.EachFeedServer(context.Background(), q, func(s *store.FeedServer) error {
			// The feed's order: endpoints by normalised URL, then the
			// cards without remotes by key, each once.
			key := "0" + s.EndpointNorm
			if s.EndpointNorm == "" {
				key = "1" + s.CardKey
			}
			if key <= last {
				t.Errorf("%s: feed of %+v: %q after %q", when, q.FeedFilter, key, last)
			}
			last = key
			out = append(out, s.EndpointNorm+" "+s.CardKey+" "+s.Name)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := walk()
	if len(want) == 0 {
		t.Errorf("%s: no record of %+v; the case tests nothing", when, q.FeedFilter)
	}
	if q.Outcome == "" && !slices.Contains(want, "https://mcp.d02.example/reg  io.example/a-second") {
		t.Errorf("%s: %+v: the Registry-only endpoint is not named by its first entry:\n%s", when, q.FeedFilter, strings.Join(want, "\n"))
	}
	for _, page := range []int{1, 2, 3} {
		db.SetFeedPage(page)
		if diff := cmp.Diff(want, walk()); diff != "" {
			t.Errorf("%s: feed of %+v in pages of %d (-want +got):\n%s", when, q.FeedFilter, page, diff)
		}
	}
	db.SetFeedPage(0)
}

// siteCase is a filter, and which of an unfiltered walk's servers it
// selects.
type siteCase struct {
	name  string
	f     store.SiteFilter
	match func(store.SiteRow) bool
}

// checkSiteCases walks every case, a page at a time, against an unfiltered
// walk filtered in Go: in windows and facet chunks of a few keys, with whole
// facets read or too large (and walked), then with the defaults. A case
// that selects no server tests nothing, unless named in mayBeEmpty.
func checkSiteCases(t *testing.T, db *store.DB, when string, cases []siteCase, mayBeEmpty ...string) {
	t.Helper()
	all, err := db.SiteServers(context.Background(), store.SiteFilter{Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	if all.Next != nil {
		t.Fatalf("%s: more than one page of servers", when)
	}
	checkCounts(t, db, when, all.Rows)
	for _, tc := range cases {
		var want []store.SiteKey
		for _, r := range all.Rows {
			if tc.match(r) {
				want = append(want, r.SiteKey)
			}
		}
		if len(want) == 0 && !slices.Contains(mayBeEmpty, tc.name) {
			t.Errorf("%s: %s: no server matches; the case tests nothing", when, tc.name)
		}
		for _, size := range []struct{ window, chunk, most int }{{1, 1, 100}, {2, 2, 3}, {1, 1, 1}, {0, 0, 0}} {
			db.SetSiteWindow(size.window)
			db.SetFacetSizes(size.chunk, size.most)
			for _, limit := range []int{1, 3, 200} {
				f := tc.f
				f.Limit = limit
				if diff := cmp.Diff(want, walkSite(t, db, f)); diff != "" {
					t.Errorf("%s: %s, sizes %+v, limit %d (-want +got):\n%s", when, tc.name, size, limit, diff)
				}
			}
		}
	}
}

// checkCounts compares the summary's counts with those of every server's
// row, rows, as the pages compute it.
func checkCounts(t *testing.T, db *store.DB, when string, rows []store.SiteRow) {
	t.Helper()
	got, err := db.SiteCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tally := make([]map[string]int, 5)
	for i := range tally {
		tally[i] = map[string]int{}
	}
	for _, r := range rows {
		source := "registry"
		if r.InCards && r.InRegistry {
			source = "card+registry"
		} else if r.InCards {
			source = "card"
		}
		for i, v := range []string{source, r.Grade, r.Outcome, r.Category, r.NSMethod} {
			tally[i][v]++
		}
	}
	counts := func(m map[string]int) []store.SiteCount {
		var out []store.SiteCount
		for v, n := range m {
			out = append(out, store.SiteCount{Value: v, Count: n})
		}
		return out
	}
	want := store.SiteCounts{Total: len(rows), BySource: counts(tally[0]), ByGrade: counts(tally[1]),
		ByOutcome: counts(tally[2]), ByCategory: counts(tally[3]), ByNSMethod: counts(tally[4]),
		ByListingFinding: got.ByListingFinding}
	order := cmpopts.SortSlices(func(a, b store.SiteCount) bool { return a.Value < b.Value })
	if diff := cmp.Diff(want, got, order, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: counts against the servers' rows (-want +got):\n%s", when, diff)
	}
}

// siteRegistry is the Registry the site tests' entries come from.
const siteRegistry = "https://registry.example"

// registryServer stores a latest, active entry of siteRegistry named name
// that declares one endpoint.
func registryServer(t *testing.T, db *store.DB, name, endpoint string) {
	t.Helper()
	ctx := context.Background()
	entry := store.RegistryEntry{Source: siteRegistry, Name: name, Version: "1.0.0", Status: "active", ReportedLatest: true,
		ServerJSON: `{"name":"` + name + `","version":"1.0.0"}`}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: siteRegistry, Entries: []store.RegistryEntry{entry}}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: siteRegistry, Name: name, Version: entry.Version, ChangedAt: db.Now()}
	remotes := []store.RegistryRemote{{URLNorm: endpoint, URL: endpoint, Type: "streamable-http"}}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", remotes); err != nil {
		t.Fatal(err)
	}
}

// walkSite pages through the servers f selects, to the last page.
func walkSite(t *testing.T, db *store.DB, f store.SiteFilter) []store.SiteKey {
	t.Helper()
	var keys []store.SiteKey
	for range 200 {
		page, err := db.SiteServers(context.Background(), f)
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		for _, r := range page.Rows {
			keys = append(keys, r.SiteKey)
		}
		if page.Next == nil {
			return keys
		}
		f.After = *page.Next
	}
	t.Fatalf("%+v: no last page after 200", f)
	return nil
}

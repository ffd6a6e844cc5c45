package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/store"
)

// category=none reads the rows that say "no category" while every server
// has a row, and computes every server's row otherwise: either way a page
// holds exactly the servers an unfiltered walk does that have none, as the
// servers without a row come and go.
func TestSiteNoCategory(t *testing.T) { eachDialect(t, testSiteNoCategory) }

func testSiteNoCategory(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	addDomain := func(i int) { t.Helper(); siteDomain(t, db, i, "") }
	for i := range 12 {
		addDomain(i)
	}
	// Endpoints only the Registry declares, sorting among the cards', and
	// an entry declaring one of the cards' endpoints.
	for _, i := range []int{2, 5, 9} {
		registryServer(t, db, fmt.Sprintf("io.example/only%02d", i), fmt.Sprintf("https://mcp.d%02d.example/reg", i))
	}
	registryServer(t, db, "io.example/also", "https://mcp.d04.example/one")

	// categorize gives every server without a row one: every third
	// travel, the rest none.
	categorize := func() {
		t.Helper()
		var rows []store.CategoryRow
		n := 0
		err := db.EachCategorySubject(ctx, func(s store.CategorySubject) error {
			if s.StoredInputs != "" {
				return nil
			}
			r := store.CategoryRow{Kind: s.Kind, Registry: s.Registry, Subject: s.Subject, Reason: "no rule matched",
				Inputs: "in"}
			if n%3 == 0 {
				r.Category, r.Source, r.Reason = "travel", "name", ""
			}
			n++
			rows = append(rows, r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SaveCategories(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	mark, complete := completeness(t, "categories", db.MarkCategoriesComplete, db.CategoriesComplete)
	answers := facetAnswers(t, db, store.SiteFilter{Category: "none"})
	none := func(r store.SiteRow) bool { return r.Category == "" }
	cases := []siteCase{
		{"none", store.SiteFilter{Category: "none"}, none},
		{"none and a grade", store.SiteFilter{Category: "none", Grade: "near_conformant"},
			func(r store.SiteRow) bool { return none(r) && r.Grade == "near_conformant" }},
		{"none in the Registry", store.SiteFilter{Category: "none", Source: store.SourceRegistry},
			func(r store.SiteRow) bool { return none(r) && r.InRegistry }},
		{"travel", store.SiteFilter{Category: "travel"}, func(r store.SiteRow) bool { return r.Category == "travel" }},
	}
	check := func(when string) {
		t.Helper()
		checkSiteCases(t, db, when, cases, "travel") // none is travel until the first categorize
		// The Registry list API's entries: a card's record's own category,
		// read from the category index where it can, or walked.
		for _, f := range []store.FeedFilter{{NoCategory: true}, {Category: "travel"}} {
			checkEntries(t, db, when, f)
		}
	}

	mark(false)
	complete("never categorized", false)
	check("never categorized")
	answers("never categorized", false)
	categorize()
	mark(true)
	complete("every server categorized", true)
	check("every server categorized")
	answers("every server categorized", true)

	// Since the mark, the servers written since join the rows.
	addDomain(13) // an endpoint with no row yet
	complete("after a new endpoint", false)
	check("after a new endpoint")
	answers("after a new endpoint", true)
	mark(false)
	categorize()
	mark(true)
	addDomain(15) // a card with no row yet
	addDomain(16) // and an endpoint
	complete("after a new card", false)
	check("after a new card")
	answers("after a new card", true)
	db.SetFacetSizes(0, 1)
	answers("more servers since than the facet holds", false)
	db.SetFacetSizes(0, 0)
	mark(false)
	categorize()
	mark(true)
	check("every server categorized again")

	// An endpoint only the Registry declares takes its entry's category,
	// and a new entry has none yet.
	registryServer(t, db, "io.example/late", "https://mcp.d07.example/reg")
	complete("after a new Registry entry", false)
	check("after a new Registry entry")
	answers("after a new Registry entry", true)
	mark(false)
	categorize()
	mark(true)
	complete("every entry categorized", true)
	check("every entry categorized")
}

// checkEntries pages through the Registry list API's entries of cards a
// filter keeps (and past the Registry's own, with source registry), in pages of one, three and many, with facets of a few keys
// or too many (and walked), and compares their card keys with those of the
// records a walk of the read model keeps. It returns how many there are.
func checkEntries(t *testing.T, db *store.DB, when string, f store.FeedFilter) int {
	t.Helper()
	ctx := context.Background()
	var want []string
	err := db.EachFeedServer(ctx, store.FeedQuery{FeedFilter: f}, func(s *store.FeedServer) error {
		want = append(want, s.CardKey)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	want = slices.DeleteFunc(want, func(k string) bool { return k == "" }) // a server only the Registry declares
	for _, most := range []int{0, 3, 1} {
		db.SetFacetSizes(0, most)
		for _, limit := range []int{1, 3, 200} {
			var got []string
			q := store.EntryQuery{FeedFilter: f, Limit: limit}
			for range 100 {
				entries, more, err := db.FeedEntries(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if e.Registry == nil { // the Registry's own entries follow the cards'
						got = append(got, e.CardKey)
					}
				}
				if !more {
					break
				}
				q.After = entries[len(entries)-1].Cursor()
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: entries of %+v, most %d, limit %d (-want +got):\n%s", when, f, most, limit, diff)
			}
		}
	}
	db.SetFacetSizes(0, 0)
	return len(want)
}

// siteDomain saves domain dNN.example (i = NN) with one card, named name
// unless that is "": a card without remotes for every third, an endpoint
// of its own otherwise, graded conformant or near conformant in turn.
func siteDomain(t *testing.T, db *store.DB, i int, name string) {
	t.Helper()
	ctx := context.Background()
	d := fmt.Sprintf("d%02d.example", i)
	if _, err := db.Enqueue(ctx, []string{d}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r := result(d, "https://mcp."+d+"/one")
	if i%3 == 0 { // a card without remotes
		r = result(d)
		r.Listings = []store.ListingRecord{{CatalogURL: r.CatalogURL, Identifier: "i", CardKey: r.Cards[0].Key}}
	}
	if name != "" {
		r.Cards[0].Name = name
	}
	r.Cards[0].Grade = []string{"conformant", "near_conformant"}[i%2]
	if err := db.SaveDomain(ctx, r); err != nil {
		t.Fatal(err)
	}
}

// facetAnswers returns a check that f's pages are driven by a facet (want
// true) or walk.
func facetAnswers(t *testing.T, db *store.DB, f store.SiteFilter) func(when string, want bool) {
	return func(when string, want bool) {
		t.Helper()
		got, err := db.FacetAnswers(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: a facet drives %+v: %v, want %v", when, f, got, want)
		}
	}
}

// completeness returns checks of one completeness mark (categories',
// namespaces'): mark takes it and wants it taken or not, complete wants it
// current or not.
func completeness(t *testing.T, what string, take, current func(context.Context) (bool, error)) (mark func(want bool),
	complete func(when string, want bool)) {
	ctx := context.Background()
	mark = func(want bool) {
		t.Helper()
		done, err := take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if done != want {
			t.Fatalf("%s marked complete: %v, want %v", what, done, want)
		}
	}
	complete = func(when string, want bool) {
		t.Helper()
		got, err := current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %s complete: %v, want %v", when, what, got, want)
		}
	}
	return mark, complete
}

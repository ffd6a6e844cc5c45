package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestNameListingEntries: the catalogs with active listings that name no
// entry are found with their stored documents (nil without one), and
// naming gives those listings their entry and codes, not while the
// catalog stored is another document, and not to an inactive listing.
func TestNameListingEntries(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testNameListingEntries(t, filepath.Join(t.TempDir(), "n.db")) })
	t.Run("postgres", func(t *testing.T) { testNameListingEntries(t, pgtest.NewDB(t)) })
}

func testNameListingEntries(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	root := func(d string) string { return "https://" + d + "/.well-known/ai-catalog.json" }
	if _, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddObservations(ctx, Fetched{Observation: Observation{Domain: "a.example", Kind: "catalog",
		URL: root("a.example"), FetchedAt: time.Now(), Status: 200, SHA256: "ca"}, Body: []byte(`{"entries":[]}`)}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a.example", "b.example"} {
		r := DomainResult{Domain: d, Outcome: OutcomeCatalog, Definitive: true, CatalogURL: root(d),
			Catalogs: []CatalogRecord{{URL: root(d), BaseURL: root(d), SHA256: "c" + d[:1], JudgedBy: "catalog/0"}}}
		for i, name := range []string{"x", "y", "z"} {
			key := "https://" + d + "/" + name + ".json"
			r.Cards = append(r.Cards, CardRecord{Key: key, SourceURL: key, SHA256: "h" + name, Grade: "conformant",
				JSON: []byte(`{}`), JudgedBy: "servercard/test"})
			r.Listings = append(r.Listings, ListingRecord{CatalogURL: root(d), Identifier: "urn:x:" + name, CardKey: key,
				Entry: i})
		}
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE listings SET entry_index = NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE listings SET active = FALSE WHERE identifier = 'urn:x:z'`); err != nil {
		t.Fatal(err)
	}
	type found struct {
		Key, SHA256, Body string
		HasBody           bool
	}
	var got []found
	if err := db.EachUnnamedListingCatalog(ctx, func(j Judged) error {
		got = append(got, found{j.Key, j.SHA256, string(j.Body), j.Body != nil})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]found{{root("a.example"), "ca", `{"entries":[]}`, true}, {Key: root("b.example"), SHA256: "cb"}},
		got); diff != "" {
		t.Errorf("catalogs with unnamed listings (-want +got):\n%s", diff)
	}
	type listing struct {
		Catalog, Identifier string
		Entry               sql.NullInt64
		Codes               string
	}
	listings := func() []listing {
		t.Helper()
		out, err := collect(ctx, db.sql, func(rows *sql.Rows) (listing, error) {
			var l listing
			err := rows.Scan(&l.Catalog, &l.Identifier, &l.Entry, &l.Codes)
			return l, err
		}, `SELECT catalog_url, identifier, entry_index, entry_codes FROM listings ORDER BY catalog_url, identifier`)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	entries := ListingEntries{Key: root("a.example"), SHA256: "other",
		Entry: func(identifier, _ string) int {
			if identifier == "urn:x:y" {
				return -1
			}
			return 7
		},
		Codes: func(entry int) string { return map[int]string{-1: "sig", 7: "sig weak"}[entry] }}
	before := listings()
	if n, err := db.NameListingEntries(ctx, entries); err != nil || n != 0 {
		t.Fatalf("another document: named %d, %v", n, err)
	}
	if diff := cmp.Diff(before, listings()); diff != "" {
		t.Errorf("named from another document (-want +got):\n%s", diff)
	}
	entries.SHA256 = "ca"
	if n, err := db.NameListingEntries(ctx, entries); err != nil || n != 1 {
		t.Fatalf("named %d, %v; want 1", n, err)
	}
	a, b := root("a.example"), root("b.example")
	seven := sql.NullInt64{Int64: 7, Valid: true}
	want := []listing{{a, "urn:x:x", seven, "sig weak"}, {a, "urn:x:y", sql.NullInt64{}, "sig"}, {Catalog: a, Identifier: "urn:x:z"},
		{Catalog: b, Identifier: "urn:x:x"}, {Catalog: b, Identifier: "urn:x:y"}, {Catalog: b, Identifier: "urn:x:z"}}
	if diff := cmp.Diff(want, listings()); diff != "" {
		t.Errorf("after naming (-want +got):\n%s", diff)
	}
	got = nil
	if err := db.EachUnnamedListingCatalog(ctx, func(j Judged) error {
		got = append(got, found{Key: j.Key})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// a.example's urn:x:y could not be told: looked for again.
	if diff := cmp.Diff([]found{{Key: a}, {Key: b}}, got); diff != "" {
		t.Errorf("catalogs with unnamed listings after (-want +got):\n%s", diff)
	}
}

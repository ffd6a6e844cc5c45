package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

func TestEntryFirstFollowsTheCard(t *testing.T) { eachDialect(t, testEntryFirstFollowsTheCard) }

// testEntryFirstFollowsTheCard: whatever a save does to a card's records
// (new ones, one of several, one removed, one revived ahead of the others,
// a record moving to another card), every live record carries the first
// live record of its card as entry_first, and a tombstone carries none.
func testEntryFirstFollowsTheCard(t *testing.T, dsn string) {
	clock := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	db := open(t, dsn, func() time.Time { clock = clock.Add(time.Second); return clock })
	ctx := context.Background()
	if _, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	// save writes domain's catalog listing card (by URL) with remotes.
	save := func(domain string, cards map[string][]string) {
		t.Helper()
		cat := "https://" + domain + "/.well-known/ai-catalog.json"
		r := store.DomainResult{Domain: domain, Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: cat,
			Catalogs: []store.CatalogRecord{{URL: cat, SHA256: "c"}}}
		for card, remotes := range cards {
			r.Entries = append(r.Entries, store.EntryRecord{CatalogURL: cat, Identifier: card, URL: card, Raw: []byte(`{}`)})
			r.Cards = append(r.Cards, store.CardRecord{Key: card, SourceURL: card, SHA256: "s", Grade: "conformant",
				JSON: []byte(`{}`)})
			for _, rm := range remotes {
				r.Remotes = append(r.Remotes, store.RemoteRecord{URLNorm: rm, URL: rm, Type: "streamable-http", CardKey: card,
					JSON: []byte(`{}`)})
				r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: cat, Identifier: card, CardKey: card,
					RemoteNorm: rm})
			}
			if len(remotes) == 0 {
				r.Listings = append(r.Listings, store.ListingRecord{CatalogURL: cat, Identifier: card, CardKey: card})
			}
		}
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, live int) {
		t.Helper()
		var n, wrong, tombs int
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM feed_servers WHERE removed_at IS NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM feed_servers f WHERE f.removed_at IS NULL
			AND f.entry_first <> (SELECT MIN(CAST(g.kind AS TEXT) || g.key) FROM feed_servers g
			  WHERE g.card_key = f.card_key AND g.removed_at IS NULL)`).Scan(&wrong); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM feed_servers
			WHERE removed_at IS NOT NULL AND entry_first <> ''`).Scan(&tombs); err != nil {
			t.Fatal(err)
		}
		if n != live || wrong != 0 || tombs != 0 {
			t.Errorf("%s: %d live records (want %d), %d with another entry_first than their card's first, %d tombstones with one",
				step, n, live, wrong, tombs)
		}
	}
	x, y := "https://a.example/x.json", "https://b.example/y.json"
	save("a.example", map[string][]string{x: {"https://a.example/m2", "https://a.example/m3"}})
	check("a new card of two records", 2)
	save("b.example", map[string][]string{y: {"https://b.example/m"}, "https://b.example/z.json": nil})
	check("a new card of one record, and one without remotes", 4)
	save("a.example", map[string][]string{x: {"https://a.example/m3"}})
	check("its first record gone", 3)
	save("a.example", map[string][]string{x: {"https://a.example/m1", "https://a.example/m2", "https://a.example/m3"}})
	check("a new first and a revived record", 5)
	// b lists a's first endpoint through a card that sorts before x: the
	// record moves to that card's entry.
	save("b.example", map[string][]string{"https://a.example/w.json": {"https://a.example/m1"}, y: {"https://b.example/m"},
		"https://b.example/z.json": nil})
	check("a record moving to a better card", 5)
	save("a.example", map[string][]string{})
	check("a's catalog empty", 3)
}

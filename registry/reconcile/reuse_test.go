package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A run with a build takes the stored rows of every card whose document,
// judgement, domains, Registry and build are as they were, and computes the
// rest; what it stores is always what Match computes from everything.
func TestRunTakesUnchangedCards(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testRunTakesUnchangedCards(t, openStore(t)) })
	t.Run("postgres", func(t *testing.T) {
		now := func() time.Time { return time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC) }
		db, err := store.Open(context.Background(), pgtest.NewDB(t), store.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		testRunTakesUnchangedCards(t, db)
	})
}

func testRunTakesUnchangedCards(t *testing.T, db *store.DB) {
	ctx := context.Background()
	const src = "https://registry.example"
	// 700 cards over two pages of stamps; every third has a Registry entry
	// at its remote, and five entries match no card.
	var cards []reconcile.Card
	var servers []string
	for i := range 700 {
		host := fmt.Sprintf("h%03d.example.com", i)
		cards = append(cards, reconcile.Card{Key: "https://" + host + "/card", Domains: []string{host},
			Card: servercard.Card{Name: fmt.Sprintf("com.example.h%03d/s", i), Version: "1.0.0", Remotes: remote("https://" + host + "/mcp")}})
		if i%3 == 0 {
			servers = append(servers, fmt.Sprintf(`{"name":"com.example.h%03d/s","version":"2.0.0","remotes":[{"type":"streamable-http","url":"https://%s/mcp"}]}`, i, host))
		}
	}
	for i := range 5 {
		servers = append(servers, fmt.Sprintf(`{"name":"org.example/only%d","version":"1.0.0"}`, i))
	}
	addCards(t, db, cards)
	addEntries(t, db, src, servers, func(int) bool { return true })

	gen := func() int64 {
		t.Helper()
		var g int64
		if err := db.SQL().QueryRow(`SELECT reconcile_gen FROM feed_state WHERE id = 1`).Scan(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	run := func(when, build string, reused int) {
		t.Helper()
		counts, err := reconcile.Run(ctx, db, reconcile.Options{Build: build})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if counts.Reused != reused {
			t.Errorf("%s: %d cards' rows taken as stored, want %d", when, counts.Reused, reused)
		}
		entries := latestEntries(t, db)
		loaded, err := reconcile.Load(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(reconcile.Match(cards, entries), loaded); diff != "" {
			t.Errorf("%s: stored result differs from Match (-match +stored):\n%s", when, diff)
		}
	}
	run("first", "b1", 0)
	before := gen()
	run("again", "b1", 700)
	if gen() != before {
		t.Error("a run that took every card's rows as stored rewrote the reconciliation")
	}

	// A new document (its hash moves with it), a second listing domain, a
	// card no longer listed, and a new card: those three are read.
	cards[10].Card.Name, cards[10].Card.Remotes = "org.example/only1", nil
	doc, _ := json.Marshal(cards[10].Card)
	exec(t, db, `UPDATE cards SET json = ?, sha256 = 'y', name = ? WHERE key = ?`, string(doc), cards[10].Card.Name, cards[10].Key)
	cards[20].Domains = append(cards[20].Domains, "zz.example")
	addListing(t, db, "zz.example", cards[20].Key)
	exec(t, db, `UPDATE listings SET active = FALSE WHERE card_key = ?`, cards[30].Key)
	cards = append(cards[:30], cards[31:]...)
	fresh := reconcile.Card{Key: "https://h999.example.com/card", Domains: []string{"h999.example.com"},
		Card: servercard.Card{Name: "com.example.h000/s", Version: "1.0.0"}}
	addCards(t, db, []reconcile.Card{fresh})
	cards = append(cards, fresh)
	run("after changes", "b1", 697)
	run("settled", "b1", 700)

	// Only a card gone: the cards around it are taken as stored, it is not.
	exec(t, db, `UPDATE listings SET active = FALSE WHERE card_key = ?`, cards[40].Key)
	cards = append(cards[:40], cards[41:]...)
	run("after a card went", "b1", 699)
	exec(t, db, `UPDATE listings SET active = FALSE WHERE card_key IN (?, ?)`, cards[600].Key, cards[601].Key)
	cards = append(cards[:600], cards[602:]...)
	exec(t, db, `UPDATE cards SET sha256 = 'z' WHERE key = ?`, cards[650].Key)
	run("after two went and one changed", "b1", 696)

	// Judged again (the stored JSON may have changed with it): read again.
	exec(t, db, `UPDATE cards SET findings = '[{"code":"remotes_truncated"}]' WHERE key = ?`, cards[5].Key)
	run("after a new judgement", "b1", 696)

	// A Registry change, or another build, reads every card. One that
	// changes no result (the Registry read again) rewrites nothing.
	before = gen()
	exec(t, db, `UPDATE registry_entries SET last_seen = '2026-07-02T00:00:00.000000000Z'`)
	run("after the Registry was read again", "b1", 0)
	if gen() != before {
		t.Error("a Registry read again that changed no result rewrote the reconciliation")
	}
	run("and after that", "b1", 697)
	servers = append(servers, `{"name":"com.example.h001/s","version":"3.0.0"}`)
	addEntries(t, db, src, servers, func(int) bool { return true })
	run("after a Registry change", "b1", 0)
	run("another build", "b2", 0)
	run("without a build", "", 0)
	run("with one again", "b2", 0)
	run("and once more", "b2", 697)
}

// Without Registry-only rows, the cards taken as stored after the last
// one computed end the reconciliation.
func TestRunTakesUnchangedCardsLast(t *testing.T) {
	db := openStore(t)
	cards := []reconcile.Card{
		{Key: "https://a.example/card", Domains: []string{"a.example"}, Card: servercard.Card{Name: "com.example/a"}},
		{Key: "https://b.example/card", Domains: []string{"b.example"}, Card: servercard.Card{Name: "com.example/b"}},
		{Key: "https://c.example/card", Domains: []string{"c.example"}, Card: servercard.Card{Name: "com.example/c"}},
	}
	addCards(t, db, cards)
	for i, reused := range []int{0, 3, 2} {
		if i == 2 {
			exec(t, db, `UPDATE cards SET sha256 = 'y' WHERE key = ?`, cards[0].Key)
		}
		counts, err := reconcile.Run(context.Background(), db, reconcile.Options{Build: "b1"})
		if err != nil || counts.Reused != reused || counts.CardOnly != 3 {
			t.Fatalf("run %d = %+v, %v; want %d reused", i, counts, err, reused)
		}
		loaded, err := reconcile.Load(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(reconcile.Match(cards, nil), loaded); diff != "" {
			t.Errorf("run %d: stored result differs from Match (-match +stored):\n%s", i, diff)
		}
	}
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.SQL().Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func addListing(t *testing.T, db *store.DB, domain, card string) {
	t.Helper()
	exec(t, db, `INSERT INTO domains (domain, added_at, state) VALUES (?, 'now', 'done') ON CONFLICT (domain) DO NOTHING`, domain)
	exec(t, db, `INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, first_seen, last_seen)
		VALUES (?, ?, 'id', ?, '', 'now', 'now')`, domain, "https://"+domain+"/.well-known/ai-catalog.json", card)
}

// latestEntries reads the latest Registry entries as a reconciliation
// sees them.
func latestEntries(t *testing.T, db *store.DB) []reconcile.Entry {
	t.Helper()
	var out []reconcile.Entry
	err := db.EachLatestRegistryEntry(context.Background(), func(se store.RegistryEntry) error {
		e := reconcile.Entry{Source: se.Source, Name: se.Name, Version: se.Version, Status: se.Status}
		if err := json.Unmarshal([]byte(se.ServerJSON), &e.Server); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

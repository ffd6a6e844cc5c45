package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestReconcileCardsOnlyActiveListings: a card no domain lists any more,
// and a domain that stopped listing a card, take no part in reconciliation
// (as they take no part in 'servers').
func TestReconcileCardsOnlyActiveListings(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "r.db"), nil)
	for _, q := range []string{
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
	got, err := db.ReconcileCards(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.ReconcileCard{{Key: "https://a.example/card", JSON: `{"name":"com.example/a"}`, Domains: []string{"a.example"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
}

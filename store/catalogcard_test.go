package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCatalogCardMigration: records written before 0014 get their card as
// the AI Catalog carries it inline (unsafe links dropped, HTML left
// unescaped) when the database is next opened for writing; a card the
// catalog points at by URL gets none, and nothing a mirror sees moves.
func TestCatalogCardMigration(t *testing.T) {
	inline := `{"name":"com.example/a","websiteUrl":"javascript:alert(1)","description":"a <b> & c",` +
		`"icons":[{"src":"http://a.example/i.png"},{"src":"https://a.example/i.png"}],"unknown":1}`
	db := migrateAgain(t,
		// The schema before 0014.
		`ALTER TABLE feed_servers DROP COLUMN catalog_card`,
		`INSERT INTO cards (key, source_url, inline, sha256, grade, json, first_seen, last_seen, changed_at) VALUES
			('https://a.example/.well-known/ai-catalog.json#/entries/0', 'https://a.example/.well-known/ai-catalog.json', 1,
			 'x', 'conformant', '`+inline+`', 'then', 'then', 'then'),
			('https://b.example/card', 'https://b.example/card', 0, 'y', 'conformant', '{"name":"com.example/b"}',
			 'then', 'then', 'then')`,
		`INSERT INTO feed_servers (kind, key, card_key, card_url, card_inline, updated_at, seq) VALUES
			(0, 'https://a.example/mcp', 'https://a.example/.well-known/ai-catalog.json#/entries/0',
			 'https://a.example/.well-known/ai-catalog.json', 1, 'then', 1),
			(0, 'https://b.example/mcp', 'https://b.example/card', 'https://b.example/card', 0, 'then', 1),
			(1, 'https://c.example/gone', 'https://c.example/gone', '', 0, 'then', 1)`,
		`DELETE FROM schema_migrations WHERE version = '0014_feed_catalog_card'`,
	)
	got := rowsOf(t, db, `SELECT key, catalog_card, updated_at, seq FROM feed_servers ORDER BY kind, key`)
	want := [][]string{
		{"https://a.example/mcp", `{"name":"com.example/a","description":"a <b> & c","icons":[{"src":"https://a.example/i.png"}]}`,
			"then", "1"},
		{"https://b.example/mcp", "", "then", "1"},
		// A card missing from cards is carried as an empty one, as the
		// catalog always read it.
		{"https://c.example/gone", "{}", "then", "1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after 0014 (-want +got):\n%s", diff)
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// TestFeedTextPacked: a read packs a record's text columns into one
// (feedColumnsOf); any text comes back as written: separators and digits,
// multi-byte characters, new lines, empty values.
func TestFeedTextPacked(t *testing.T) { eachDialect(t, testFeedTextPacked) }

func testFeedTextPacked(t *testing.T, path string) {
	ctx := context.Background()
	db := open(t, path, nil)
	_, err := db.SQL().ExecContext(ctx, `INSERT INTO feed_servers (kind, key, card_key, name, title, version,
		description, grade, first_seen, last_seen, updated_at, seq) VALUES
		(1, '12:k:1', '12:k:1', 'a:b', '3:xyz', '', 'é – 😀
"q" 0:', ':', '1', '22:', 'then', 1)`)
	if err != nil {
		t.Fatal(err)
	}
	var got []store.FeedServer
	for _, facts := range []store.Facts{0, store.FactsBase, store.FactCardText | store.FactChange} {
		err = db.EachFeedServer(ctx, store.FeedQuery{Facts: facts}, func(s *store.FeedServer) error {
			got = append(got, *s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("facts %b: %d records", facts, len(got))
		}
		s := got[0]
		want := [...]string{"12:k:1", "a:b", "3:xyz", "", ":", "1", "22:"}
		if diff := cmp.Diff(want, [...]string{s.CardKey, s.Name, s.Title, s.Version, s.Grade, s.FirstSeen, s.LastSeen}); diff != "" {
			t.Errorf("facts %b (-want +got):\n%s", facts, diff)
		}
		if facts != store.FactsBase && s.Description != "é – 😀\n\"q\" 0:" {
			t.Errorf("facts %b: description %q", facts, s.Description)
		}
		got = got[:0]
	}
}

package store_test

import (
	"context"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestCategoryChangeMovesFeedVersion: the feed prints each server's
// category, where it came from and why, so the ETags made of the change
// counter must move when a recompute says something new, and only then.
func TestCategoryChangeMovesFeedVersion(t *testing.T) {
	eachDialect(t, testCategoryChangeMovesFeedVersion)
}

func testCategoryChangeMovesFeedVersion(t *testing.T, dsn string) {
	ctx := context.Background()
	db := open(t, dsn, nil)
	card := feedtest.Card{Key: "https://a.example/card.json", Name: "com.example/a", Version: "1",
		Remotes: []string{"https://a.example/mcp"}}
	if err := feedtest.Save(ctx, db, 1, "a.example", card); err != nil {
		t.Fatal(err)
	}
	version := func() string { return feedVersion(t, db) }
	row := store.CategoryRow{Kind: store.KindEndpoint, Subject: "https://a.example/mcp", Category: "travel",
		Source: "name", Reason: "name says flights", Evidence: []string{"flights"}, Inputs: "i1"}
	moved := func(name string, r store.CategoryRow, want bool) {
		t.Helper()
		before := version()
		if err := db.SaveCategories(ctx, []store.CategoryRow{r}); err != nil {
			t.Fatal(err)
		}
		if got := version() != before; got != want {
			t.Errorf("%s: version moved %v, want %v", name, got, want)
		}
	}
	moved("a first category", row, true)
	moved("the same again", row, false)
	other := row
	other.Category, other.Source = "finance", "tools"
	moved("another category", other, true)
	moved("the same again", other, false)
	why := other
	why.Evidence = []string{"pay", "invoice", "refund"}
	moved("the same category for another reason", why, true)
	// Inputs are what the recompute compares to skip unchanged servers;
	// no reader sees them.
	recomputed := why
	recomputed.Inputs = "i3"
	moved("the same verdict from new inputs", recomputed, false)
	moved("back to none", store.CategoryRow{Kind: store.KindEndpoint, Subject: "https://a.example/mcp", Inputs: "i2"}, true)
}

package feed_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestFillDB builds a database for measuring export and serve with the
// built binary (BENCHMARKS.md): CARDCRAWL_FILL_DB names the file,
// CARDCRAWL_FILL_DOMAINS how many domains (two servers each). Skipped
// unless asked for.
func TestFillDB(t *testing.T) {
	path := os.Getenv("CARDCRAWL_FILL_DB")
	if path == "" {
		t.Skip("set CARDCRAWL_FILL_DB (and CARDCRAWL_FILL_DOMAINS) to build a benchmark database")
	}
	n, err := strconv.Atoi(os.Getenv("CARDCRAWL_FILL_DOMAINS"))
	if err != nil || n < 1 {
		n = 50000
	}
	ctx := context.Background()
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := feedtest.Fill(ctx, db, feedtest.Options{Domains: n, RunID: 1}); err != nil {
		t.Fatal(err)
	}
}

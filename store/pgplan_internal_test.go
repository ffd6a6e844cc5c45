package store

import (
	"context"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestPostgresFeedPageFindsPairsByIndex: a page of the feed asks of each
// record's card whether it paired with a Registry entry; PostgreSQL answers
// from the pairs' own index (migration 0025), not by hashing every
// reconcile row once per page, which at 100,000 cards took 26 ms a page
// and three quarters of a JSONL export's server time.
func TestPostgresFeedPageFindsPairsByIndex(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewDB(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// What a recomputation leaves: a row per card, nearly all unpaired.
	for _, q := range []string{
		`INSERT INTO reconcile_results (kind, card_key, computed_at)
			SELECT 'card_only', 'https://d' || g || '.example/card.json', '2026-12-03T00:00:00Z' FROM generate_series(1, 100000) g`,
		`INSERT INTO reconcile_results (kind, card_key, computed_at)
			SELECT 'pair', 'https://p' || g || '.example/card.json', '2026-12-03T00:00:00Z' FROM generate_series(1, 20) g`,
		`ANALYZE`,
	} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.sql.QueryContext(ctx, `EXPLAIN SELECT `+feedColumns+` FROM `+feedFromOf(FeedFilter{})+`
		WHERE (f.kind, f.key) > (?, ?) AND f.removed_at IS NULL ORDER BY f.kind, f.key LIMIT ?`, 0, "", 500)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if p := plan.String(); !strings.Contains(p, "reconcile_results_pair") || strings.Contains(p, "Seq Scan on reconcile_results") {
		t.Errorf("the page's plan does not find pairs by their index:\n%s", p)
	}
}

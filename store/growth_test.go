package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestStatisticsFollowTheCrawl: on PostgreSQL the store refreshes the
// planner's statistics itself once it has saved 256 domains (and at each
// doubling after), so the plans it prepared on nearly empty tables do not
// outlive them until autovacuum's next turn. last_analyze records only an
// ANALYZE someone ran, not autovacuum's.
func TestStatisticsFollowTheCrawl(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t, pgtest.NewDB(t), nil)
	var names []string
	for i := range 256 {
		names = append(names, fmt.Sprintf("d%03d.example", i))
	}
	if _, err := db.AddDomains(ctx, names); err != nil {
		t.Fatal(err)
	}
	analyzed := func() bool {
		t.Helper()
		var yes bool
		if err := db.SQL().QueryRowContext(ctx,
			`SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'domains'`).Scan(&yes); err != nil {
			t.Fatal(err)
		}
		return yes
	}
	for i, d := range names {
		if i == len(names)-1 && analyzed() {
			t.Fatalf("statistics refreshed after %d saved domains, before the 256th", i)
		}
		if err := db.SaveDomain(ctx, store.DomainResult{Domain: d, Outcome: store.OutcomeNoCatalog, Class: "http_404",
			Definitive: true}); err != nil {
			t.Fatal(err)
		}
	}
	if !analyzed() {
		t.Error("no ANALYZE after 256 saved domains")
	}
}

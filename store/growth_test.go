package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestStatisticsFollowGrowth: on PostgreSQL the store refreshes the
// planner's statistics itself once it has written 256 rows (domains saved,
// Registry entries written) and at each doubling after, so the plans it
// prepared on nearly empty tables do not outlive them until autovacuum's
// next turn. last_analyze records only an ANALYZE someone ran, not
// autovacuum's.
func TestStatisticsFollowGrowth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		table string
		// write writes the i-th batch of rows; batches up to before write
		// fewer than 256 rows, the next reaches it.
		write  func(t *testing.T, db *store.DB, i int)
		before int
	}{
		{"domains", "domains", func(t *testing.T, db *store.DB, i int) {
			d := fmt.Sprintf("d%03d.example", i)
			if _, err := db.AddDomains(context.Background(), []string{d}); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveDomain(context.Background(), store.DomainResult{Domain: d, Outcome: store.OutcomeNoCatalog,
				Class: "http_404", Definitive: true}); err != nil {
				t.Fatal(err)
			}
		}, 255},
		{"registry pages", "registry_entries", func(t *testing.T, db *store.DB, i int) {
			w := store.RegistryWrite{Source: "https://registry.example"}
			for j := range 100 {
				w.Entries = append(w.Entries, store.RegistryEntry{Name: fmt.Sprintf("com.example/s%d-%d", i, j),
					Version: "1.0.0", Status: "active", ServerJSON: "{}"})
			}
			if err := db.WriteRegistry(context.Background(), w); err != nil {
				t.Fatal(err)
			}
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, pgtest.NewDB(t), nil)
			analyzed := func() bool {
				t.Helper()
				var yes bool
				if err := db.SQL().QueryRowContext(context.Background(),
					`SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1`, tc.table).Scan(&yes); err != nil {
					t.Fatal(err)
				}
				return yes
			}
			for i := range tc.before {
				tc.write(t, db, i)
			}
			if analyzed() {
				t.Fatalf("%s analyzed before 256 rows were written", tc.table)
			}
			tc.write(t, db, tc.before)
			if !analyzed() {
				t.Errorf("%s not analyzed once 256 rows were written", tc.table)
			}
		})
	}
}

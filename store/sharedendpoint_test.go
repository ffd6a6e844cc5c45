package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
	"github.com/cardcrawl/cardcrawl/store"
)

// BenchmarkSaveDomainSharedEndpoint saves domains that list one endpoint
// already listed by `listed` others, each with a card of its own (cards,
// or non-conformant-cards, where no card is the best at once) or all with
// one card hosted elsewhere (card). One op is one domain's
// save; its cost should not grow with listed (it did, with the square of
// it over a crawl: 8,000 domains listing one endpoint took 46 s to save).
func BenchmarkSaveDomainSharedEndpoint(b *testing.B) {
	for _, v := range []struct {
		name   string
		shared bool
		grade  string
	}{{"cards", false, ""}, {"card", true, ""}, {"non-conformant-cards", false, "non_conformant"}} {
		shared := v.shared
		for _, listed := range []int{1000, 4000} {
			name := fmt.Sprintf("%s/listed=%d", v.name, listed)
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				db, err := store.Open(ctx, filepath.Join(b.TempDir(), "s.db"), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				save := func(i int) {
					key := "https://" + feedtest.Domain(i) + "/card.json"
					if shared {
						key = "https://cards.example/shared.json"
					}
					if err := feedtest.Save(ctx, db, 1, feedtest.Domain(i), feedtest.Card{Key: key, Grade: v.grade,
						Name: "com.example/shared", Remotes: []string{"https://mcp.shared.example/mcp"}}); err != nil {
						b.Fatal(err)
					}
				}
				for i := range listed {
					save(i)
				}
				b.ResetTimer()
				for i := range b.N {
					save(listed + i)
				}
			})
		}
	}
}

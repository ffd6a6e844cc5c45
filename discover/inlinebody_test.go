package discover_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/revalidate"
)

// TestInlineBodiesKept: the data of inline cards and catalogs is kept by its
// hash as a fetched body is, so crawl --revalidate re-judges them from the
// store, to the same findings the crawl gave them.
func TestInlineBodiesKept(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, []byte(`
-- inlinenest.example/.well-known/ai-catalog.json --
{"specVersion":"1.0","entries":[{"identifier":"urn:air:inlinenest.example:team","type":"application/ai-catalog+json","data":{"specVersion":"1.0","entries":[{"identifier":"urn:air:inlinenest.example:mcp:k","type":"application/mcp-server-card+json","data":{"name":"com.example/k","version":"1.0.0","description":"K","remotes":[{"type":"streamable-http","url":"https://k.example/mcp"}]}}]}}]}
`))
	w.crawl(ctx, w.options(), "inline.example", "inlinenest.example")

	judged := func(table, key string) map[string]string {
		t.Helper()
		return w.pairs(`SELECT ` + key + `, findings FROM ` + table)
	}
	cards, catalogs := judged("cards", "key"), judged("catalogs", "url")
	var missing int
	if err := w.store.SQL().QueryRow(`SELECT
		(SELECT COUNT(*) FROM cards c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.sha256 = c.sha256)) +
		(SELECT COUNT(*) FROM catalogs c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.sha256 = c.sha256))`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d cards and catalogs without a stored body", missing)
	}

	if _, err := w.store.SQL().Exec(`UPDATE cards SET judged_by = 'servercard/0'`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.SQL().Exec(`UPDATE catalogs SET judged_by = 'catalog/0'`); err != nil {
		t.Fatal(err)
	}
	sum, err := revalidate.Crawled(ctx, w.store, w.v)
	if err != nil {
		t.Fatal(err)
	}
	// Two inline cards; two root catalogs and the inline one nested in one.
	if diff := cmp.Diff(revalidate.Summary{Cards: 2, Catalogs: 3}, sum); diff != "" {
		t.Errorf("re-judged (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cards, judged("cards", "key")); diff != "" {
		t.Errorf("card findings re-judged from the store (-crawl +re-judged):\n%s", diff)
	}
	if diff := cmp.Diff(catalogs, judged("catalogs", "url")); diff != "" {
		t.Errorf("catalog findings re-judged from the store (-crawl +re-judged):\n%s", diff)
	}
}

package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/feed/feedtest"
)

// TestAICatalogRepeatedIdentifier: through a real store, a card whose
// publisher identifier and version an earlier card already has gets an
// identifier minted under the operator's domain, or is left out without
// one; another version of the same identifier keeps it.
func TestAICatalogRepeatedIdentifier(t *testing.T) {
	ctx := context.Background()
	db, _ := filledStore(t, 0)
	for _, c := range []struct{ domain, version string }{{"a.example", "1.0.0"}, {"b.example", "1.0.0"}, {"c.example", "2.0.0"}} {
		if err := feedtest.Save(ctx, db, 1, c.domain, feedtest.Card{Key: "https://" + c.domain + "/card",
			Name: "com.example/x", Version: c.version, Identifier: "urn:air:pub.example:mcp:x",
			Remotes: []string{"https://mcp." + c.domain + "/mcp"}}); err != nil {
			t.Fatal(err)
		}
	}
	catalog := func(domain string) ([]string, int) {
		t.Helper()
		var buf bytes.Buffer
		skipped := 0
		if err := feed.Write(ctx, &buf, "ai-catalog", db, feed.WriteOptions{
			Catalog: feed.CatalogOptions{PublisherDomain: domain}, Skipped: &skipped}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Entries []struct{ Identifier, Version, URL string }
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range doc.Entries {
			out = append(out, e.Identifier+" "+e.Version+" "+e.URL)
		}
		return out, skipped
	}
	want := []string{
		"urn:air:pub.example:mcp:x 1.0.0 https://a.example/card",
		feed.MintIdentifier("directory.example", "https://b.example/card") + " 1.0.0 https://b.example/card",
		"urn:air:pub.example:mcp:x 2.0.0 https://c.example/card",
	}
	got, skipped := catalog("directory.example")
	if diff := cmp.Diff(want, got); diff != "" || skipped != 0 {
		t.Errorf("with a publisher domain, skipped %d, entries (-want +got):\n%s", skipped, diff)
	}
	got, skipped = catalog("")
	if diff := cmp.Diff([]string{want[0], want[2]}, got); diff != "" || skipped != 1 {
		t.Errorf("without one, skipped %d, entries (-want +got):\n%s", skipped, diff)
	}
}

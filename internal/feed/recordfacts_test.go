package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestJSONLReadsWhatRecordsPrint: the JSONL writer reads only the parts of
// a record it prints (the full feed and the delta), and prints what a read
// of every part gives, facts from the Registry, the reconciliation and the
// namespace check included.
func TestJSONLReadsWhatRecordsPrint(t *testing.T) {
	ctx := context.Background()
	db, _ := filledStore(t, 12)
	withRegistryOnly(t, db)
	var first store.FeedServer
	if err := db.EachFeedServer(ctx, store.FeedQuery{Limit: 1}, func(s *store.FeedServer) error {
		first = *s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	entry := store.RegistryEntry{Source: testRegistry, Name: "example.c/declared", Version: "1.0.0", Status: "active",
		ReportedLatest: true, ServerJSON: `{"name":"example.c/declared","version":"1.0.0","description":"d"}`}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: testRegistry, Entries: []store.RegistryEntry{entry}}); err != nil {
		t.Fatal(err)
	}
	doc := store.RegistryEntryDoc{Source: testRegistry, Name: entry.Name, Version: entry.Version, ChangedAt: "2026-10-01T00:00:00Z"}
	if err := db.ReplaceRegistryRemotes(ctx, doc, "sha", []store.RegistryRemote{{URLNorm: first.EndpointNorm,
		URL: first.Endpoint, Type: "streamable-http"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceReconcile(ctx, []store.ReconcileRow{{Kind: "pair", CardKey: first.CardKey, CardName: first.Name,
		Source: testRegistry, Name: entry.Name, Version: "1.0.0", Basis: "remote_url", Detail: first.EndpointNorm,
		Diffs: `[{"field":"name"}]`}}); err != nil {
		t.Fatal(err)
	}
	ns, _, _ := strings.Cut(first.Name, "/")
	if err := db.SaveNamespaces(ctx, []store.NamespaceRow{{Namespace: ns, Kind: "domain", Domain: "example.com",
		Method: "http", Result: `{"http": "key ed25519"}`, CheckedAt: "2026-10-03T00:00:00Z"}}); err != nil {
		t.Fatal(err)
	}
	for _, since := range []string{"", "0"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		err := db.EachFeedServer(ctx, store.FeedQuery{Since: since, FeedFilter: store.FeedFilter{Source: store.FeedSourceAll}},
			func(s *store.FeedServer) error {
				if s.Removed() {
					return enc.Encode(feed.NewTombstone(s))
				}
				r := feed.NewRecord(s)
				if since != "" {
					r.UpdatedAt = s.UpdatedAt
				}
				return enc.Encode(r)
			})
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{`"registry":{`, `"reconcile":{`, `"namespace":{`} {
			if !strings.Contains(want.String(), part) {
				t.Fatalf("since %q: no record with %s", since, part)
			}
		}
		var got bytes.Buffer
		if err := feed.Write(ctx, &got, "jsonl", db, feed.WriteOptions{Since: since,
			Filter: store.FeedFilter{Source: store.FeedSourceAll}}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("since %q (-every part +jsonl):\n%s", since, diff)
		}
	}
}

package revalidate_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/revalidate"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func codes(l finding.List) []string {
	out := []string{}
	for _, f := range l {
		out = append(out, f.Code)
	}
	return out
}

// TestCrawledRejudgesFromStoredBodies: a card judged by older rules gets
// the current validator's findings and grade from its stored body, keeps
// the crawl's own findings, and is not judged again; an inline card
// stored without its body (as builds before inline data was kept did) is
// counted and left.
func TestCrawledRejudgesFromStoredBodies(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	body := []byte(`{"name":"com.example/x","version":"1.0.0","description":"d",` +
		`"remotes":[{"type":"streamable-http","url":"https://mcp.example/mcp"}]}`) // no $schema
	const key = "https://a.example/card"
	if err := db.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "card", URL: key, FetchedAt: time.Now(),
		Status: 200, SHA256: "sha-x"}, Body: body}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	old := finding.List{{Severity: finding.Error, Code: "retired_rule", Message: "m"},
		{Severity: finding.Warning, Code: discover.CodeRemotesTruncated, Message: "kept"}}
	if err := db.SaveDomain(ctx, store.DomainResult{Domain: "a.example", Outcome: store.OutcomeCatalog, Definitive: true,
		Cards: []store.CardRecord{
			{Key: key, SHA256: "sha-x", Grade: "non_conformant", Findings: old, JSON: []byte(`{}`), JudgedBy: "servercard/0"},
			{Key: key + "#inline", Inline: true, SHA256: "sha-inline", Grade: "conformant", JSON: []byte(`{}`), JudgedBy: "servercard/0"},
		}}); err != nil {
		t.Fatal(err)
	}
	v, err := servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := revalidate.Crawled(ctx, db, v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(revalidate.Summary{Cards: 1, NoBody: 1}, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	want := v.Check(body)
	var got store.Judged
	if err := db.EachStaleCard(ctx, "none", func(j store.Judged) error {
		if j.Key == key {
			got = j
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(codes(want.Findings), discover.CodeRemotesTruncated), codes(got.Findings)); diff != "" {
		t.Errorf("findings after re-judging (-want +got):\n%s", diff)
	}
	if got.JudgedBy != servercard.RulesVersion {
		t.Errorf("judged by %q, want %q", got.JudgedBy, servercard.RulesVersion)
	}
	if sum, err = revalidate.Crawled(ctx, db, v); err != nil || sum.Cards != 0 {
		t.Errorf("second pass re-judged %+v (%v), want no card", sum, err)
	}
}

// TestRegistryRevalidatesUnchangedEntries: an entry an older validator
// judged gets the current validator's findings; the parser's stay.
func TestRegistryRevalidatesUnchangedEntries(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	server := `{"name":"com.example/a","version":"1.0.0","description":"d"}` // no $schema
	old := finding.List{{Severity: finding.Warning, Code: registry.CodeMetaNotObject, Message: "kept"},
		{Severity: finding.Error, Code: "retired_rule", Message: "m"}}
	if err := db.WriteRegistry(ctx, store.RegistryWrite{Source: "r", Entries: []store.RegistryEntry{
		{Name: "com.example/a", Version: "1.0.0", ServerJSON: server, Findings: old, JudgedBy: "registry/0"}}}); err != nil {
		t.Fatal(err)
	}
	v, err := registry.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	n, err := revalidate.Registry(ctx, db, v)
	if err != nil || n != 1 {
		t.Fatalf("re-validated %d, %v; want 1", n, err)
	}
	es, err := db.RegistryEntries(ctx, store.RegistryFilter{})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %v, %v", es, err)
	}
	want := append([]string{registry.CodeMetaNotObject}, codes(v.Validate([]byte(server)))...)
	if diff := cmp.Diff(want, codes(es[0].Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if n, err = revalidate.Registry(ctx, db, v); err != nil || n != 0 {
		t.Errorf("second pass re-validated %d (%v), want 0", n, err)
	}
}

// TestCrawledMovesTheFeed: what the feed shows follows a re-judgement in
// the same step: the record of a card judged again shows its new grade
// and findings, and a listing of a catalog judged again carries what the
// new rules found of its entry (here a weak digest the old rules did not
// know), each record's updatedAt moving; judging again changes nothing.
func TestCrawledMovesTheFeed(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	const (
		root     = "https://a.example/.well-known/ai-catalog.json"
		cardKey  = "https://a.example/card"
		endpoint = "https://mcp.example/mcp"
	)
	cardBody := []byte(`{"name":"com.example/x","version":"1.0.0","description":"d",` +
		`"remotes":[{"type":"streamable-http","url":"` + endpoint + `"}]}`)
	catBody := []byte(`{"specVersion":"1.0","entries":[{"identifier":"urn:x:a","type":"application/mcp-server-card+json",` +
		`"url":"https://a.example/card","digest":"md5:0123456789abcdef0123456789abcdef"}]}`)
	for _, o := range []store.Fetched{
		{Observation: store.Observation{Domain: "a.example", Kind: "catalog", URL: root, FetchedAt: time.Now(), Status: 200,
			SHA256: "sha-cat"}, Body: catBody},
		{Observation: store.Observation{Domain: "a.example", Kind: "card", URL: cardKey, FetchedAt: time.Now(), Status: 200,
			SHA256: "sha-card"}, Body: cardBody},
	} {
		if err := db.AddObservations(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Enqueue(ctx, []string{"a.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveDomain(ctx, store.DomainResult{Domain: "a.example", Outcome: store.OutcomeCatalog, Definitive: true,
		CatalogURL: root,
		Catalogs:   []store.CatalogRecord{{URL: root, BaseURL: root, SHA256: "sha-cat", Findings: finding.List{}, JudgedBy: "catalog/0"}},
		Cards: []store.CardRecord{{Key: cardKey, SourceURL: cardKey, SHA256: "sha-card", Name: "com.example/x",
			Version: "1.0.0", Grade: "non_conformant", Findings: finding.List{{Severity: finding.Error, Code: "retired_rule",
				Message: "m"}}, JSON: cardBody, JudgedBy: "servercard/0"}},
		Remotes: []store.RemoteRecord{{URLNorm: endpoint, URL: endpoint, Type: "streamable-http", CardKey: cardKey,
			JSON: []byte(`{"type":"streamable-http","url":"` + endpoint + `"}`)}},
		Entries: []store.EntryRecord{{CatalogURL: root, Identifier: "urn:x:a", Type: "application/mcp-server-card+json",
			URL: cardKey, ResolvedURL: cardKey, Raw: []byte(`{}`)}},
		Listings: []store.ListingRecord{{CatalogURL: root, Identifier: "urn:x:a", CardKey: cardKey, RemoteNorm: endpoint}},
	}); err != nil {
		t.Fatal(err)
	}
	type shown struct {
		Grade, UpdatedAt string
		Findings         []string
		Listing          [][]string
	}
	read := func() shown {
		t.Helper()
		var s shown
		if err := db.EachFeedServer(ctx, store.FeedQuery{}, func(r *store.FeedServer) error {
			s = shown{Grade: r.Grade, UpdatedAt: r.UpdatedAt, Findings: r.Findings}
			for _, l := range r.Listings {
				s.Listing = append(s.Listing, l.Codes)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := read()
	if before.Grade != "non_conformant" || before.Listing[0] != nil {
		t.Fatalf("before: %+v", before)
	}
	v, err := servercard.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := revalidate.Crawled(ctx, db, v); err != nil {
		t.Fatal(err)
	}
	judged := v.Check(cardBody)
	after := read()
	want := shown{Grade: string(judged.Grade), UpdatedAt: after.UpdatedAt, Findings: codes(judged.Findings),
		Listing: [][]string{{"entry_digest_weak"}}}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("the record after re-judging (-want +got):\n%s", diff)
	}
	if after.UpdatedAt == before.UpdatedAt {
		t.Errorf("updatedAt stayed %s", after.UpdatedAt)
	}
	if _, err := revalidate.Crawled(ctx, db, v); err != nil {
		t.Fatal(err)
	}
	if again := read(); again.UpdatedAt != after.UpdatedAt {
		t.Errorf("judged again: updatedAt %s -> %s", after.UpdatedAt, again.UpdatedAt)
	}
}

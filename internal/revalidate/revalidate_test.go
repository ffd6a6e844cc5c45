package revalidate_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/catalog"
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

// TestListingsNamedFromStoredCatalog: listings stored before they named
// their catalog's entry (migration 0026: no entry, no codes) are given,
// from the catalog's stored document and findings, exactly what a crawl
// writes today; the feed's records show the codes, their updatedAt moving.
// A listing whose entry cannot be told apart gets the catalog's own
// signature codes and stays unnamed; a catalog with no stored document is
// counted; an inactive listing is left; naming again changes nothing.
func TestListingsNamedFromStoredCatalog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "l.db")
	db, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const root = "https://a.example/.well-known/ai-catalog.json"
	catBody := []byte(`{"specVersion":"1.0","entries":[
		{"identifier":"urn:x:a","type":"application/mcp-server-card+json","url":"/card-a"},
		{"identifier":"urn:x:b","type":"application/mcp-server-card+json","data":{"name":"com.example/b"}},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/d1","version":"1"},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/d2","version":"2"}]}`)
	at := func(code, path string) finding.Finding {
		return finding.Finding{Severity: finding.Warning, Code: code, Path: path, Message: code}
	}
	catFindings := finding.List{at("signature_unverifiable", "/signature"), at("entry_digest_weak", "/entries/0/digest"),
		at("entry_digest_mismatch", "/entries/1/digest"), at("card_name_invalid", "/entries/1/data/name"),
		at("entry_digest_weak", "/entries/3/digest")}
	// What a crawl writes: each listing names its entry, with the codes
	// of that entry (ListingCodes).
	listing := func(identifier, card, endpoint string, entry int) store.ListingRecord {
		return store.ListingRecord{CatalogURL: root, Identifier: identifier, CardKey: card, RemoteNorm: endpoint,
			Entry: entry, Codes: discover.ListingCodes(catFindings, entry)}
	}
	cards := []struct{ identifier, key, endpoint string }{
		{"urn:x:a", "https://a.example/card-a", "https://mcp.example/a"},
		{"urn:x:b", root + "#/entries/1/data", "https://mcp.example/b"},
		{"urn:x:dup", "https://c.example/moved", "https://mcp.example/dup"}, // neither /d1 nor /d2
		{"urn:x:gone", "https://a.example/old", "https://mcp.example/old"},
	}
	res := store.DomainResult{Domain: "a.example", Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: root,
		Catalogs: []store.CatalogRecord{{URL: root, BaseURL: root, SHA256: "sha-cat", Findings: catFindings,
			JudgedBy: catalog.RulesVersion}}}
	entries := []int{0, 1, -1, -1}
	for i, c := range cards {
		res.Cards = append(res.Cards, store.CardRecord{Key: c.key, SourceURL: c.key, SHA256: "sha-" + c.identifier,
			Name: "com.example/" + c.identifier, Version: "1.0.0", Grade: "conformant", Findings: finding.List{},
			JSON: []byte(`{}`), JudgedBy: servercard.RulesVersion})
		res.Remotes = append(res.Remotes, store.RemoteRecord{URLNorm: c.endpoint, URL: c.endpoint, Type: "streamable-http",
			CardKey: c.key, JSON: []byte(`{"type":"streamable-http","url":"` + c.endpoint + `"}`)})
		res.Listings = append(res.Listings, listing(c.identifier, c.key, c.endpoint, entries[i]))
	}
	if err := db.AddObservations(ctx, store.Fetched{Observation: store.Observation{Domain: "a.example", Kind: "catalog",
		URL: root, FetchedAt: time.Now(), Status: 200, SHA256: "sha-cat"}, Body: catBody}); err != nil {
		t.Fatal(err)
	}
	// b.example's catalog has no stored document.
	const rootB = "https://b.example/.well-known/ai-catalog.json"
	resB := store.DomainResult{Domain: "b.example", Outcome: store.OutcomeCatalog, Definitive: true, CatalogURL: rootB,
		Catalogs: []store.CatalogRecord{{URL: rootB, BaseURL: rootB, SHA256: "sha-nobody", Findings: catFindings,
			JudgedBy: catalog.RulesVersion}},
		Listings: []store.ListingRecord{{CatalogURL: rootB, Identifier: "urn:x:a", CardKey: cards[0].key,
			RemoteNorm: cards[0].endpoint, Entry: 0, Codes: discover.ListingCodes(catFindings, 0)}}}
	if _, err := db.Enqueue(ctx, []string{"a.example", "b.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.DomainResult{res, resB} {
		if err := db.SaveDomain(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	type shown struct {
		Entry     sql.NullInt64
		Codes     string
		UpdatedAt string
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	read := func() map[string]shown {
		t.Helper()
		out := map[string]shown{}
		rows, err := raw.QueryContext(ctx, `SELECT domain || ' ' || card_key || CASE WHEN active THEN '' ELSE ' (inactive)' END,
			entry_index, entry_codes FROM listings`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var s shown
			if err := rows.Scan(&k, &s.Entry, &s.Codes); err != nil {
				t.Fatal(err)
			}
			out[k] = s
		}
		if err := db.EachFeedServer(ctx, store.FeedQuery{}, func(r *store.FeedServer) error {
			for _, l := range r.Listings {
				k := l.Domain + " " + l.CardKey
				s := out[k]
				if got := strings.Join(l.Codes, " "); got != s.Codes {
					t.Errorf("%s: the feed's listedBy codes %q, the listing's %q", k, got, s.Codes)
				}
				s.UpdatedAt = r.UpdatedAt
				out[k] = s
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	crawled := read()
	// Listings as a build before migration 0026 left them; one more, of a
	// card no longer listed, inactive.
	if _, err := raw.ExecContext(ctx, `UPDATE listings SET entry_index = NULL, entry_codes = ''`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE listings SET active = FALSE WHERE card_key = ?`, cards[3].key); err != nil {
		t.Fatal(err)
	}
	// The records as such a build's crawl wrote them (no codes): the
	// migration that added the codes moved no record.
	if _, err := raw.ExecContext(ctx, `UPDATE feed_servers SET updated_at = '2026-01-01T00:00:00.000000000Z'`); err != nil {
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
	if diff := cmp.Diff(revalidate.Summary{Listings: 2, NoBody: 1}, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	named := read()
	signature := discover.ListingCodes(catFindings, -1)
	if signature == "" {
		t.Fatal("the catalog's own findings give no codes: the test shows nothing")
	}
	want := map[string]shown{
		"a.example " + cards[0].key:                 {Entry: crawled["a.example "+cards[0].key].Entry, Codes: crawled["a.example "+cards[0].key].Codes},
		"a.example " + cards[1].key:                 {Entry: crawled["a.example "+cards[1].key].Entry, Codes: crawled["a.example "+cards[1].key].Codes},
		"a.example " + cards[2].key:                 {Codes: signature}, // cannot be told apart: unnamed
		"a.example " + cards[3].key + " (inactive)": {},                 // left
		"b.example " + cards[0].key:                 {},                 // no document
	}
	for k, s := range named {
		// b.example's listing shares card-a's record with a.example's.
		if s.UpdatedAt != "" && !strings.HasPrefix(k, "b.example") && strings.HasPrefix(s.UpdatedAt, "2026-01-01") == (want[k].Codes != "") {
			t.Errorf("%s: record updatedAt %s after its codes went from none to %q", k, s.UpdatedAt, want[k].Codes)
		}
		s.UpdatedAt = ""
		named[k] = s
	}
	if diff := cmp.Diff(want, named); diff != "" {
		t.Errorf("listings after naming (-want +got):\n%s", diff)
	}
	if !named["a.example "+cards[0].key].Entry.Valid || named["a.example "+cards[1].key].Codes == "" {
		t.Fatalf("the crawl's own listings: %+v", crawled)
	}
	again, err := revalidate.Crawled(ctx, db, v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(revalidate.Summary{NoBody: 1}, again); diff != "" {
		t.Errorf("named again: summary (-want +got):\n%s", diff)
	}
	after := read()
	for k, s := range after {
		if b := named[k]; s.Entry != b.Entry || s.Codes != b.Codes {
			t.Errorf("%s: named again %+v -> %+v", k, b, s)
		}
	}
}

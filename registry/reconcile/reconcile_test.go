package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

func remote(u string) []servercard.Remote {
	return []servercard.Remote{{Type: "streamable-http", URL: u}}
}

func TestMatch(t *testing.T) {
	cards := []reconcile.Card{
		{Key: "https://example.com/card-url", Domains: []string{"example.com"}, Card: servercard.Card{
			Name: "com.example/weather", Title: "Weather", Version: "1.0.0", Description: "Forecasts",
			Remotes: remote("HTTPS://API.Example.com:443/mcp/")}},
		{Key: "https://example.org/card-template", Domains: []string{"example.org"}, Card: servercard.Card{
			Name: "claimed/by-card", Version: "2.0.0",
			Remotes: remote("https://{tenant}.example.org/mcp")}},
		{Key: "https://example.net/card-name", Domains: []string{"example.net"}, Card: servercard.Card{
			Name: "net.example/tools", Version: "1.0.0", Remotes: remote("https://tools.example.net/mcp")}},
		{Key: "https://shop.example.info/card-ns", Domains: []string{"shop.example.info"}, Card: servercard.Card{
			Name: "unrelated/name", Version: "3.0.0"}},
		{Key: "https://example.biz/card-exact-ns", Domains: []string{"Example.biz"}, Card: servercard.Card{Name: "x/y"}},
		{Key: "https://lonely.example/card-only", Domains: []string{"lonely.example"}, Card: servercard.Card{
			Name: "example.lonely/solo", Remotes: remote("https://lonely.example/mcp")}},
	}
	const src = "https://registry.example"
	entries := []reconcile.Entry{
		{Source: src, Name: "com.example/weather", Version: "1.1.0", Status: "active", Server: servercard.Card{
			Name: "com.example/weather", Title: "Weather API", Version: "1.1.0", Description: "Forecasts",
			Remotes: remote("https://api.example.com/mcp")}},
		{Source: src, Name: "org.example/tenant", Version: "2.0.0", Status: "active", Server: servercard.Card{
			Name: "org.example/tenant", Version: "2.0.0",
			Remotes: []servercard.Remote{{Type: "streamable-http", URL: "https://{tenant}.example.org/mcp"}}}},
		{Source: src, Name: "net.example/tools", Version: "1.0.0", Status: "deprecated", Server: servercard.Card{
			Name: "net.example/tools", Version: "1.0.0", Remotes: remote("https://other.example.net/mcp")}},
		{Source: src, Name: "info.example/shop", Version: "3.0.0", Server: servercard.Card{Name: "info.example/shop", Version: "3.0.0"}},
		{Source: src, Name: "biz.example/y", Version: "", Server: servercard.Card{Name: "biz.example/y"}},
		{Source: src, Name: "io.github.someone/registry-only", Version: "0.1.0", Status: "deleted"},
	}
	want := reconcile.Result{
		Pairs: []reconcile.Pair{
			{CardKey: "https://example.biz/card-exact-ns", CardName: "x/y", Source: src, Name: "biz.example/y",
				Basis: reconcile.BasisNamespace, Detail: "example.biz",
				Diffs: []reconcile.Diff{{Field: "name", Card: "x/y", Registry: "biz.example/y"}}},
			{CardKey: "https://example.com/card-url", CardName: "com.example/weather", Source: src, Name: "com.example/weather",
				Version: "1.1.0", Status: "active", Basis: reconcile.BasisRemoteURL, Detail: "https://api.example.com/mcp",
				Diffs: []reconcile.Diff{
					{Field: "version", Card: "1.0.0", Registry: "1.1.0"},
					{Field: "title", Card: "Weather", Registry: "Weather API"},
				}},
			{CardKey: "https://example.net/card-name", CardName: "net.example/tools", Source: src, Name: "net.example/tools",
				Version: "1.0.0", Status: "deprecated", Basis: reconcile.BasisName, Detail: "net.example/tools",
				Diffs: []reconcile.Diff{
					{Field: "remotes[https://tools.example.net/mcp]", Card: `{"type":"streamable-http","url":"https://tools.example.net/mcp"}`},
					{Field: "remotes[https://other.example.net/mcp]", Registry: `{"type":"streamable-http","url":"https://other.example.net/mcp"}`},
				}},
			{CardKey: "https://example.org/card-template", CardName: "claimed/by-card", Source: src, Name: "org.example/tenant",
				Version: "2.0.0", Status: "active", Basis: reconcile.BasisRemoteURL, Detail: "https://{}.example.org/mcp",
				Diffs: []reconcile.Diff{{Field: "name", Card: "claimed/by-card", Registry: "org.example/tenant"}}},
			{CardKey: "https://shop.example.info/card-ns", CardName: "unrelated/name", Source: src, Name: "info.example/shop",
				Version: "3.0.0", Basis: reconcile.BasisNamespace,
				Detail: "shop.example.info (listing domain shop.example.info is a subdomain of namespace example.info)",
				Diffs:  []reconcile.Diff{{Field: "name", Card: "unrelated/name", Registry: "info.example/shop"}}},
		},
		CardOnly: []reconcile.CardOnly{{CardKey: "https://lonely.example/card-only", CardName: "example.lonely/solo", Domains: []string{"lonely.example"}}},
		RegistryOnly: []reconcile.RegistryOnly{
			{Source: src, Name: "io.github.someone/registry-only", Version: "0.1.0", Status: "deleted"},
		},
	}
	got := reconcile.Match(cards, entries)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Match (-want +got):\n%s", diff)
	}
}

func TestURLKeyAndNamespaceDomain(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"HTTPS://Example.COM:443/mcp/", "https://example.com/mcp"},
		{"https://example.com:8443/mcp", "https://example.com:8443/mcp"},
		{"https://{a}.example.com/{b}/mcp", "https://{}.example.com/{}/mcp"},
	} {
		if got, ok := reconcile.URLKey(tt.in); !ok || got != tt.want {
			t.Errorf("URLKey(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := reconcile.URLKey("ftp://example.com/x"); ok {
		t.Error("URLKey accepted ftp")
	}
	for _, tt := range []struct{ in, want string }{
		{"com.example.mcp/x", "mcp.example.com"},
		{"io.github.Someone/x", "someone.github.io"},
		{"nodots/x", ""},
		{"noslash", ""},
		{"com.example@evil/x", ""}, // not hostname labels: no domain at all
		{"com.example:8443/x", ""},
	} {
		if got := reconcile.NamespaceDomain(tt.in); got != tt.want {
			t.Errorf("NamespaceDomain(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func openStore(t testing.TB) *store.DB {
	t.Helper()
	now := func() time.Time { return time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC) }
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"), store.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// addCards writes cards and listings the way the crawl stores them.
func addCards(t testing.TB, db *store.DB, cards []reconcile.Card) {
	t.Helper()
	tx, err := db.SQL().Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cards {
		b, err := json.Marshal(c.Card)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO cards (key, sha256, name, grade, json, first_seen, last_seen, changed_at)
			VALUES (?, 'x', ?, 'conformant', ?, 'now', 'now', 'now')`, c.Key, c.Card.Name, string(b)); err != nil {
			t.Fatal(err)
		}
		for _, d := range c.Domains {
			if _, err := tx.Exec(`INSERT INTO domains (domain, added_at, state) VALUES (?, 'now', 'done')
				ON CONFLICT (domain) DO NOTHING`, d); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(`INSERT INTO listings (domain, catalog_url, identifier, card_key, remote_norm, first_seen, last_seen)
				VALUES (?, ?, 'id', ?, '', 'now', 'now')`, d, "https://"+d+"/.well-known/ai-catalog.json", c.Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func addEntries(t testing.TB, db *store.DB, source string, servers []string, latest func(i int) bool) {
	t.Helper()
	rows := make([]store.RegistryEntry, len(servers))
	for i, s := range servers {
		var key struct{ Name, Version string }
		if err := json.Unmarshal([]byte(s), &key); err != nil {
			t.Fatal(err)
		}
		rows[i] = store.RegistryEntry{Name: key.Name, Version: key.Version, Status: "active", ReportedLatest: latest(i), ServerJSON: s}
	}
	if err := db.WriteRegistry(context.Background(), store.RegistryWrite{Source: source, Entries: rows}); err != nil {
		t.Fatal(err)
	}
}

func TestRunThroughStore(t *testing.T) {
	db := openStore(t)
	addCards(t, db, []reconcile.Card{
		{Key: "https://example.com/a", Domains: []string{"example.com"}, Card: servercard.Card{Name: "com.example/a", Version: "1.0.0", Remotes: remote("https://example.com/mcp")}},
		{Key: "https://example.com/b", Domains: []string{"b.example"}, Card: servercard.Card{Name: "zz/b"}},
	})
	addEntries(t, db, "https://registry.example", []string{
		`{"name":"com.example/a","version":"0.9.0","remotes":[{"type":"streamable-http","url":"https://example.com/mcp/"}]}`,
		`{"name":"com.example/a","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://example.com/mcp/"}]}`,
		`{"name":"org.example/c","version":"1.0.0"}`,
	}, func(i int) bool { return i != 0 })
	counts, err := reconcile.Run(context.Background(), db, reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reconcile.Counts{Pairs: 1, CardOnly: 1, RegistryOnly: 1}, counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	res, err := reconcile.Compute(context.Background(), db, reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Only latest versions take part: 0.9.0 is not a second pair.
	if len(res.Pairs) != 1 || res.Pairs[0].Version != "1.0.0" || len(res.Pairs[0].Diffs) != 0 {
		t.Errorf("pairs = %+v", res.Pairs)
	}
	loaded, err := reconcile.Load(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, loaded); diff != "" {
		t.Errorf("stored result differs (-computed +loaded):\n%s", diff)
	}
	// Recomputing replaces, never accumulates.
	if _, err := reconcile.Run(context.Background(), db, reconcile.Options{}); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.ReconcileResults(context.Background())
	if len(rows) != 3 {
		t.Errorf("%d stored rows after a second run, want 3", len(rows))
	}
}

// TestRunStreamsLikeMatch: Run reads cards a page at a time and writes
// results in batches; what it stores is what Match computes in memory.
func TestRunStreamsLikeMatch(t *testing.T) {
	db := openStore(t)
	const src = "https://registry.example"
	var cards []reconcile.Card
	var servers []string
	var entries []reconcile.Entry
	for i := range 700 {
		host := fmt.Sprintf("h%03d.example.com", i)
		c := reconcile.Card{Key: "https://" + host + "/card", Domains: []string{host},
			Card: servercard.Card{Name: fmt.Sprintf("com.example.h%03d/s", i), Version: "1.0.0", Remotes: remote("https://" + host + "/mcp")}}
		cards = append(cards, c)
		if i%3 == 0 {
			s := fmt.Sprintf(`{"name":"com.example.h%03d/s","version":"2.0.0","remotes":[{"type":"streamable-http","url":"https://%s/mcp"}]}`, i, host)
			servers = append(servers, s)
			var e reconcile.Entry
			if err := json.Unmarshal([]byte(s), &e.Server); err != nil {
				t.Fatal(err)
			}
			e.Source, e.Name, e.Version, e.Status = src, e.Server.Name, e.Server.Version, "active"
			entries = append(entries, e)
		}
	}
	for i := range 5 {
		s := fmt.Sprintf(`{"name":"org.example/only%d","version":"1.0.0"}`, i)
		servers = append(servers, s)
		entries = append(entries, reconcile.Entry{Source: src, Name: fmt.Sprintf("org.example/only%d", i), Version: "1.0.0",
			Status: "active", Server: servercard.Card{Name: fmt.Sprintf("org.example/only%d", i), Version: "1.0.0"}})
	}
	addCards(t, db, cards)
	addEntries(t, db, src, servers, func(int) bool { return true })
	if _, err := reconcile.Run(context.Background(), db, reconcile.Options{}); err != nil {
		t.Fatal(err)
	}
	loaded, err := reconcile.Load(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reconcile.Match(cards, entries), loaded); diff != "" {
		t.Errorf("stored result differs from Match (-match +stored):\n%s", diff)
	}
}

// BenchmarkReconcile20000 reconciles 20,000 stored cards with 20,000
// stored Registry entries (half match by URL, a quarter by name), reading
// from and writing to SQLite.
func BenchmarkReconcile20000(b *testing.B) {
	const n = 20000
	db := openStore(b)
	cards := make([]reconcile.Card, n)
	servers := make([]string, n)
	for i := range n {
		host := fmt.Sprintf("s%05d.example.com", i)
		name := fmt.Sprintf("com.example.s%05d/server", i)
		u := "https://" + host + "/mcp"
		switch i % 4 {
		case 2: // same name, different endpoint
			u = "https://" + host + "/v2/mcp"
		case 3: // unrelated
			name = fmt.Sprintf("org.example.c%05d/card", i)
			u = "https://c" + host + "/mcp"
		}
		cards[i] = reconcile.Card{Key: "https://" + host + "/card.json", Domains: []string{host}, Card: servercard.Card{
			Name: name, Version: "1.0.0", Title: "Card", Description: "From a card", Remotes: remote(u)}}
		servers[i] = fmt.Sprintf(`{"name":"com.example.s%05d/server","version":"1.0.1","title":"Entry","description":"From the Registry","remotes":[{"type":"streamable-http","url":"https://%s/mcp"}]}`, i, host)
	}
	addCards(b, db, cards)
	addEntries(b, db, "https://registry.example", servers, func(int) bool { return true })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := reconcile.Run(context.Background(), db, reconcile.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Pairs < n/2 {
			b.Fatalf("only %d pairs", res.Pairs)
		}
	}
}

// TestCompareTemplateRemotes: remotes are paired on the same template-
// reduced key that matched them, so differently named placeholders are one
// remote whose URL and variables differ, not one removed and one added.
func TestCompareTemplateRemotes(t *testing.T) {
	card := servercard.Card{Name: "org.example/t", Remotes: []servercard.Remote{{Type: "streamable-http",
		URL:       "https://{tenant}.example.org/mcp",
		Variables: map[string]servercard.Input{"tenant": {Description: "Tenant"}},
		Headers:   []servercard.KeyValueInput{{Name: "X-Region", Input: servercard.Input{Default: "eu"}}}}}}
	entry := servercard.Card{Name: "org.example/t", Remotes: []servercard.Remote{{Type: "sse",
		URL:       "https://{tenant_id}.example.org/mcp/",
		Variables: map[string]servercard.Input{"tenant_id": {Description: "Tenant"}},
		Headers:   []servercard.KeyValueInput{{Name: "x-region", Input: servercard.Input{Default: "us"}}}}}}
	const k = "remotes[https://{}.example.org/mcp]"
	want := []reconcile.Diff{
		{Field: k + ".url", Card: "https://{tenant}.example.org/mcp", Registry: "https://{tenant_id}.example.org/mcp/"},
		{Field: k + ".type", Card: "streamable-http", Registry: "sse"},
		{Field: k + ".headers[x-region].default", Card: "eu", Registry: "us"},
		{Field: k + ".variables[tenant]", Card: `{"description":"Tenant"}`},
		{Field: k + ".variables[tenant_id]", Registry: `{"description":"Tenant"}`},
	}
	if diff := cmp.Diff(want, reconcile.Compare(card, entry)); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
	// Equal up to normalisation: no url diff at all.
	card.Remotes[0].URL, entry.Remotes[0].URL = "HTTPS://{tenant}.Example.org:443/mcp/", "https://{tenant}.example.org/mcp"
	for _, d := range reconcile.Compare(card, entry) {
		if d.Field == k+".url" {
			t.Errorf("normalisation-only difference reported: %+v", d)
		}
	}
}

// TestMatchStopsAtPublicSuffix: a namespace at or above a public suffix
// (uk.co → co.uk, io.github → github.io) says nothing about who controls a
// domain below it, so it never pairs with a card by domain.
func TestMatchStopsAtPublicSuffix(t *testing.T) {
	const src = "https://registry.example"
	cards := []reconcile.Card{
		{Key: "https://shop.example.co.uk/card", Domains: []string{"shop.example.co.uk"}, Card: servercard.Card{Name: "unrelated/a"}},
		{Key: "https://alice.github.io/card", Domains: []string{"alice.github.io"}, Card: servercard.Card{Name: "unrelated/b"}},
		{Key: "https://co.uk/card", Domains: []string{"co.uk"}, Card: servercard.Card{Name: "unrelated/c"}},
	}
	entries := []reconcile.Entry{
		{Source: src, Name: "uk.co/evil", Server: servercard.Card{Name: "uk.co/evil"}},
		{Source: src, Name: "uk.co.example/good", Server: servercard.Card{Name: "uk.co.example/good"}},
		{Source: src, Name: "io.github/hub", Server: servercard.Card{Name: "io.github/hub"}},
	}
	want := reconcile.Result{
		Pairs: []reconcile.Pair{{CardKey: "https://shop.example.co.uk/card", CardName: "unrelated/a", Source: src, Name: "uk.co.example/good",
			Basis:  reconcile.BasisNamespace,
			Detail: "shop.example.co.uk (listing domain shop.example.co.uk is a subdomain of namespace example.co.uk)",
			Diffs:  []reconcile.Diff{{Field: "name", Card: "unrelated/a", Registry: "uk.co.example/good"}}}},
		CardOnly: []reconcile.CardOnly{
			{CardKey: "https://alice.github.io/card", CardName: "unrelated/b", Domains: []string{"alice.github.io"}},
			{CardKey: "https://co.uk/card", CardName: "unrelated/c", Domains: []string{"co.uk"}},
		},
		RegistryOnly: []reconcile.RegistryOnly{{Source: src, Name: "io.github/hub"}, {Source: src, Name: "uk.co/evil"}},
	}
	if diff := cmp.Diff(want, reconcile.Match(cards, entries)); diff != "" {
		t.Errorf("Match (-want +got):\n%s", diff)
	}
}

// TestCompareIgnoresCardOnlyProtocolVersions: server.json has no
// supportedProtocolVersions, so declaring them is not a difference.
func TestCompareIgnoresCardOnlyProtocolVersions(t *testing.T) {
	card := servercard.Card{Name: "com.example/x", Remotes: []servercard.Remote{{Type: "streamable-http",
		URL: "https://mcp.example.com/mcp", SupportedProtocolVersions: []string{"2025-06-18"}}}}
	server := servercard.Card{Name: "com.example/x", Remotes: []servercard.Remote{{Type: "streamable-http",
		URL: "https://mcp.example.com/mcp/"}}}
	if diffs := reconcile.Compare(card, server); len(diffs) != 0 {
		t.Errorf("diffs = %+v, want none", diffs)
	}
}

// A card that a namespace pairs with many entries, through listing
// domains that name them more than once, is paired with each once, in
// entry order.
func TestMatchManyByNamespace(t *testing.T) {
	const src = "https://registry.example"
	card := reconcile.Card{Key: "https://example.com/card", Domains: []string{"example.com", "EXAMPLE.com", "Example.COM"},
		Card: servercard.Card{Name: "unrelated/a"}}
	var entries []reconcile.Entry
	var want []string
	for i := range 30 {
		name := fmt.Sprintf("com.example/s%02d", 29-i)
		entries = append(entries, reconcile.Entry{Source: src, Name: name, Server: servercard.Card{Name: name}})
		want = append(want, fmt.Sprintf("com.example/s%02d", i))
	}
	res := reconcile.Match([]reconcile.Card{card}, entries)
	var got []string
	for _, p := range res.Pairs {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

// An entry declaring one endpoint twice (two templates with other
// variable names) is paired once with a card declaring it.
func TestMatchEntryDeclaringAURLTwice(t *testing.T) {
	const src = "https://registry.example"
	card := reconcile.Card{Key: "https://example.com/card", Domains: []string{"example.com"},
		Card: servercard.Card{Name: "com.example/a", Remotes: remote("https://{t}.example.com/mcp")}}
	entry := reconcile.Entry{Source: src, Name: "com.example/b", Server: servercard.Card{Name: "com.example/b",
		Remotes: []servercard.Remote{{Type: "streamable-http", URL: "https://{tenant}.example.com/mcp"},
			{Type: "sse", URL: "https://{org}.example.com/mcp"}}}}
	res := reconcile.Match([]reconcile.Card{card}, []reconcile.Entry{entry})
	if len(res.Pairs) != 1 || res.Pairs[0].Basis != reconcile.BasisRemoteURL {
		t.Errorf("pairs %+v, want one by remote URL", res.Pairs)
	}
}

// A differing value longer than a Diff shows is cut, on a character
// boundary, and marked.
func TestCompareClipsLongValues(t *testing.T) {
	long := strings.Repeat("é", 800) // 1,600 bytes
	diffs := reconcile.Compare(servercard.Card{Description: long}, servercard.Card{Description: "short"})
	want := []reconcile.Diff{{Field: "description", Card: strings.Repeat("é", 500) + "…", Registry: "short"}}
	if d := cmp.Diff(want, diffs); d != "" {
		t.Errorf("diffs (-want +got):\n%s", d)
	}
}

package feed

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/store"
)

// directoryCatalogOf builds the catalog of records as writeAICatalog does,
// from the first record of each card (the store's entries give exactly
// those, in this order), each entry's repeats as the store's
// (store.FeedEntry.Repeats, tested in store) would say.
func directoryCatalogOf(recs []Record, o CatalogOptions) (map[string]any, int) {
	c := newDirectoryCatalog(o)
	entries := []map[string]any{}
	seen := map[string]bool{}
	before := map[[2]string]bool{}
	for _, r := range recs {
		if seen[r.CardKey] {
			continue
		}
		seen[r.CardKey] = true
		var ls []store.Listing
		for _, l := range r.ListedBy {
			ls = append(ls, store.Listing{Domain: l.Domain, CatalogURL: l.CatalogURL, Identifier: l.Identifier})
		}
		id := store.PublisherIdentifier(r.CardKey, ls)
		repeats := id != "" && before[[2]string{id, r.Version}]
		if id != "" {
			before[[2]string{id, r.Version}] = true
		}
		if e, ok := c.entry(&r, id, repeats, nil); ok {
			entries = append(entries, entryMap(&e))
		}
	}
	return map[string]any{"specVersion": "1.0", "host": c.host(), "entries": entries}, c.skipped
}

// entryMap is a catalog entry as the map encoding/json wrote before
// appendCatalogEntry.
func entryMap(e *catalogEntry) map[string]any {
	m := map[string]any{"type": "application/mcp-server-card+json", "identifier": e.Identifier}
	if e.Data != nil {
		m["data"] = e.Data
	} else {
		m["url"] = e.URL
	}
	if e.Version != "" {
		m["version"] = e.Version
	}
	if e.DisplayName != "" {
		m["displayName"] = e.DisplayName
	}
	if e.Listed {
		m["extensions"] = map[string]any{MetaKey: map[string]any{"foundIn": e.FoundIn, "cardKey": e.CardKey}}
	}
	return m
}

// TestCatalogEntryMatchesEncodingJSON: appendCatalogEntry writes what
// encoding/json writes of the entry's map, HTML not escaped.
func TestCatalogEntryMatchesEncodingJSON(t *testing.T) {
	for _, e := range []catalogEntry{
		{URL: "https://cards.example/one?a=1&b=<2>", Identifier: "urn:air:a.example:mcp:one", Version: "1.0.0",
			DisplayName: "One \"quoted\" \u2028 \x01 é", Listed: true, FoundIn: "https://a.example/.well-known/ai-catalog.json",
			CardKey: "https://cards.example/one"},
		{Data: json.RawMessage(`{"name":"x","remotes":[{"type":"sse","url":"https://x.example/sse"}]}`), Identifier: "urn:x"},
		{Data: json.RawMessage(`{ "name" : "spaced",
			"n": [1, 2] }`), Identifier: "urn:y", DisplayName: "Y"},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(entryMap(&e)); err != nil {
			t.Fatal(err)
		}
		got, err := appendCatalogEntry(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(strings.TrimSuffix(want.String(), "\n"), string(got)); diff != "" {
			t.Errorf("(-encoding/json +appendCatalogEntry):\n%s", diff)
		}
	}
	if _, err := appendCatalogEntry(nil, &catalogEntry{Data: json.RawMessage{}}); err == nil {
		t.Error("an inline card without its copy: no error")
	}
}

func TestDirectoryCatalog(t *testing.T) {
	listed := func(catalog, id string) []Listing {
		return []Listing{{Domain: "a.example", CatalogURL: catalog, Identifier: id}}
	}
	legacy := "https://legacy.example/.well-known/mcp/server-card.json"
	recs := []Record{
		{CardKey: "https://cards.example/one", CardURL: "https://cards.example/one", Name: "com.example/one", Version: "1.0.0",
			ListedBy: listed("https://a.example/.well-known/ai-catalog.json", "urn:air:a.example:mcp:one")},
		// A second endpoint of the same card: one entry.
		{CardKey: "https://cards.example/one", CardURL: "https://cards.example/one",
			ListedBy: listed("https://a.example/.well-known/ai-catalog.json", "urn:air:a.example:mcp:one")},
		// Found at a legacy path: the listing only repeats the card URL.
		{CardKey: legacy, CardURL: legacy, Title: "Legacy", ListedBy: listed(legacy, legacy)},
		// Another card claiming the same identifier and version.
		{CardKey: "https://cards.example/copy", CardURL: "https://cards.example/copy", Version: "1.0.0",
			ListedBy: listed("https://b.example/.well-known/ai-catalog.json", "urn:air:a.example:mcp:one")},
		// A card claiming an identifier in the directory's own namespace.
		{CardKey: "https://cards.example/ours", CardURL: "https://cards.example/ours", Version: "1.0.0",
			ListedBy: listed("https://c.example/.well-known/ai-catalog.json", "urn:air:directory.example:mcp-server-card:0123456789abcdef")},
	}
	minted := MintIdentifier("Directory.example", legacy)
	if minted != "urn:air:directory.example:mcp-server-card:"+minted[len(minted)-16:] || len(minted) != len("urn:air:directory.example:mcp-server-card:")+16 {
		t.Fatalf("minted %q", minted)
	}
	ids := func(c map[string]any) []string {
		var out []string
		for _, e := range c["entries"].([]map[string]any) {
			out = append(out, e["identifier"].(string)+" "+e["url"].(string))
		}
		return out
	}

	c, skipped := directoryCatalogOf(recs, CatalogOptions{PublisherDomain: "directory.example"})
	want := []string{
		"urn:air:a.example:mcp:one https://cards.example/one",
		minted + " " + legacy,
		MintIdentifier("directory.example", "https://cards.example/copy") + " https://cards.example/copy",
		MintIdentifier("directory.example", "https://cards.example/ours") + " https://cards.example/ours",
	}
	if diff := cmp.Diff(want, ids(c)); diff != "" || skipped != 0 {
		t.Errorf("with a publisher domain, skipped %d, entries (-want +got):\n%s", skipped, diff)
	}
	if diff := cmp.Diff(map[string]any{"displayName": "cardcrawl directory at directory.example", "identifier": "directory.example"}, c["host"]); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
	ext := c["entries"].([]map[string]any)[0]["extensions"].(map[string]any)[MetaKey].(map[string]any)
	if ext["foundIn"] != "https://a.example/.well-known/ai-catalog.json" {
		t.Errorf("extensions = %v", ext)
	}

	// Without one, nothing is minted: those entries are left out (but the
	// identifier in a namespace nobody here mints in).
	c, skipped = directoryCatalogOf(recs, CatalogOptions{})
	want = []string{want[0], "urn:air:directory.example:mcp-server-card:0123456789abcdef https://cards.example/ours"}
	if diff := cmp.Diff(want, ids(c)); diff != "" || skipped != 2 {
		t.Errorf("without a publisher domain, skipped %d, entries (-want +got):\n%s", skipped, diff)
	}
	if _, ok := c["host"].(map[string]any)["identifier"]; ok {
		t.Error("host identifier without a publisher domain")
	}
}

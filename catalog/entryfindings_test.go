package catalog

import (
	"net/url"
	"testing"
)

// TestListedEntry: the entry a listing came from is the one of its
// identifier whose URL or inline data is the card, else the only one of
// its identifier; two of one identifier, neither the card, are none.
func TestListedEntry(t *testing.T) {
	const catURL = "https://a.example/.well-known/ai-catalog.json"
	doc := []byte(`{"specVersion":"1.0","entries":[
		{"identifier":"urn:x:a","type":"application/mcp-server-card+json","url":"/cards/a.json"},
		{"identifier":"urn:x:b","type":"application/mcp-server-card+json","data":{"name":"b"}},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/cards/d1.json","version":"1"},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/cards/d2.json","version":"2"},
		{"identifier":"urn:x:dup2","type":"application/mcp-server-card+json","data":{"name":"c"},"version":"1"},
		{"identifier":"urn:x:dup2","type":"application/mcp-server-card+json","data":{"name":"d"},"version":"2"}]}`)
	base, _ := url.Parse(catURL)
	cat, _, err := Parse(doc, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, identifier, cardKey string
		want                      int
	}{
		{"by URL", "urn:x:a", "https://a.example/cards/a.json", 0},
		{"the only one of its identifier, card redirected", "urn:x:a", "https://b.example/a.json", 0},
		{"inline", "urn:x:b", catURL + "#/entries/1/data", 1},
		{"first of two by URL", "urn:x:dup", "https://a.example/cards/d1.json", 2},
		{"second of two by URL", "urn:x:dup", "https://a.example/cards/d2.json", 3},
		{"second of two inline", "urn:x:dup2", catURL + "#/entries/5/data", 5},
		{"two, neither its card", "urn:x:dup", "https://c.example/x.json", -1},
		{"another entry's card", "urn:x:dup2", "https://a.example/cards/a.json", -1},
		{"no such identifier", "urn:x:gone", "https://a.example/cards/a.json", -1},
	} {
		if got := cat.ListedEntry(catURL, tc.identifier, tc.cardKey); got != tc.want {
			t.Errorf("%s: ListedEntry = %d, want %d", tc.name, got, tc.want)
		}
	}
	var none *Catalog
	if got := none.ListedEntry(catURL, "urn:x:a", "https://a.example/cards/a.json"); got != -1 {
		t.Errorf("nil catalog: ListedEntry = %d, want -1", got)
	}
}

// TestStoredBase: a stored catalog's entries resolve against where it was
// fetched from, else its own key; an unparsable or empty one is skipped.
func TestStoredBase(t *testing.T) {
	const key = "https://a.example/.well-known/ai-catalog.json"
	for _, tc := range []struct{ base, key, want string }{
		{"https://b.example/moved/ai-catalog.json", key, "https://b.example/moved/ai-catalog.json"},
		{"", key, key},
		{"%zz", key, key},
		{"", key + "#/entries/2/data", key + "#/entries/2/data"},
		{"", "", ""},
	} {
		got := ""
		if b := StoredBase(tc.base, tc.key); b != nil {
			got = b.String()
		}
		if got != tc.want {
			t.Errorf("StoredBase(%q, %q) = %q, want %q", tc.base, tc.key, got, tc.want)
		}
	}
}

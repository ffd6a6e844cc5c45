package site

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// TestEntryTrust: a listing shows the findings of its own entry and of its
// catalog's signature: not another entry's (not /entries/10 for entry 1),
// not its inline data's (the card's own findings), and none of an entry
// it cannot tell apart from another of the same identifier.
func TestEntryTrust(t *testing.T) {
	const catURL = "https://a.example/.well-known/ai-catalog.json"
	doc := []byte(`{"specVersion":"1.0","entries":[
		{"identifier":"urn:x:a","type":"application/mcp-server-card+json","url":"/cards/a.json"},
		{"identifier":"urn:x:b","type":"application/mcp-server-card+json","data":{"name":"b"}},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/cards/d1.json","version":"1"},
		{"identifier":"urn:x:dup","type":"application/mcp-server-card+json","url":"/cards/d2.json","version":"2"}]}`)
	base, _ := url.Parse(catURL)
	cat, _, err := catalog.Parse(doc, base, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := func(path string) finding.Finding {
		return finding.Finding{Severity: finding.Info, Code: "c", Path: path, Message: path}
	}
	c := store.SiteCatalog{URL: catURL, Findings: finding.List{f(""), f("/signature"), f("/entries/0/digest"),
		f("/entries/1/trustManifests/0/signature"), f("/entries/1/data/remotes/0"), f("/entries/10/digest"),
		f("/entries/2/digest"), f("/entries/3/digest"), f("/entriesX")}}
	paths := func(l finding.List) []string {
		var out []string
		for _, f := range l {
			out = append(out, f.Path)
		}
		return out
	}
	for _, tc := range []struct {
		name, identifier, cardKey string
		want                      []string
	}{
		{"by URL", "urn:x:a", "https://a.example/cards/a.json", []string{"/signature", "/entries/0/digest"}},
		{"the only one of its identifier, card redirected", "urn:x:a", "https://b.example/a.json",
			[]string{"/signature", "/entries/0/digest"}},
		{"inline", "urn:x:b", catURL + "#/entries/1/data", []string{"/signature", "/entries/1/trustManifests/0/signature"}},
		{"one of two by URL", "urn:x:dup", "https://a.example/cards/d2.json", []string{"/signature", "/entries/3/digest"}},
		{"two, neither its card", "urn:x:dup", "https://c.example/x.json", []string{"/signature"}},
		{"no such entry", "urn:x:gone", "https://a.example/cards/a.json", []string{"/signature"}},
	} {
		if tc.name == "by URL" {
			if diff := cmp.Diff([]string{"/signature"}, paths(entryTrust(nil, c, tc.identifier, tc.cardKey))); diff != "" {
				t.Errorf("no catalog read (-want +got):\n%s", diff)
			}
		}
		if diff := cmp.Diff(tc.want, paths(entryTrust(cat, c, tc.identifier, tc.cardKey))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

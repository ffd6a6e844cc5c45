package catalog

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic or break its contract.
// The seeds run as an ordinary test; `go test -fuzz FuzzParse` explores more.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `[]`, `null`, `{"specVersion":"1.0","entries":[]}`,
		`{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"t","url":"/x"},{"identifier":"urn:a","type":"t","data":{}}]}`,
		`{"a":1,"a":2,"b":{"c":[{"d":1,"d":2}]}}`, `{"\u0061":1,"a":2}`, `{"entries":[1,"x",{},{"identifier":""}]}`,
		`{"specVersion":"1.0","entries":[{"identifier":"urn:a","type":"t","url":"http://[::1"}]}`,
		"\xEF\xBB\xBF{\"entries\":[]}", `{"specVersion":"9.0"}`, `{"entries":[` + `"\\\"",` + `{}]}`,
	} {
		f.Add([]byte(s))
	}
	// Every spec and SDK example document (testdata/specs/SOURCES.md).
	err := filepath.WalkDir(specsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		f.Add(b)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	base := mustURL(f, "https://example.com/dir/ai-catalog.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		c, fl, err := Parse(body, base, Options{MaxEntries: 50})
		if err != nil {
			if c != nil || !fl.HasError() {
				t.Fatalf("error %v with catalog %v and findings %v", err, c, fl)
			}
			return
		}
		if len(c.Entries) > 50 || len(c.Entries) > c.EntryCount {
			t.Fatalf("%d entries of %d", len(c.Entries), c.EntryCount)
		}
		for _, e := range c.Entries {
			if !json.Valid(e.Raw) || (e.Data != nil && !json.Valid(e.Data)) {
				t.Fatalf("entry %d: raw %q data %q not valid json", e.Index, e.Raw, e.Data)
			}
			if e.Identifier == "" || e.Type == "" || (e.URL == "") == (e.Data == nil) || e.Essence != Essence(e.Type) {
				t.Fatalf("invalid entry kept: %+v", e)
			}
		}
	})
}

// FuzzLinks checks that arbitrary headers and HTML never panic Links.
func FuzzLinks(f *testing.F) {
	f.Add(`<a.json>; rel="ai-catalog", <b>;rel=x`, `<base href="/x/"><link rel="ai-catalog" href="c.json">`)
	f.Add(`<`, `<link`)
	f.Add(`;;;,,,"\`, "\x00<html")
	base := mustURL(f, "https://example.com/")
	f.Fuzz(func(t *testing.T, header, html string) {
		h := http.Header{"Link": {header}}
		for _, l := range Links(h, []byte(html), base) {
			if l == "" {
				t.Fatal("empty link")
			}
		}
	})
}

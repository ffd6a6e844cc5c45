package registry_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/registry"
)

// serverJSONSeeds are bare server.json documents: the Registry's production
// seed, the 17 examples of its server.json reference, and the 30 inputs sent
// to its own validator (testdata/SOURCES.md says where each comes from), plus
// hostile shapes written here.
func serverJSONSeeds(t testing.TB) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, name := range []string{"seed.current.json", "docs-examples.server-json.json"} {
		var docs []json.RawMessage
		if err := json.Unmarshal(readFixture(t, name), &docs); err != nil {
			t.Fatal(err)
		}
		out = append(out, docs...)
	}
	var cases []struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(readFixture(t, "validate-responses.observed.json"), &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		out = append(out, c.Input)
	}
	for _, s := range []string{
		// A draft-era document, as repositories still commit them (issue 7 #11).
		`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json","name":"io.github.a/b","description":"d","version_detail":{"version":"1.0.0"}}`,
		`{"name":"a/b","version":"1","remotes":[{"type":"sse","url":"https://{x}.example.com/{y}","variables":{"x":{"default":1}}}]}`,
		`{"name":1,"version":true}`, `{"name":"a/b","version":"1","remotes":"x","icons":[1,null,{}],"repository":[]}`,
		`{"name":"a/b","name":"c/d","version":"1","version":"2"}`, `{"name":"a/b","version":"1","_meta":null}`,
		`{"name":"a/b","version":"1","packages":[{"transport":{"type":"stdio"},"version":"latest","x":1}]}`,
		"{\"name\":\"a\xff/b\",\"version\":\"1\\u0000\",\"description\":\"\\ud800\"}",
		`{"name":"a/b","version":"1","websiteUrl":"javascript:alert(1)","remotes":[{"type":"streamable-http","url":"https://localhost/"}]}`,
		`{"name":"a/b","version":"1","_meta":{"io.modelcontextprotocol.registry/publisher-provided":{"k":[` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `]}}}`,
		`null`, `[]`, `"x"`, `{}`,
	} {
		out = append(out, json.RawMessage(s))
	}
	return out
}

// FuzzParseListPage checks the v0.1 list parser against properties that
// must hold for any body: an error comes with no page, every entry of the
// "servers" array is either kept or skipped with exactly one error finding,
// a kept entry has its store key and compact JSON, and an entry re-wrapped
// in an envelope parses back to the same entry.
func FuzzParseListPage(f *testing.F) {
	var rec struct {
		Responses []struct {
			Body json.RawMessage `json:"body"`
		} `json:"responses"`
	}
	if err := json.Unmarshal(readFixture(f, "api-responses.stubbed.json"), &rec); err != nil {
		f.Fatal(err)
	}
	for _, r := range rec.Responses {
		f.Add([]byte(r.Body))
	}
	for _, s := range serverJSONSeeds(f) {
		f.Add([]byte(`{"servers":[{"server":` + string(s) + `,"_meta":{"` + registry.OfficialMetaKey + `":{"status":"active","isLatest":true}}}],"metadata":{"count":1}}`))
	}
	for _, s := range []string{
		`{"servers":null}`, `{"servers":[]}`, `{"servers":[null,1,"x",[],{},{"server":null},{"server":{"name":"a/b"}}]}`,
		`{"servers":[{"server":{"name":"a/b","version":"1"},"_meta":[1]}],"metadata":{"nextCursor":"a/b:1","count":"x"}}`,
		`{"servers":[{"server":{"name":"a/b","version":"1"},"_meta":{"` + registry.OfficialMetaKey + `":{"publishedAt":"yesterday"}}}]}`,
		`{"servers":[{"server":{"name":"a/b","version":"1"}}],"servers":[]}`, "\xef\xbb\xbf{\"servers\":[]}",
		`{"servers":[{"server":{"name":"a/b","version":"1"}}]}trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := registry.ParseListPage(body)
		if err != nil {
			if diff := cmp.Diff(registry.Page{}, p); diff != "" {
				t.Fatalf("error %v returned with a page (-zero +got):\n%s", err, diff)
			}
			return
		}
		var env struct {
			Servers []json.RawMessage `json:"servers"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("accepted a body encoding/json rejects: %v", err)
		}
		checkKeptOrSkipped(t, len(env.Servers), p.Entries, p.Findings, "/servers/")
		for _, e := range p.Entries {
			checkEntry(t, e)
			again, err := registry.ParseListPage(rewrap(e))
			if err != nil || len(again.Entries) != 1 {
				t.Fatalf("entry %s@%s does not parse back: %v, %d entries, %v", e.Server.Name, e.Server.Version, err, len(again.Entries), again.Findings)
			}
			if diff := cmp.Diff(e, again.Entries[0], sameJSON); diff != "" {
				t.Errorf("entry changed on a round trip (-first +second):\n%s", diff)
			}
		}
	})
}

// FuzzParseDump checks the offline dump reader: a bare array of server.json
// documents or a list envelope. Each kept document is validated too, which
// must never call a document that parsed as an object "not JSON".
func FuzzParseDump(f *testing.F) {
	seeds := serverJSONSeeds(f)
	f.Add(readFixture(f, "seed.current.json"))
	for _, s := range seeds {
		f.Add([]byte("[" + string(s) + "]"))
	}
	f.Add([]byte(`[` + string(seeds[0]) + `,null,1,{"name":"x"},` + string(seeds[0]) + `]`))
	f.Add([]byte(" \n[]"))
	f.Add([]byte(`[{"name":"a/b","version":"1"}`))
	v := validator(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, fl, err := registry.ParseDump(body)
		if err != nil {
			if entries != nil || fl != nil {
				t.Fatalf("error %v returned with %d entries and findings %v", err, len(entries), fl)
			}
			return
		}
		if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
			var docs []json.RawMessage
			if err := json.Unmarshal(trimmed, &docs); err != nil {
				t.Fatalf("accepted an array encoding/json rejects: %v", err)
			}
			checkKeptOrSkipped(t, len(docs), entries, fl, "/")
		}
		for _, e := range entries {
			checkEntry(t, e)
			for _, fd := range v.Validate(e.Raw) {
				if fd.Code == "" || (fd.Path != "" && fd.Path[0] != '/') {
					t.Errorf("finding without a code or with a bad path: %+v", fd)
				}
				if fd.Code == "not_json" || fd.Code == "not_object" {
					t.Errorf("kept object %q validated as %s: %s", e.Raw, fd.Code, fd.Message)
				}
			}
		}
	})
}

// checkKeptOrSkipped: n documents came in; each is an entry or exactly one
// error finding, so nothing disappears without a word.
func checkKeptOrSkipped(t *testing.T, n int, entries []registry.Entry, fl finding.List, prefix string) {
	t.Helper()
	errs := 0
	for _, fd := range fl {
		if !strings.HasPrefix(fd.Path, prefix) {
			t.Errorf("finding path %q is not under %s: %+v", fd.Path, prefix, fd)
		}
		if fd.Severity == finding.Error {
			errs++
		}
	}
	if len(entries)+errs != n {
		t.Fatalf("%d documents in, %d kept + %d skipped with an error: %v", n, len(entries), errs, fl)
	}
}

func checkEntry(t *testing.T, e registry.Entry) {
	t.Helper()
	if e.Server.Name == "" || e.Server.Version == "" {
		t.Fatalf("entry kept without its key: %+v", e.Server)
	}
	for what, raw := range map[string]json.RawMessage{"raw": e.Raw, "_meta": e.Meta} {
		if raw == nil && what == "_meta" {
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil || !bytes.Equal(buf.Bytes(), raw) {
			t.Fatalf("%s is not compact JSON (%v): %q", what, err, raw)
		}
	}
	if e.Raw[0] != '{' {
		t.Fatalf("raw server.json is not an object: %q", e.Raw)
	}
}

// rewrap puts an entry back into a one-entry list response. It is built by
// hand: json.Marshal would HTML-escape the raw bytes and change them.
func rewrap(e registry.Entry) []byte {
	item := `{"server":` + string(e.Raw)
	if e.Meta != nil {
		item += `,"_meta":` + string(e.Meta)
	}
	return []byte(`{"servers":[` + item + `}]}`)
}

// sameJSON compares raw JSON ignoring insignificant spaces: the round trip
// compacts the document, and the raw fields decoded from it with it.
var sameJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
})

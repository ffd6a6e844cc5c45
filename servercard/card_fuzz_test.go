package servercard

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// specCards reads every example card of the spec (testdata/specs/SOURCES.md).
func specCards(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	err := filepath.WalkDir(specDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		b, err := os.ReadFile(path)
		out = append(out, b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzDecodeCard checks the typed view Check gives of a card: a card comes
// back exactly for a JSON object, a conformant grade carries no error, and
// the Card written back as JSON decodes to the same Card, so nothing the
// crawler stores or compares depends on how the publisher spelled it.
func FuzzDecodeCard(f *testing.F) {
	for _, b := range specCards(f) {
		f.Add(b)
	}
	for _, s := range []string{
		typicalCard,
		// Hostile: members of the wrong type next to good ones, duplicate
		// members, null and empty collections, a BOM, odd _meta values.
		`{"name":2,"version":"1","remotes":[{"type":"sse","url":"https://x.example/sse","headers":"no","variables":{"a":{"default":1}}},7,null]}`,
		`{"name":"a/b","name":"c/d","remotes":[{"url":"https://a.example","url":"https://b.example"}]}`,
		`{"icons":[],"remotes":[],"repository":null,"_meta":null}`, `{"_meta":[1],"repository":{"url":5,"source":"github"}}`,
		"\xef\xbb\xbf{\"name\":\"a/b\"}", `{"remotes":[{"variables":{},"headers":[{"name":"X","variables":{"v":{"choices":[]}}}]}]}`,
		"{\"description\":\"\xff\\u2028<script>&\"}", `[]`, `null`, `"card"`, `{}`,
	} {
		f.Add([]byte(s))
	}
	v := newValidator(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		res := v.Check(raw)
		var obj map[string]json.RawMessage
		isObj := json.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &obj) == nil && obj != nil
		if (res.Card != nil) != isObj {
			t.Fatalf("card %v for a document that is an object: %v", res.Card != nil, isObj)
		}
		if res.Grade == Conformant && res.Findings.HasError() {
			t.Fatalf("conformant with errors: %v", res.Findings)
		}
		if res.Card == nil {
			return
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.Card); err != nil {
			t.Fatalf("card does not encode: %v", err)
		}
		again := v.Check(b.Bytes())
		if diff := cmp.Diff(res.Card, again.Card, equateEmptyCollections, sameJSONValue); diff != "" {
			t.Fatalf("card written as %s decodes differently (-first +second):\n%s", b.Bytes(), diff)
		}
		for _, fd := range again.Findings {
			if fd.Severity == finding.Error && (fd.Code == CodeInvalidJSON || fd.Code == CodeNotObject) {
				t.Fatalf("card written back is not a JSON object: %+v", fd)
			}
		}
	})
}

// equateEmptyCollections: an empty list or map is not written back, and
// reads back as nil. Raw JSON is left to sameJSONValue.
var equateEmptyCollections = cmp.FilterValues(func(a, b any) bool {
	_, raw := a.(json.RawMessage)
	return !raw
}, cmpopts.EquateEmpty())

// sameJSONValue compares raw JSON ignoring insignificant spaces.
var sameJSONValue = cmp.Comparer(func(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
})

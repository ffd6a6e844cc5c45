package jsonstream

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Written element by element, an array reads exactly as encoding/json
// writes the whole slice, at the top level and inside an object.
func TestArrayMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		elems []any
	}{
		{"empty", []any{}},
		{"one", []any{map[string]any{"a": "<b>", "n": 1}}},
		{"several", []any{1, "two", []int{3, 4}, map[string]string{"k": "v"}}},
		// Structure inside strings, escapes, empty and nested containers,
		// and raw JSON with its own spacing.
		{"tricky", []any{
			map[string]any{`a"{[,:]}`: `x\"y{}[],:`, "e": map[string]any{}, "l": []any{}, "n": nil,
				"d": []any{map[string]any{"x": []any{[]any{}, map[string]any{"y": 1.5}}}}, "u": "\u2028 \x00 é <>&"},
			json.RawMessage(` { "r" : [ 1 , { } ] } `), []string{}, "", `\`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, indent := range []string{"", "  "} {
				var got bytes.Buffer
				a := New(&got, indent)
				for _, e := range tc.elems {
					if err := a.Add(e); err != nil {
						t.Fatal(err)
					}
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				enc.SetIndent(indent, "  ")
				if err := enc.Encode(tc.elems); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))), got.String()); diff != "" {
					t.Errorf("indent %q (-want +got):\n%s", indent, diff)
				}
			}
		})
	}
}

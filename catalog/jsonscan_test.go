package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// scanSeeds are inputs on which scanJSON must agree with json.Valid.
var scanSeeds = []string{
	``, ` `, `{}`, `[]`, `[1,2]`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{1:2}`, `[`, `]`, `{`, `}`, `"`, `"abc`,
	`"a\u00e9b"`, `"\u12"`, `"\uZZZZ"`, `"\x"`, `"\/"`, "\"tab\there\"", "\"\xff\xfe\"", `"\"`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e`, `1e+`, `-1.2e-3`, `+1`, `0x10`, `1 2`,
	`true`, `tru`, `false`, `falsey`, `null`, `nul`, `nullx`, `[true,false,null]`,
	`{"a":{"b":[{"c":null}]}}`, `{"a":1}{"b":2}`, `[1] x`, "\t[ 1 , 2 ]\r\n",
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}

func TestScanJSONMatchesValid(t *testing.T) {
	for _, s := range scanSeeds {
		_, err := scanJSON([]byte(s), func(string) {})
		if got, want := err == nil, json.Valid([]byte(s)); got != want {
			name := s
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			t.Errorf("scanJSON(%q) valid = %v (%v), json.Valid = %v", name, got, err, want)
		}
	}
}

func FuzzScanJSONMatchesValid(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := scanJSON(b, func(string) {})
		if got, want := err == nil, json.Valid(b); got != want {
			t.Fatalf("scanJSON valid = %v (%v), json.Valid = %v", got, err, want)
		}
	})
}

func TestScanJSONDuplicatePaths(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{"a":1,"b":2}`, nil},
		{`{"a":1,"a":2,"a":3}`, []string{"/a", "/a"}},
		{`{"x":[{"k":1},{"k":1,"k":2}]}`, []string{"/x/1/k"}},
		{`{"a~b/c":1,"a~b/c":2}`, []string{"/a~0b~1c"}},
		{`{"\u0061":1,"a":2}`, []string{"/a"}},
		{`{"o":{"a":1},"p":{"a":1}}`, nil},
		{`[{"a":1},{"a":1}]`, nil},
	}
	for _, tt := range tests {
		var got []string
		n, err := scanJSON([]byte(tt.in), func(p string) { got = append(got, p) })
		if err != nil || n != len(tt.want) {
			t.Errorf("scanJSON(%s): n = %d, err = %v", tt.in, n, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("scanJSON(%s) paths (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestScanJSONManyKeysUsesMap(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{`)
	for i := 0; i < 2*linearKeys; i++ {
		sb.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	sb.WriteString(`"k":2,"kx":3}`)
	var got []string
	if _, err := scanJSON([]byte(sb.String()), func(p string) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/k", "/kx"}, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

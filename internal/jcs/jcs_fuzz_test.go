package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzCanonicalize: an input that has a canonical form gives JSON that
// means the same (encoding/json reads the same value from both) and is
// its own canonical form; anything else is refused with the one error.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,2.5e10,-0,"\u0000\u20ac"],"a":{"\ud83d\ude00":null,"\r":true}}`,
		`333333333.33333329`, `[1E30, 4.50, 2e-3, 0.000000000000000000000000001]`,
		`{"a":1,"a":1}`, `"\ud800"`, `[[[[]]]]`, ` {} `, `1e999`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			if !errors.Is(err, ErrNotCanonicalizable) {
				t.Fatalf("error %v does not wrap ErrNotCanonicalizable", err)
			}
			return
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatalf("canonicalized %q, which encoding/json refuses: %v", in, err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("canonical form %q is not JSON: %v", out, err)
		}
		if !cmp.Equal(a, b) { // numbers by value: -0 is written 0
			t.Fatalf("%q became %q: %s", in, out, cmp.Diff(a, b))
		}
		again, err := Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("the canonical form %q is not its own: %q, %v", out, again, err)
		}
	})
}

package store

import "testing"

// TestUnpackTextRejects: a packed column that does not hold exactly the
// values asked for is an error, not a record of shifted fields.
func TestUnpackTextRejects(t *testing.T) {
	var a, b string
	for _, packed := range []string{"", "1:a", "1:a1:b1:c", "x:a1:b", "3:ab", "-1:a1:b", "1a1:b"} {
		if err := unpackText(packed, []*string{&a, &b}); err == nil {
			t.Errorf("%q: no error (%q, %q)", packed, a, b)
		}
	}
	if err := unpackText("1:a0:", []*string{&a, &b}); err != nil || a != "a" || b != "" {
		t.Errorf(`"1:a0:": %q, %q, %v`, a, b, err)
	}
}

package textcut_test

import (
	"testing"
	"unicode/utf8"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},              // é is two bytes: cut before it, not inside
		{"ééé", 4, "éé…"},            // on a boundary
		{"日本語", 5, "日…"},             // three-byte characters
		{"\xff\xfe\xfd", 1, "\xff…"}, // bytes that begin no character are cut where n says
	} {
		got := textcut.Cut(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if utf8.ValidString(tc.s) && !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q: not UTF-8", tc.s, tc.n, got)
		}
	}
}

package textcut_test

import (
	"testing"
	"unicode/utf8"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// TestCutKeepsWholeCharacters: a value cut in the middle of a multi-byte
// character would store half a UTF-8 sequence.
func TestCutKeepsWholeCharacters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exact", 5, "exact"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},             // é is 2 bytes; byte 2 is inside it
		{"ab€", 3, "ab…"},           // € is 3 bytes
		{"ab€", 4, "ab…"},           // still inside €
		{"ab€", 5, "ab€"},           // fits
		{"😀😀", 5, "😀…"},             // 4-byte characters
		{"😀", 2, "…"},               // nothing whole fits
		{"a\xffb\xfe", 2, "a\xff…"}, // invalid bytes are each a boundary
	} {
		got := textcut.Cut(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if utf8.ValidString(tc.in) && !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
		}
	}
}

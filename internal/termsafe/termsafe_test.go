package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// Hostile holds one of every kind of character a hostile card can use
// against a terminal; tests elsewhere seed databases with it.
const Hostile = "a\x1b[2J\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07\rforged\nline\ttab\x00\x7f" +
	"\u0085\u009b\u202eevil\u202c\u2066\u2069\u200e\u200f\u061c\u200b\ufeff\u00ad\u2028\U000e0041\xff\xc3"

func TestString(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain ascii", "com.example/weather 1.0.0", "com.example/weather 1.0.0"},
		{"letters, accents, scripts and emoji pass", "Café 東京 Ünïcødé 😀 عربى", "Café 東京 Ünïcødé 😀 عربى"},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"OSC 8 link with BEL", "\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07", `\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07`},
		{"OSC with ST", "\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},
		{"line forging", "ok\r\nfake row", `ok\r\nfake row`},
		{"tab inside a cell", "a\tb", `a\tb`},
		{"NUL, backspace, DEL", "a\x00b\x08c\x7f", `a\x00b\x08c\x7f`},
		{"C1 controls (NEL, CSI)", "a\u0085b\u009bc", `a\u0085b\u009bc`},
		{"bidi override", "abc\u202edcba\u202c", `abc\u202edcba\u202c`},
		{"bidi embeddings", "\u202a\u202b\u202d", `\u202a\u202b\u202d`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"zero width, BOM, soft hyphen", "a\u200bb\ufeffc\u00add", `a\u200bb\ufeffc\u00add`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"tag characters beyond the BMP", "x\U000e0041\U000e007f", `x\U000e0041\U000e007f`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"raw C1 byte is not UTF-8", "\x9b31m", `\x9b31m`},
		{"backslashes stay", `C:\path\x1b`, `C:\path\x1b`},
		{"non-breaking space passes", "a\u00a0b", "a\u00a0b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestStringLeavesNothingUnsafe: whatever goes in, what comes out is valid
// UTF-8 with no unsafe character.
func TestStringLeavesNothingUnsafe(t *testing.T) {
	out := String(Hostile)
	if !utf8.ValidString(out) {
		t.Fatalf("output is not UTF-8: %q", out)
	}
	for _, r := range out {
		if Unsafe(r) {
			t.Errorf("unsafe %U survived in %q", r, out)
		}
	}
	for _, want := range []string{"forged", "line", "link", "evil"} {
		if !strings.Contains(out, want) {
			t.Errorf("text %q lost from %q", want, out)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add(Hostile)
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if Unsafe(r) {
				t.Fatalf("String(%q) = %q keeps %U", s, out, r)
			}
		}
	})
}

// TestJSONWriter: JSON passed through the writer decodes to exactly the same
// value, and carries no raw unsafe character.
func TestJSONWriter(t *testing.T) {
	value := map[string]any{"name": Hostile, "list": []string{"\u202e", "\U000e0041", "\x7f", "ok"}}
	var plain bytes.Buffer
	if err := json.NewEncoder(&plain).Encode(value); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	jw := NewJSONWriter(&out)
	// Split the writes inside multi-byte characters, as a writer may.
	b := plain.Bytes()
	for i := 0; i < len(b); i += 3 {
		if _, err := jw.Write(b[i:min(i+3, len(b))]); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range out.String() {
		if r != '\n' && Unsafe(r) {
			t.Errorf("unsafe %U in JSON output %q", r, out.String())
		}
	}
	var got, want any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("escaped JSON does not parse: %v\n%s", err, out.String())
	}
	_ = json.Unmarshal(plain.Bytes(), &want)
	if !jsonEqual(got, want) {
		t.Errorf("escaped JSON means something else:\n got %q\nwant %q", out.String(), plain.String())
	}
	if !strings.Contains(out.String(), `\u202e`) || !strings.Contains(out.String(), `\udb40\udc41`) || !strings.Contains(out.String(), `\u007f`) {
		t.Errorf("escapes missing: %s", out.String())
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

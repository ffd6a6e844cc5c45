// Package termsafe makes text from outside (cards, catalogs, live MCP servers,
// the Registry) safe to print on a terminal. A terminal acts on control
// characters — ESC starts sequences that clear the screen, move the cursor,
// retitle the window or plant OSC 8 links; CR and LF forge lines — and bidi
// controls reorder what is shown, so none of them may reach it raw. Each such
// character is shown as a visible escape instead, and the rest of the text is
// left alone (accents, scripts and emoji print as they are).
//
// Escapes: \t, \n and \r by name; other C0 controls and DEL as \xNN; C1
// controls, bidi controls and other invisible format characters as \uNNNN
// (or \UNNNNNNNN beyond the BMP); bytes that are not UTF-8 as \xNN. A
// backslash already in the text is left as is: the escapes are for a reader,
// not for parsing back (--json is the exact form).
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// String returns s with every character a terminal could act on, or that
// hides or reorders text, replaced by a visible escape.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r > 0xffff && Unsafe(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean is the fast path: printable ASCII needs no work.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// Unsafe reports whether r must not reach a terminal raw: C0 and C1 controls
// and DEL (terminal commands, line breaks), Unicode format characters (bidi
// embeddings, overrides and isolates, LRM/RLM/ALM, zero-width characters,
// the BOM, soft hyphen, tag characters: they reorder or hide text), and the
// line and paragraph separators (some terminals break lines on them).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r < 0xa0:
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// NewJSONWriter returns a writer that passes JSON text to w with every unsafe
// character written as a \u escape. The JSON means exactly the same — such
// characters only ever occur inside strings, where the escape decodes to the
// same character — but a terminal it is printed on sees no bidi or C1
// control. (encoding/json already escapes C0 controls; invalid UTF-8 it
// replaces with U+FFFD, which is safe.)
func NewJSONWriter(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct {
	w       io.Writer
	partial []byte // an incomplete UTF-8 sequence at the end of the last write
	buf     []byte
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	in := p
	if len(j.partial) > 0 {
		in = append(j.partial, p...)
		j.partial = nil
	}
	out := j.buf[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if c < 0x7f {
			out = append(out, c)
			i++
			continue
		}
		if !utf8.FullRune(in[i:]) {
			j.partial = append([]byte(nil), in[i:]...)
			break
		}
		r, size := utf8.DecodeRune(in[i:])
		switch {
		case r == utf8.RuneError && size == 1, !Unsafe(r):
			out = append(out, in[i:i+size]...)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	j.buf = out
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

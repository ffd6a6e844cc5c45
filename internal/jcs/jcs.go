// Package jcs writes JSON in the JSON Canonicalization Scheme (RFC 8785):
// the one byte sequence a JSON value has, so that a hash or a signature
// over it does not depend on how the producer spaced, ordered or escaped
// it. The AI Catalog hashes an entry's inline data this way (its digest),
// and signs trust manifests this way.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotCanonicalizable is wrapped by every error Canonicalize returns: the
// input is not JSON, or is JSON that has no canonical form (a number
// outside IEEE 754 double precision, a member name twice in one object,
// text that is not UTF-8).
var ErrNotCanonicalizable = errors.New("no canonical json form")

// maxDepth bounds nesting: the input is a stranger's document.
const maxDepth = 1000

// Canonicalize returns the canonical form of the single JSON value in b.
func Canonicalize(b []byte) ([]byte, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: not utf-8", ErrNotCanonicalizable)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	if err := value(dec, &out, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more than one value", ErrNotCanonicalizable)
	}
	return out.Bytes(), nil
}

func value(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrNotCanonicalizable, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotCanonicalizable, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return array(dec, out, depth)
		}
		return object(dec, out, depth)
	case string:
		writeString(out, t)
	case json.Number:
		s, err := Number(string(t))
		if err != nil {
			return err
		}
		out.WriteString(s)
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

func array(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := value(dec, out, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return fmt.Errorf("%w: %w", ErrNotCanonicalizable, err)
	}
	out.WriteByte(']')
	return nil
}

type member struct {
	name  string
	key   []uint16 // the name in UTF-16 code units: the order RFC 8785 sorts by
	value []byte
}

func object(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotCanonicalizable, err)
		}
		name := tok.(string) // the decoder allows nothing else here
		var v bytes.Buffer
		if err := value(dec, &v, depth+1); err != nil {
			return err
		}
		members = append(members, member{name: name, key: utf16.Encode([]rune(name)), value: v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("%w: %w", ErrNotCanonicalizable, err)
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if m.name == members[i-1].name {
				return fmt.Errorf("%w: member %q twice in one object", ErrNotCanonicalizable, m.name)
			}
			out.WriteByte(',')
		}
		writeString(out, m.name)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

// writeString writes s as RFC 8785 says: only '"', '\' and the controls
// escaped, the five with short forms in those, the rest as \u00xx in
// lower case; everything else as itself, in UTF-8.
func writeString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"', c == '\\':
			out.WriteByte('\\')
			out.WriteByte(c)
		case c == '\b':
			out.WriteString(`\b`)
		case c == '\f':
			out.WriteString(`\f`)
		case c == '\n':
			out.WriteString(`\n`)
		case c == '\r':
			out.WriteString(`\r`)
		case c == '\t':
			out.WriteString(`\t`)
		case c < 0x20:
			out.WriteString(`\u00`)
			out.WriteByte(hex[c>>4])
			out.WriteByte(hex[c&0xf])
		default:
			out.WriteByte(c)
		}
	}
	out.WriteByte('"')
}

// Number writes a JSON number the way ECMAScript's Number.prototype.toString
// does for the IEEE 754 double it denotes (RFC 8785, section 3.2.2.3).
func Number(lit string) (string, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%w: number %s is not an IEEE 754 double", ErrNotCanonicalizable, lit)
	}
	return FormatDouble(f), nil
}

// FormatDouble is ECMAScript's Number.prototype.toString for a finite f.
func FormatDouble(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// The shortest digits that read back as f, as ECMAScript chooses them,
	// and the decimal exponent: f = 0.DIGITS × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d[.ddd]e±xx
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n, k := x+1, len(digits)
	var b strings.Builder
	b.WriteString(sign)
	switch {
	case k <= n && n <= 21:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", n-k))
	case 0 < n && n <= 21:
		b.WriteString(digits[:n])
		b.WriteByte('.')
		b.WriteString(digits[n:])
	case -6 < n && n <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -n))
		b.WriteString(digits)
	default:
		b.WriteString(digits[:1])
		if k > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if n-1 >= 0 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(n - 1))
	}
	return b.String()
}

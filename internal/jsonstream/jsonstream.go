// Package jsonstream writes a JSON array one element at a time, laid out as
// encoding/json (with SetIndent and HTML left unescaped) would lay out the
// whole array: a list of any length is written without being held.
package jsonstream

import (
	"bytes"
	"encoding/json"
	"io"
)

// Array writes the elements of one JSON array as they come.
type Array struct {
	w      io.Writer
	indent string // the array's own indentation inside its document
	buf    bytes.Buffer
	// compact is an element as the encoder writes it, before indenting.
	compact bytes.Buffer
	enc     *json.Encoder
	n       int
}

// New starts an array on w whose opening bracket stands at indent (""
// for a top-level array, "  " for a member of a top-level object).
func New(w io.Writer, indent string) *Array {
	a := &Array{w: w, indent: indent}
	a.enc = json.NewEncoder(&a.compact)
	a.enc.SetEscapeHTML(false)
	return a
}

// AddRaw writes one element given as compact JSON (as encoding/json
// writes it, no trailing newline), laid out as Add lays out its elements:
// for callers that encode without reflection.
func (a *Array) AddRaw(compact []byte) error {
	a.buf.Reset()
	if a.n == 0 {
		a.buf.WriteString("[\n" + a.indent + "  ")
	} else {
		a.buf.WriteString(",\n" + a.indent + "  ")
	}
	a.n++
	a.buf.Write(indent(a.buf.AvailableBuffer(), compact, a.indent+"  "))
	_, err := a.w.Write(a.buf.Bytes())
	return err
}

// Add writes one element: AddRaw of what the encoder writes, its newline
// dropped. An element that does not encode is not counted.
func (a *Array) Add(v any) error {
	a.compact.Reset()
	if err := a.enc.Encode(v); err != nil {
		return err
	}
	compact := a.compact.Bytes()
	return a.AddRaw(compact[:len(compact)-1])
}

// indent appends src, compact JSON as encoding/json writes it, laid out as
// json.Indent(dst, src, prefix, "  ") lays it out: an element per line, a
// space after each colon, and empty objects and arrays left as {} and [].
// Compact input needs no scanner (json.Indent's took a fifth of an
// export's CPU): outside strings, every byte is structure.
func indent(dst, src []byte, prefix string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Close writes the closing bracket (or "[]" for an empty array), with no
// newline after it.
func (a *Array) Close() error {
	end := "\n" + a.indent + "]"
	if a.n == 0 {
		end = "[]"
	}
	_, err := io.WriteString(a.w, end)
	return err
}

// Len is how many elements were written.
func (a *Array) Len() int { return a.n }

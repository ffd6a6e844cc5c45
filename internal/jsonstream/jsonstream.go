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
	enc    *json.Encoder
	n      int
}

// New starts an array on w whose opening bracket stands at indent (""
// for a top-level array, "  " for a member of a top-level object).
func New(w io.Writer, indent string) *Array {
	a := &Array{w: w, indent: indent}
	a.enc = json.NewEncoder(&a.buf)
	a.enc.SetEscapeHTML(false)
	a.enc.SetIndent(indent+"  ", "  ")
	return a
}

// Add writes one element.
func (a *Array) Add(v any) error {
	a.buf.Reset()
	if a.n == 0 {
		a.buf.WriteString("[\n" + a.indent + "  ")
	} else {
		a.buf.WriteString(",\n" + a.indent + "  ")
	}
	a.n++
	if err := a.enc.Encode(v); err != nil {
		return err
	}
	a.buf.Truncate(a.buf.Len() - 1) // the encoder's newline
	_, err := a.w.Write(a.buf.Bytes())
	return err
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

package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cardcrawl/cardcrawl/internal/termsafe"
)

// textOut is the one way human (non-JSON) output reaches stdout: aligned
// tables and lines of text. Nearly every string it prints comes from outside —
// cards, catalogs, live MCP servers, the Registry — so each cell and each
// argument goes through termsafe here, and nowhere else: a control or bidi
// character in a card shows as \x1b or \u202e instead of acting on the
// terminal, and a TAB or LF inside a cell cannot break the table's columns or
// forge a row. Formats are the program's own and are printed as written.
type textOut struct {
	w   io.Writer
	tw  *tabwriter.Writer // the table being written; nil outside a table
	n   int               // rows of the table written so far
	err error             // the first write error
}

func newTextOut(w io.Writer) *textOut { return &textOut{w: w} }

// table starts a table (ending any earlier one) with a header row.
func (o *textOut) table(header ...string) {
	o.endTable()
	o.tw = tabwriter.NewWriter(o.w, 0, 0, 2, ' ', 0)
	o.n = 0
	o.row(anySlice(header)...)
}

// row writes one table row; every cell is made terminal-safe.
func (o *textOut) row(cells ...any) {
	if o.tw == nil {
		o.table()
	}
	for i, c := range cells {
		sep := "\t"
		if i == len(cells)-1 {
			sep = "\n"
		}
		o.write(o.tw, safeText(c)+sep)
	}
	// tabwriter holds every row until a flush to align them; a table
	// streamed from the database is aligned a block of rows at a time, so
	// its memory stays bounded whatever its length.
	if o.n++; o.n%tableBlock == 0 && o.err == nil {
		if err := o.tw.Flush(); err != nil {
			o.err = err
		}
	}
}

// tableBlock is how many rows of a table are aligned together.
const tableBlock = 1000

// printf ends any table and prints a line of text. format is the program's
// own; every argument that is not a number or a bool is made terminal-safe
// before it is formatted.
func (o *textOut) printf(format string, args ...any) {
	o.endTable()
	safe := make([]any, len(args))
	for i, a := range args {
		safe[i] = safeArg(a)
	}
	o.write(o.w, fmt.Sprintf(format, safe...))
}

// flush ends any table and returns the first write error.
func (o *textOut) flush() error {
	o.endTable()
	return o.err
}

func (o *textOut) endTable() {
	if o.tw == nil {
		return
	}
	if err := o.tw.Flush(); err != nil && o.err == nil {
		o.err = err
	}
	o.tw = nil
}

func (o *textOut) write(w io.Writer, s string) {
	if o.err != nil {
		return
	}
	if _, err := io.WriteString(w, s); err != nil {
		o.err = err
	}
}

// safeArg keeps numbers and bools for their verbs (%d, %5.1f) and turns
// everything else into its terminal-safe text.
func safeArg(a any) any {
	switch a.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool:
		return a
	}
	return safeText(a)
}

// safeText is a value's terminal-safe text; bytes are text, not a list of
// numbers.
func safeText(a any) string {
	if b, ok := a.([]byte); ok {
		return termsafe.String(string(b))
	}
	return termsafe.String(fmt.Sprint(a))
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

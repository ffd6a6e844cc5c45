// Package failure is cardcrawl's one vocabulary of failure classes: the short
// names stored with every failed fetch, check and probe step, and what each
// one means to the code that reads it. As golang/pkgsite's derrors does, the
// meanings are decided once, in one table (table.go); nothing else keeps a
// list of classes. Adding a class is one entry there, and the tests refuse a
// class whose meanings are not all decided or that README does not list.
package failure

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Class names one way a fetch, check or probe step failed. The zero value
// (None) means success. Classes are stored verbatim in the database and in
// JSON, so their spelling is part of the program's contract.
type Class string

// Outcome is what one probe of an MCP endpoint came to; it is stored
// verbatim. Outcomes have their own table (outcomes, in table.go), and
// every Class names the Outcome a probe ends with when it meets that class.
type Outcome string

// Meaning is everything the program decides from a class.
type Meaning struct {
	// Transient: the failure may well pass by itself (the host was down,
	// slow or busy), so what was listed through the document is kept and it
	// is checked again later. Not transient: the answer is about the
	// document or the URL, and stands until someone changes it.
	Transient bool
	// Miss: the server said plainly that nothing is there.
	Miss bool
	// Retried: the fetch client sends the request once more after a
	// failure of this class, and then only when the connection dropped
	// before any answer (the program's one retry).
	Retried bool
	// Probe is the outcome of a probe that ends on this class.
	Probe Outcome
	// Text says what the class means, in one line for people (README,
	// help, summaries).
	Text string
}

// Of returns the meaning of c, and false when c is not a known class.
func Of(c Class) (Meaning, bool) {
	m, ok := table[c]
	return m, ok
}

// Known reports whether c is a class of the table.
func (c Class) Known() bool { _, ok := table[c]; return ok }

// Transient reports whether a failure of class c may pass by itself; see
// Meaning.Transient. Success and unknown classes are not transient.
func (c Class) Transient() bool { return table[c].Transient }

// Retried reports whether the fetch client retries a dropped connection
// of class c; see Meaning.Retried.
func (c Class) Retried() bool { return table[c].Retried }

// Text is c's one-line description ("" for an unknown class).
func (c Class) Text() string { return table[c].Text }

// ProbeOutcome is the outcome of a probe that ends on class c, and false
// when c is not a known class.
func (c Class) ProbeOutcome() (Outcome, bool) {
	m, ok := table[c]
	return m.Probe, ok
}

// Miss reports whether an answer of class c with HTTP status code status
// said that nothing is there: a 404, a "not found" page served as 200
// (soft_404), or a 410 Gone. 410 is the one meaning that depends on the
// status as well as the class: it shares http_4xx with the other 4xx codes,
// as stored rows always have, and unlike them it is a miss.
func Miss(c Class, status int) bool {
	return table[c].Miss || (c == HTTP4xx && status == statusGone)
}

const statusGone = 410

// Classes lists every class, sorted.
func Classes() []Class { return slices.Sorted(maps.Keys(table)) }

// Outcomes lists every probe outcome, sorted.
func Outcomes() []Outcome { return slices.Sorted(maps.Keys(outcomes)) }

// Known reports whether o is an outcome of the table.
func (o Outcome) Known() bool { _, ok := outcomes[o]; return ok }

// outcomeMeaning is one row of the outcome table.
type outcomeMeaning struct {
	// Text says what the outcome means, in one line for people.
	Text string
	// Words name the outcome as a directory's failure breakdown does
	// ("HTTP 4xx error", "could not connect"): short, plain, no class names.
	Words string
}

// Text is o's one-line description ("" for an unknown outcome).
func (o Outcome) Text() string { return outcomes[o].Text }

// Words is o in a directory's words, as `probes --summary` prints it ("" for
// an unknown outcome).
func (o Outcome) Words() string { return outcomes[o].Words }

// MarkdownTable renders the class table as README shows it.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| class | meaning | temporary | miss | retried | probe outcome |\n|---|---|---|---|---|---|\n")
	for _, c := range Classes() {
		b.WriteString(markdownRow(c) + "\n")
	}
	return b.String()
}

func markdownRow(c Class) string {
	m := table[c]
	miss := yesNo(m.Miss)
	if !m.Miss && Miss(c, statusGone) {
		miss = "410 only"
	}
	return fmt.Sprintf("| `%s` | %s | %s | %s | %s | `%s` |", c, m.Text, yesNo(m.Transient), miss, yesNo(m.Retried), m.Probe)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

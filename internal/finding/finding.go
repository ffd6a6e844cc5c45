// Package finding is the one shape every parser and validator uses to report
// what is wrong (or merely unusual) about a document, so that the store and the
// CLI can record and print findings from any source the same way.
package finding

import (
	"fmt"
	"slices"
)

// Severity says how much a finding matters to a consumer of the document.
type Severity string

const (
	// Error: the document (or the part of it named by Path) cannot be used as is.
	Error Severity = "error"
	// Warning: the document is usable, but deviates from its specification.
	Warning Severity = "warning"
	// Info: worth recording, not a deviation (for example a legacy spelling).
	Info Severity = "info"
)

// Finding is one observation about a document. Code is a short, stable,
// snake_case identifier that scripts can match on; Message is for people.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Path     string   `json:"path,omitempty"` // JSON pointer into the document, "" for the whole
	Message  string   `json:"message"`
}

// List is a convenience for building up findings in parsers.
type List []Finding

// Add appends a finding.
func (l *List) Add(sev Severity, code, path, msg string) {
	*l = append(*l, Finding{Severity: sev, Code: code, Path: path, Message: msg})
}

// HasError reports whether any finding is an error.
func (l List) HasError() bool {
	for _, f := range l {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// Has reports whether any finding has the code.
func (l List) Has(code string) bool {
	for _, f := range l {
		if f.Code == code {
			return true
		}
	}
	return false
}

// CodeUTF8BOM is the one code more than one parser emits (catalog and
// servercard), so it is defined here, with its one severity: a warning,
// because RFC 8259 forbids a byte order mark before JSON, though the
// document is read once it is skipped.
const CodeUTF8BOM = "utf8_bom"

// AddUTF8BOM records a leading byte order mark that was skipped.
func (l *List) AddUTF8BOM() {
	l.Add(Warning, CodeUTF8BOM, "", "the document starts with a UTF-8 byte order mark, which JSON forbids; ignored")
}

// CodeTruncated marks a list of findings cut at MaxPerDocument: a
// warning, since what was dropped is unknown beyond its count.
const CodeTruncated = "findings_truncated"

// MaxPerDocument is how many findings a validator keeps of one document.
// A document decides how many it earns (a card of 30,000 remotes earned
// 30,000, 3.4 MB as JSON), and they are stored with it, read again with
// every record it describes and shown on its pages; a real document has
// a few dozen.
const MaxPerDocument = 200

// Bound keeps at most MaxPerDocument findings of l: when there are more,
// the errors come first, then the warnings, then the rest (each in its
// order), and the last kept place goes to a CodeTruncated finding saying
// how many were dropped. A grade or verdict taken from the whole list
// stays true of the bounded one: HasError does not change.
func Bound(l List) List {
	if len(l) <= MaxPerDocument {
		return l
	}
	rank := func(s Severity) int {
		switch s {
		case Error:
			return 0
		case Warning:
			return 1
		}
		return 2
	}
	out := slices.Clone(l)
	slices.SortStableFunc(out, func(a, b Finding) int { return rank(a.Severity) - rank(b.Severity) })
	out = out[: MaxPerDocument-1 : MaxPerDocument-1]
	out.Add(Warning, CodeTruncated, "", fmt.Sprintf("%d findings; the first %d are kept, errors first", len(l), MaxPerDocument-1))
	return out
}

// maxCode bounds a code's length; the longest today has 29 bytes.
const maxCode = 64

// CheckCode returns an error naming param unless s is "" or has a code's
// form (IsCode): how a filter on codes checks what it is given.
func CheckCode(param, s string) error {
	if s != "" && !IsCode(s) {
		return fmt.Errorf("%s must be a finding code (snake_case, such as signature_verified), not %q", param, s)
	}
	return nil
}

// IsCode reports whether s has a code's form: snake_case (lower-case ASCII
// letters, digits and underscores, a letter first), at most 64 bytes. A
// filter on codes checks what it is given with it rather than against a
// list: newer rules add codes, and stored findings keep retired ones.
func IsCode(s string) bool {
	if s == "" || len(s) > maxCode || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

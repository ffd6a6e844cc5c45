// Package textcut shortens text that came from outside before it is kept:
// one rule for every place a hostile document could otherwise put
// megabytes (a finding's message, a probe's evidence, a kept DNS record,
// a reconciliation's differing value).
package textcut

import "unicode/utf8"

// Cut keeps s to at most n bytes, marking a cut with "…". It cuts before
// the character that would cross n, never inside one: half a UTF-8
// sequence would reach the store and every output as U+FFFD or, in text,
// as a stray byte.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

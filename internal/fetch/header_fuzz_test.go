package fetch

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzRetryAfter checks the Retry-After reader on any value and clock: the
// wait is never negative (a negative wait would retry at once, past every
// cap), nothing unreadable asks for a wait, and delay-seconds mean what
// they say — the longer the number, the longer the wait.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{
		// RFC 9110's two forms, and what servers send.
		"120", "0", "Fri, 31 Dec 1999 23:59:59 GMT", "Sun, 29 Nov 2026 12:05:00 GMT", "Sunday, 29-Nov-26 12:05:00 GMT",
		"Sun Nov 29 12:05:00 2026",
		// Hostile: signs, fractions, huge numbers, far dates, spaces.
		"-5", "+5", "1.5", "9223372037", "99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT", " 7 ", "0x10", "1e3",
	} {
		f.Add(s, int64(1795953600))
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		now := time.Unix(unix%(1<<40), 0).UTC()
		wait, ok := RetryAfter(v, now)
		if wait < 0 || (!ok && wait != 0) {
			t.Fatalf("RetryAfter(%q) = %v, %v", v, wait, ok)
		}
		digits := strings.TrimSpace(v)
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return
		}
		if !ok {
			t.Fatalf("delay-seconds %q unreadable", v)
		}
		if n, err := strconv.Atoi(digits); err == nil && n < 1<<30 && wait != time.Duration(n)*time.Second {
			t.Fatalf("RetryAfter(%q) = %v", v, wait)
		}
		if longer, _ := RetryAfter(digits+"0", now); longer < wait {
			t.Fatalf("RetryAfter(%q0) = %v, shorter than %q's %v", digits, longer, digits, wait)
		}
	})
}

// FuzzParseMaxAge checks the Cache-Control reader (the input's lines are
// the header's values): the freshness is never negative nor above the cap
// RFC 9111 names, and no-store or no-cache anywhere means zero.
func FuzzParseMaxAge(f *testing.F) {
	for _, s := range []string{
		"max-age=300", "public, max-age=3600, must-revalidate", "no-cache", "max-age=60\nno-store", "max-age=\"30\"",
		"max-age=0", "s-maxage=10, max-age=5", "max-age=99999999999999999999", "max-age=-1", "max-age=1e3", "MAX-AGE = 7",
		"max-age=5, max-age=6", ",,,=", "max-age", "No-Store",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		values := strings.Split(in, "\n")
		got := parseMaxAge(values)
		if got == nil {
			return
		}
		if *got < 0 || *got > maxAgeCap {
			t.Fatalf("parseMaxAge(%q) = %d", in, *got)
		}
		for _, d := range strings.FieldsFunc(strings.ToLower(in), func(r rune) bool { return r == ',' || r == '\n' }) {
			if name := strings.TrimSpace(d); (name == "no-store" || name == "no-cache") && *got != 0 {
				t.Fatalf("parseMaxAge(%q) = %d despite %s", in, *got, name)
			}
		}
	})
}

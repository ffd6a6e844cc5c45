package category

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// appendWords appends the lower-case words of s to dst. Words end at every
// rune that is not a letter or digit and at camelCase boundaries:
// "getFlightStatus" is get flight status, "HTTPServer" is http server,
// "listS3Buckets" is list s3 buckets, "search-hotels.v2" is search hotels v2.
// Digits stay with the letters before them (s3, v2).
func appendWords(dst []string, s string) []string {
	start := -1 // byte offset of the word being read, -1 between words
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				dst = append(dst, strings.ToLower(s[start:i]))
				start = -1
			}
			prev = r
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && camelBreak(prev, s[i+utf8.RuneLen(r):]) {
			dst = append(dst, strings.ToLower(s[start:i]))
			start = i
		}
		prev = r
	}
	if start >= 0 {
		dst = append(dst, strings.ToLower(s[start:]))
	}
	return dst
}

// camelBreak reports whether an upper-case rune, preceded by prev and followed
// by rest, starts a new word: after a lower-case letter or a digit (flightStatus,
// s3Bucket), or as the last capital of an acronym that a lower-case letter
// follows (HTTPServer).
func camelBreak(prev rune, rest string) bool {
	if unicode.IsLower(prev) || unicode.IsDigit(prev) {
		return true
	}
	if !unicode.IsUpper(prev) {
		return false
	}
	next, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsLower(next)
}

// bases returns the words a keyword must be for word to match it: the word
// itself and what it is with a plural ending taken off ("flights" → flight,
// "buses" → bus, "companies" → company). Keywords are written singular, so
// "flight" matches flight and flights without a stemmer's surprises ("news"
// stays news: there is no keyword "new").
func bases(word string, dst *[4]string) []string {
	out := dst[:0]
	out = append(out, word)
	n := len(word)
	if n < 3 || word[n-1] != 's' {
		return out
	}
	out = append(out, word[:n-1])
	if n >= 4 && word[n-2] == 'e' {
		out = append(out, word[:n-2])
		if word[n-3] == 'i' {
			out = append(out, word[:n-3]+"y")
		}
	}
	return out
}

// Package robots reads robots.txt files (RFC 9309): bytes in, the rules
// that apply to one crawler out. It does no I/O; discover fetches the file
// and decides what an unavailable or unreachable one means.
package robots

import (
	"bytes"
	"strings"
)

// MaxBytes is how much of a robots.txt file is read: RFC 9309 asks
// crawlers to parse at least 500 KiB, and what follows is ignored.
const MaxBytes = 500 << 10

// Path is where a host's robots.txt file is.
const Path = "/robots.txt"

// MaxRuleBytes bounds the patterns kept for one crawler, so what a crawl
// holds per host stays small whatever a file says. A file whose rules for
// the crawler (or for everyone) pass it is read as disallowing everything:
// a rule left out might have disallowed the path.
const MaxRuleBytes = 32 << 10

// Rules are the allow and disallow rules of the group that applies to one
// crawler. The zero value allows everything.
type Rules struct {
	rules []rule
	// none is true when nothing may be fetched (DisallowAll).
	none bool
}

type rule struct {
	allow   bool
	pattern string // percent-encoding normalised (normalise)
}

// DisallowAll is what an unreachable robots.txt means (RFC 9309 §2.3.1.4).
func DisallowAll() *Rules { return &Rules{none: true} }

// Parse reads the groups of a robots.txt file and keeps the rules of those
// whose user-agent lines name token (a product token, compared without
// regard to case), or, when none does, those of the "*" groups. A file
// with neither, or one that is not text, allows everything. Lines past
// MaxBytes are ignored.
func Parse(body []byte, token string) *Rules {
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var (
		mine, any kept
		named     bool // a group names token
		agents    []string
		inRules   bool // the current group's user-agent lines have ended
		group     []rule
	)
	flush := func() {
		for _, a := range agents {
			switch {
			case strings.EqualFold(a, token):
				mine.add(group)
				named = true
			case a == "*":
				any.add(group)
			}
		}
		agents, group, inRules = nil, nil, false
	}
	for line := range bytes.Lines(body) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		field := strings.ToLower(string(bytes.TrimSpace(key)))
		v := string(bytes.TrimSpace(value))
		switch field {
		case "user-agent":
			if inRules {
				flush()
			}
			// The product token is the value's first word: "Name/1.0" and
			// "Name (+url)" name Name, as crawlers commonly read them.
			agents = append(agents, Token(v))
		case "allow", "disallow":
			if len(agents) == 0 {
				continue // a rule outside any group
			}
			inRules = true
			if v == "" {
				continue // "Disallow:" with no path disallows nothing
			}
			group = append(group, rule{allow: field == "allow", pattern: normalise(v)})
		}
	}
	flush()
	k := any
	if named {
		k = mine
	}
	if k.over {
		return DisallowAll()
	}
	return &Rules{rules: k.rules}
}

// kept are the rules kept for one crawler, within MaxRuleBytes.
type kept struct {
	rules []rule
	bytes int
	over  bool // some were left out
}

func (k *kept) add(group []rule) {
	for _, r := range group {
		if k.bytes += len(r.pattern); k.bytes > MaxRuleBytes {
			k.over, k.rules = true, nil
			return
		}
		k.rules = append(k.rules, r)
	}
}

// Token is the product token a User-Agent value (or a user-agent line's)
// leads with: its leading run of letters, digits, "_" and "-", or "*".
func Token(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	end := strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	})
	if end < 0 {
		return v
	}
	return v[:end]
}

// Allowed says whether a URL's path and query (as sent: "/a/b?c") may be
// fetched. The longest matching pattern decides, an allow rule winning a
// tie; robots.txt itself is always allowed.
func (r *Rules) Allowed(pathQuery string) bool {
	if pathQuery == "" {
		pathQuery = "/"
	}
	if pathQuery == Path {
		return true
	}
	if r == nil {
		return true
	}
	if r.none {
		return false
	}
	p := normalise(pathQuery)
	best, allowed := -1, true
	for _, ru := range r.rules {
		if !match(ru.pattern, p) {
			continue
		}
		if n := len(ru.pattern); n > best || n == best && ru.allow {
			best, allowed = n, ru.allow
		}
	}
	return allowed
}

// match reports whether pattern matches the start of path: "*" stands for
// any run of characters, and a final "$" for the end of the path.
func match(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	if len(parts) == 1 {
		return !anchored || rest == ""
	}
	for i, part := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(rest, part)
		}
		j := strings.Index(rest, part)
		if j < 0 {
			return false
		}
		rest = rest[j+len(part):]
	}
	return true
}

// normalise percent-encodes the octets RFC 9309 compares encoded (outside
// printable US-ASCII) and upper-cases the hex digits of existing escapes,
// so "/ä", "/%c3%a4" and "/%C3%A4" compare equal.
func normalise(s string) string {
	var b strings.Builder
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte('%')
			b.WriteByte(upper(s[i+1]))
			b.WriteByte(upper(s[i+2]))
			i += 2
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func upper(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

package servercard

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// templateVar matches one {placeholder}: the same name syntax the schema's
// remote URL pattern accepts for a leading variable.
var templateVar = regexp.MustCompile(`\{([a-zA-Z_][a-zA-Z0-9_]*)\}`)

// IsTemplate reports whether raw contains at least one {name} placeholder.
func IsTemplate(raw string) bool {
	return templateVar.MatchString(raw)
}

// TemplateVars returns the placeholder names in raw, in order of first
// appearance, each once. Names are case-sensitive.
func TemplateVars(raw string) []string {
	var names []string
	seen := map[string]bool{}
	for _, m := range templateVar.FindAllStringSubmatch(raw, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	return names
}

// NormalizeURL returns the dedup key for a remote URL: two URLs that reach the
// same endpoint should give the same string. The rules:
//
//   - scheme and host are lower-cased; a non-ASCII host is converted to
//     punycode (IDNA lookup profile);
//   - the default port (443 for https, 80 for http) and an empty port are dropped;
//   - an empty path becomes "/", a trailing slash is removed from any other path
//     ("/mcp/" == "/mcp"), and "." and ".." segments are resolved;
//   - percent-escapes of unreserved characters are decoded and all other
//     escapes get upper-case hex digits, in path and query; raw spaces and
//     non-ASCII bytes are percent-encoded in both;
//   - the fragment is dropped, and so is an empty query ("?");
//   - the query is otherwise kept as written and NOT sorted: parameter order can
//     matter to a server, and cards that differ only in order are not seen in
//     practice, so sorting would risk merging distinct endpoints for no gain;
//   - user info is kept (it is reported by Check as remote_userinfo; dropping it
//     would silently merge what the card says are different things);
//   - {placeholders} survive untouched as templates, with the literal parts
//     around them normalised: "https://{Tenant}.Example.com/mcp/" becomes
//     "https://{Tenant}.example.com/mcp". A URL that starts with a placeholder
//     ("{baseUrl}/mcp/") keeps that prefix verbatim (spaces and non-ASCII
//     bytes percent-encoded, as in the query) and normalises the rest.
//
// Only http and https URLs with a host are normalised. For anything else it
// returns the trimmed input and an error; it never panics.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return s, errors.New("empty url")
	}
	if strings.HasPrefix(s, "{") {
		return normalizeLeadingTemplate(s)
	}
	var m masker
	masked, ok := m.mask(s)
	if !ok {
		return s, errors.New("url contains a brace that is not a {placeholder}")
	}
	u, err := url.Parse(masked)
	if err != nil {
		return s, fmt.Errorf("parse url: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return s, fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return s, errors.New("url has no host")
	}
	if m.inInternationalLabel(u.Hostname()) {
		// Punycode encodes a label as a whole, so a placeholder inside a
		// non-ASCII label has no normal form that filling it in would keep.
		return s, errors.New("url has a {placeholder} inside an internationalised host label")
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return s, err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return s, fmt.Errorf("bad port %q", port)
		}
		port = strconv.Itoa(n)
	}
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	if strings.Contains(host, ":") {
		// An IPv6 zone's "%" must be escaped again inside the brackets.
		b.WriteString("[" + strings.ReplaceAll(host, "%", "%25") + "]")
	} else {
		b.WriteString(host)
	}
	if port != "" {
		b.WriteString(":" + port)
	}
	b.WriteString(normalizePath(u.EscapedPath()))
	if q := normalizeEscapes(escapeRaw(u.RawQuery)); q != "" {
		b.WriteString("?" + q)
	}
	out, ok := m.unmask(b.String())
	if !ok {
		return s, errors.New("url template is ambiguous after normalisation")
	}
	return out, nil
}

// normalizeLeadingTemplate handles "{base}/path?query": the leading variable
// stands for scheme and authority, so only what follows it is normalised.
func normalizeLeadingTemplate(s string) (string, error) {
	loc := templateVar.FindStringIndex(s)
	if loc == nil || loc[0] != 0 {
		return s, errors.New("url starts with a brace that is not a {placeholder}")
	}
	end := strings.IndexAny(s, "/?#")
	if end < 0 {
		return s, nil
	}
	prefix, rest := s[:end], s[end:]
	var m masker
	masked, ok := m.mask(rest)
	if !ok {
		return s, errors.New("url contains a brace that is not a {placeholder}")
	}
	u, err := url.Parse("http://h.invalid" + masked)
	if err != nil {
		return s, fmt.Errorf("parse url: %w", err)
	}
	out := normalizePath(u.EscapedPath())
	if out == "/" && !strings.HasPrefix(rest, "/") {
		out = ""
	}
	if q := normalizeEscapes(escapeRaw(u.RawQuery)); q != "" {
		out += "?" + q
	}
	out, ok = m.unmask(out)
	if !ok {
		return s, errors.New("url template is ambiguous after normalisation")
	}
	return escapeRaw(prefix) + out, nil
}

// masker swaps each {name} for a token that url.Parse, lower-casing and
// escaping all leave alone, so templates survive normalisation verbatim.
type masker struct {
	prefix string
	vars   []string
}

func (m *masker) token(i int) string { return m.prefix + strconv.Itoa(i) + "x" }

// mask returns s with its placeholders replaced, or false when a brace is
// left that is not part of a {name} placeholder.
func (m *masker) mask(s string) (string, bool) {
	if !strings.ContainsAny(s, "{}") {
		return s, true
	}
	// The prefix must not occur in the input even after lower-casing, or
	// restoring would replace text that was never a placeholder.
	m.prefix = "cctmplx"
	for low := strings.ToLower(s); strings.Contains(low, m.prefix); {
		m.prefix += "q"
	}
	masked := templateVar.ReplaceAllStringFunc(s, func(v string) string {
		m.vars = append(m.vars, v)
		return m.token(len(m.vars) - 1)
	})
	return masked, !strings.ContainsAny(masked, "{}")
}

// unmask restores the placeholders, or reports false when a token does not
// occur exactly once (escape decoding manufactured a copy of one).
func (m *masker) unmask(s string) (string, bool) {
	// From the highest index, so token 1 never eats part of token 10.
	for i := len(m.vars) - 1; i >= 0; i-- {
		t := m.token(i)
		if strings.Count(s, t) != 1 {
			return s, false
		}
		s = strings.Replace(s, t, m.vars[i], 1)
	}
	return s, true
}

// inInternationalLabel reports whether a masked host has a placeholder and
// a non-ASCII character in one label (dots as written; IDNA may find more).
func (m *masker) inInternationalLabel(host string) bool {
	if len(m.vars) == 0 {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		if strings.Contains(label, m.prefix) && strings.ContainsFunc(label, func(r rune) bool { return r >= 0x80 }) {
			return true
		}
	}
	return false
}

// escapeRaw percent-encodes what url.Parse keeps raw in a query (and a
// leading template's prefix keeps as written) but a URL cannot hold raw:
// spaces and non-ASCII bytes. Kept raw, a trailing one was trimmed off when
// the key was normalised again, so normalising was not idempotent; encoded,
// "?q=a b" and "?q=a%20b" share a key, as a client sends both alike.
func escapeRaw(q string) string {
	if !strings.ContainsFunc(q, func(r rune) bool { return r == ' ' || r >= 0x80 }) {
		return q
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if c := q[i]; c == ' ' || c >= 0x80 {
			b.WriteString("%" + string(hex[c>>4]) + string(hex[c&15]))
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("url has no host")
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(h), nil
	}
	p, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return "", fmt.Errorf("idna host %q: %w", h, err)
	}
	return strings.ToLower(p), nil
}

// normalizePath applies escape normalisation, dot-segment removal and the
// trailing-slash rule to an escaped path.
func normalizePath(p string) string {
	p = removeDotSegments(normalizeEscapes(p))
	if p == "" {
		return "/"
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	return p
}

// removeDotSegments is RFC 3986 §5.2.4 on an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") && strings.HasPrefix(p, "/") {
		r = "/" + r
	}
	return r
}

// normalizeEscapes decodes %XX for unreserved characters (RFC 3986 §2.3) and
// upper-cases the hex digits of every other escape.
func normalizeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteString(strings.ToUpper(s[i+1 : i+3]))
		}
		i += 2
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

package catalog

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// RelAICatalog is the link relation type that points at a site's AI Catalog.
const RelAICatalog = "ai-catalog"

// Links finds AI Catalog locations advertised by a page: HTTP `Link:` headers
// with rel="ai-catalog" (RFC 8288: several links per header, several headers,
// rel with several space-separated values, quoted or not, case-insensitive)
// and HTML `<link rel="ai-catalog" href=…>` (rel token match, not substring;
// `<base href>` honoured). Hrefs are resolved against base, the URL the page
// was finally served from. The result is deduplicated, in order, headers
// first. Only http and https URLs are returned: nothing else can be fetched,
// and a relative href with no base cannot be resolved, so both are dropped.
// Unparseable HTML yields no links and never panics.
func Links(header http.Header, html []byte, base *url.URL) []string {
	var out []string
	seen := map[string]bool{}
	add := func(b *url.URL, href string) {
		u, ok := resolveHref(b, href)
		if !ok || seen[u] {
			return
		}
		seen[u] = true
		out = append(out, u)
	}
	for _, v := range header.Values("Link") {
		for _, l := range parseLinkHeader(v) {
			if hasRelToken(l.rel, RelAICatalog) {
				add(base, l.target)
			}
		}
	}
	for _, href := range htmlLinks(html, &base) {
		add(base, href)
	}
	return out
}

// resolveHref resolves href against base and keeps only absolute http(s)
// results.
func resolveHref(base *url.URL, href string) (string, bool) {
	href = strings.TrimSpace(href)
	if href == "" {
		return "", false
	}
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	if !u.IsAbs() {
		if base == nil || !base.IsAbs() {
			return "", false
		}
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String(), true
}

// hasRelToken reports whether the rel value (space-separated tokens) contains
// want, compared case-insensitively as RFC 8288 and HTML both require.
func hasRelToken(rel, want string) bool {
	for _, t := range strings.Fields(rel) {
		if strings.EqualFold(t, want) {
			return true
		}
	}
	return false
}

// htmlLinks returns the hrefs of <link rel="ai-catalog"> elements in document
// order. If the page has a <base href>, *base is replaced by it (resolved
// against the original), as browsers do for every relative URL on the page.
func htmlLinks(html []byte, base **url.URL) []string {
	if len(bytes.TrimSpace(html)) == 0 {
		return nil
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(html))
	if err != nil {
		return nil
	}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if u, err := url.Parse(strings.TrimSpace(href)); err == nil {
			if *base != nil {
				u = (*base).ResolveReference(u)
			}
			if u.IsAbs() {
				*base = u
			}
		}
	}
	var hrefs []string
	doc.Find("link[rel][href]").Each(func(_ int, s *goquery.Selection) {
		rel, _ := s.Attr("rel")
		if !hasRelToken(rel, RelAICatalog) {
			return
		}
		href, _ := s.Attr("href")
		hrefs = append(hrefs, href)
	})
	return hrefs
}

// headerLink is one link-value of a Link header: its target and the first rel
// parameter (RFC 8288 §3.3: later occurrences are ignored).
type headerLink struct {
	target string
	rel    string
}

// parseLinkHeader parses one Link header field value (RFC 8288 §3). It is
// forgiving: junk is skipped up to the next top-level comma and parsing
// carries on.
func parseLinkHeader(v string) []headerLink {
	var out []headerLink
	i := 0
	n := len(v)
	skipOWS := func() {
		for i < n && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
	}
	// skipToComma moves past the next comma outside quotes and angle
	// brackets, abandoning a malformed link-value.
	skipToComma := func() {
		for i < n {
			switch v[i] {
			case ',':
				i++
				return
			case '"':
				_, i = quoted(v, i)
			case '<':
				if j := strings.IndexByte(v[i:], '>'); j >= 0 {
					i += j + 1
				} else {
					i = n
				}
			default:
				i++
			}
		}
	}
	for i < n {
		for i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ',') {
			i++
		}
		if i >= n {
			break
		}
		if v[i] != '<' {
			skipToComma()
			continue
		}
		j := strings.IndexByte(v[i:], '>')
		if j < 0 {
			break
		}
		l := headerLink{target: v[i+1 : i+j]}
		i += j + 1
		relSeen := false
		for {
			skipOWS()
			if i >= n || v[i] == ',' {
				break
			}
			if v[i] != ';' {
				// Junk after a parameter: keep what was read so far, since
				// a lenient reading finds more real links than it invents.
				skipToComma()
				break
			}
			i++
			skipOWS()
			start := i
			for i < n && !strings.ContainsRune("=;, \t", rune(v[i])) {
				i++
			}
			name := strings.ToLower(v[start:i])
			skipOWS()
			var val string
			if i < n && v[i] == '=' {
				i++
				skipOWS()
				if i < n && v[i] == '"' {
					val, i = quoted(v, i)
				} else {
					start := i
					for i < n && !strings.ContainsRune(";, \t", rune(v[i])) {
						i++
					}
					val = v[start:i]
				}
			}
			if name == "rel" && !relSeen {
				l.rel, relSeen = val, true
			}
		}
		out = append(out, l)
	}
	return out
}

// quoted reads the quoted-string starting at v[i] == '"' and returns its
// unescaped content and the index just past it.
func quoted(v string, i int) (string, int) {
	var sb strings.Builder
	for i++; i < len(v); i++ {
		switch v[i] {
		case '\\':
			if i+1 < len(v) {
				i++
				sb.WriteByte(v[i])
			}
		case '"':
			return sb.String(), i + 1
		default:
			sb.WriteByte(v[i])
		}
	}
	return sb.String(), i
}

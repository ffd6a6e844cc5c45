package servercard

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// The links a card publishes — websiteUrl, repository.url, icons[].src — end
// up as links and images in whatever shows the card: a directory page, a
// client's UI, this program's feeds. A javascript: or vbscript: link runs
// code when clicked, and a data: URI can carry a whole page; they are not
// where a server's website or source lives.
//
// Grade effect, and why:
//
//   - A link whose scheme is not http or https (javascript:, data:,
//     vbscript:, file:…; a browser strips leading white space and control
//     characters and ignores TAB and LF inside, so " javascript:" and
//     "java\tscript:" count too) is an error, url_scheme_not_allowed. The
//     schema only asks for "format": "uri", which a javascript: URI
//     satisfies, but "the server's homepage" or "the source code" it is not;
//     and a card carrying one is broken or hostile, not one to call
//     conformant. It is fixable (near_conformant at best): dropping the link
//     loses nothing a client needs to connect.
//   - An icon follows the card schema's own rule: "an HTTP/HTTPS URL or a
//     data: URI with Base64-encoded image data". Anything else breaks that
//     rule: url_scheme_not_allowed, so the card cannot be conformant.
//   - An http: or base64 image data: icon is within the card schema's rule
//     and keeps the grade, but the Registry's server.json schema (which the
//     feed's Registry-shaped JSON claims) says icons must be HTTPS, and an
//     http image on an https page is mixed content: icon_not_https, a
//     warning, and the feed leaves the icon out.
//   - A link that is no absolute URI at all ("example.com", "/docs") is the
//     mistake it always was: invalid_uri, a warning.
//
// Whatever the finding, the feed republishes a link only when IsWebURL holds.

// Finding codes of the link checks.
const (
	CodeURLSchemeNotAllowed = "url_scheme_not_allowed" // error (fixable): a link that is not http(s); an icon neither http(s) nor a base64 image
	CodeIconNotHTTPS        = "icon_not_https"         // warning: http: or data: icon; the card schema allows it, the feed leaves it out
)

// IsWebURL reports whether s may be republished as a link: an absolute http
// or https URL with a host, written without white space or control
// characters (which browsers strip or skip, so that what they follow is not
// what was checked).
func IsWebURL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// IsHTTPSURL is IsWebURL for https only: what an icon must be to be
// republished.
func IsHTTPSURL(s string) bool {
	return IsWebURL(s) && strings.EqualFold(s[:len("https:")], "https:")
}

// linkScheme is the lower-cased scheme a browser would see in s, after
// dropping leading and trailing C0 controls and spaces and every TAB, CR
// and LF (the WHATWG URL parser's first steps); "" when s has none.
func linkScheme(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return ""
	}
	for j, c := range s[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return strings.ToLower(s[:i])
}

// isBase64Image reports whether s is a data: URI of base64 image data, the
// only data: form the card schema allows for an icon.
func isBase64Image(s string) bool {
	rest, ok := cutPrefixFold(s, "data:")
	if !ok {
		return false
	}
	meta, _, ok := strings.Cut(rest, ",")
	if !ok {
		return false
	}
	mediaType, _, _ := strings.Cut(meta, ";")
	return strings.HasPrefix(strings.ToLower(mediaType), "image/") && strings.HasSuffix(strings.ToLower(meta), ";base64")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}

// checkLink adds the findings for one link member (absent or not a string:
// nothing here; the schema reports the type). icon selects the icon rule.
func checkLink(raw json.RawMessage, path string, icon bool, out *finding.List) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return
	}
	scheme := linkScheme(s)
	switch {
	case scheme == "https" || scheme == "http" && !icon:
	case scheme == "http":
		out.Add(finding.Warning, CodeIconNotHTTPS, path, fmt.Sprintf("icon %q is plain http: the card schema allows it, but the Registry's schema wants https, so the feed leaves it out", clip(s)))
	case icon && scheme == "data" && isBase64Image(strings.TrimSpace(s)):
		out.Add(finding.Warning, CodeIconNotHTTPS, path, "icon is a data: URI: the card schema allows base64 image data, but the Registry's schema wants https, so the feed leaves it out")
	case icon && scheme != "":
		out.Add(finding.Error, CodeURLSchemeNotAllowed, path, fmt.Sprintf("icon %q is neither an http(s) URL nor a data: URI of base64 image data", clip(s)))
		return
	case scheme != "":
		out.Add(finding.Error, CodeURLSchemeNotAllowed, path, fmt.Sprintf("%q is a %s: link, not an http(s) URL", clip(s), scheme))
		return
	}
	if u, err := url.Parse(s); err != nil || !u.IsAbs() {
		out.Add(finding.Warning, CodeInvalidURI, path, fmt.Sprintf("%q is not an absolute URI", clip(s)))
	}
}

// IsWebRemoteURL reports whether a remote's URL may be republished: a web
// URL once its {placeholders} are filled in, or the schema's form that
// starts with a placeholder ("{baseUrl}/mcp"), written without white space
// or control characters.
func IsWebRemoteURL(s string) bool {
	filled := templateVar.ReplaceAllString(s, "x")
	if strings.HasPrefix(s, "{") && IsTemplate(s) {
		return IsWebURL("https://" + filled)
	}
	return IsWebURL(filled)
}

// DropUnsafeLinks removes from a card, or a server.json (the two share
// these types), the links a directory does not republish: a website or
// repository that is not a web URL (IsWebURL), an icon that is not https
// (IsHTTPSURL), a remote whose URL is not a web URL (IsWebRemoteURL).
func DropUnsafeLinks(website *string, repo **Repository, icons *[]Icon, remotes *[]Remote) {
	if !IsWebURL(*website) {
		*website = ""
	}
	if *repo != nil && !IsWebURL((*repo).URL) {
		*repo = nil
	}
	*icons = slices.DeleteFunc(*icons, func(ic Icon) bool { return !IsHTTPSURL(ic.Src) })
	*remotes = slices.DeleteFunc(*remotes, func(rm Remote) bool { return !IsWebRemoteURL(rm.URL) })
}

// Republished decodes a stored card as a directory republishes it: what
// decodes is kept (a card that does not decode is an empty one), without
// the links DropUnsafeLinks drops. The feed's Registry JSON and AI Catalog
// republish it, and the store keeps the AI Catalog's copy of it.
func Republished(raw string) *Card {
	var c Card
	_ = json.Unmarshal([]byte(raw), &c)
	return Republish(&c)
}

// Republish is Republished for a card already decoded: it drops the links
// in place (the icons' and remotes' arrays included) and returns c.
func Republish(c *Card) *Card {
	DropUnsafeLinks(&c.WebsiteURL, &c.Repository, &c.Icons, &c.Remotes)
	return c
}

package servercard

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// Finding codes this package emits besides "schema_<keyword>". They are stable:
// the store and scripts match on them.
const (
	CodeInvalidJSON             = "invalid_json"              // error: bytes are not JSON
	CodeNotObject               = "not_object"                // error: JSON, but not an object
	CodeUTF8BOM                 = finding.CodeUTF8BOM         // warning: leading byte order mark, ignored
	CodeSchemaMissing           = "schema_missing"            // error (fixable): no $schema
	CodeSchemaWrong             = "schema_wrong"              // error (fixable): $schema is not SchemaURL
	CodeSchemaServerJSON        = "schema_server_json"        // error (fixable): $schema is a Registry server.schema.json
	CodeVersionRange            = "version_range"             // error (fixable): version is a range or "latest"
	CodeLegacyShape             = "legacy_shape"              // error: SEP-1649-era or ad-hoc shape
	CodeNoRemotes               = "no_remotes"                // warning: no remotes, nothing to connect to
	CodeNoUsableRemote          = "no_usable_remote"          // warning: remotes present, none usable
	CodeRemoteTemplated         = "remote_templated"          // info: remote URL has {placeholders}
	CodeRemoteTemplateUndefined = "remote_template_undefined" // warning: a {placeholder} has no entry in variables
	CodeRemotePlainHTTP         = "remote_plain_http"         // warning: http:// remote
	CodeRemoteUserinfo          = "remote_userinfo"           // warning: user@ in a remote URL
	CodeRemoteNonPublicAddress  = "remote_non_public_address" // warning: host is an IP literal outside public address space
	CodeRemoteURLInvalid        = "remote_url_invalid"        // warning: matches the schema pattern but cannot be normalised
	CodeRemoteDuplicate         = "remote_duplicate"          // info: same type and normalised URL twice
	CodeSecretHeaderValue       = "secret_header_value"       // warning: isSecret header with a literal value
	CodeSecretVariableValue     = "secret_variable_value"     // warning: isSecret URL variable with a literal value
	CodeInvalidURI              = "invalid_uri"               // warning: websiteUrl, repository.url or icon src is not an absolute URI
	CodeNonstandardField        = "nonstandard_field"         // info: top-level member the card schema does not define
	CodeInternalError           = "internal_error"            // error: the validator itself failed on this input
)

// remoteURL is the schema's pattern for Remote.url.
var remoteURL = regexp.MustCompile(`^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$`)

// versionRange recognises what the Registry's validator calls
// version-looks-like-range, plus the reserved "latest":
// ^1.2.3, ~1.2.3, >=1.2.3, <2, =1.0, 1.x, 1.2.*, *, 1.2.3 - 2.0.0, 1.2 || 1.3.
var versionRange = regexp.MustCompile(`(?i)^\s*(?:[\^~<>=]|latest\s*$)|\|\||\s-\s|(?:^|\.)[x*](?:\.|$)`)

// cardFields are the top-level members the v1 schema defines.
var cardFields = map[string]bool{
	"$schema": true, "name": true, "version": true, "description": true, "title": true,
	"websiteUrl": true, "repository": true, "icons": true, "remotes": true, "_meta": true,
}

// legacyMarkers are members of pre-v1 "MCP manifest" shapes (SEP-1649's
// /.well-known/mcp.json, ad-hoc cards such as {name,url,provider,authentication}).
var legacyMarkers = []string{
	"serverInfo", "transports", "transport", "endpoints", "endpoint", "authentication",
	"mcpVersion", "protocolVersion", "capabilities", "tools", "url", "serverUrl", "provider",
}

// IsVersionRange reports whether v is a version range (or "latest") rather
// than one version; the SDK validators reject such cards.
func IsVersionRange(v string) bool { return versionRange.MatchString(v) }

// IsUsableRemote reports whether r names something a client could connect to:
// a known transport and a URL the schema accepts (http(s) or a template).
func IsUsableRemote(r Remote) bool {
	return (r.Type == TransportStreamableHTTP || r.Type == TransportSSE) && remoteURL.MatchString(r.URL)
}

func detectShape(obj map[string]json.RawMessage, c *Card) string {
	switch {
	case c.Schema == SchemaURL:
		return ShapeCard
	case strings.HasSuffix(c.Schema, "/server.schema.json"):
		return ShapeServerJSON
	case strings.HasSuffix(c.Schema, "/server-card.schema.json"):
		return ShapeCard
	}
	if _, ok := obj["remotes"]; !ok {
		for _, k := range legacyMarkers {
			if _, ok := obj[k]; ok {
				return ShapeLegacy
			}
		}
	}
	if _, ok := obj["packages"]; ok {
		return ShapeServerJSON
	}
	for k := range obj {
		if cardFields[k] {
			return ShapeCard
		}
	}
	return ShapeUnknown
}

// semantic adds the findings the schema cannot express.
func semantic(obj map[string]json.RawMessage, c *Card, shape string, out *finding.List) {
	checkSchemaMember(obj, c, out)
	if shape == ShapeLegacy {
		out.Add(finding.Error, CodeLegacyShape, "", "document has a pre-v1 shape (serverInfo/transports/endpoints/url…), not a Server Card")
	}
	if c.Version != "" && IsVersionRange(c.Version) {
		out.Add(finding.Error, CodeVersionRange, "/version", fmt.Sprintf("version %q is a range, not a single version", c.Version))
	}
	checkLink(obj["websiteUrl"], "/websiteUrl", false, out)
	if raw, ok := obj["repository"]; ok {
		var r map[string]json.RawMessage
		if json.Unmarshal(raw, &r) == nil {
			checkLink(r["url"], "/repository/url", false, out)
		}
	}
	for i, raw := range rawArray(obj["icons"]) {
		var ic map[string]json.RawMessage
		if json.Unmarshal(raw, &ic) == nil {
			checkLink(ic["src"], "/icons/"+strconv.Itoa(i)+"/src", true, out)
		}
	}
	checkRemotes(obj, out)

	var extra []string
	for k := range obj {
		if !cardFields[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		out.Add(finding.Info, CodeNonstandardField, "/"+escapePointer(k), fmt.Sprintf("member %q is not part of the Server Card schema (allowed, ignored)", k))
	}
}

func checkSchemaMember(obj map[string]json.RawMessage, c *Card, out *finding.List) {
	raw, ok := obj["$schema"]
	switch {
	case !ok:
		out.Add(finding.Error, CodeSchemaMissing, "/$schema", "$schema is missing; a v1 card must name "+SchemaURL)
	case c.Schema == SchemaURL:
	case strings.HasSuffix(c.Schema, "/server.schema.json"):
		out.Add(finding.Error, CodeSchemaServerJSON, "/$schema", fmt.Sprintf("$schema %q is the Registry's server.json schema, not the Server Card schema", c.Schema))
	case c.Schema == "" && string(raw) != `""`:
		out.Add(finding.Error, CodeSchemaWrong, "/$schema", fmt.Sprintf("$schema is %s, not a string", clip(string(raw))))
	default:
		out.Add(finding.Error, CodeSchemaWrong, "/$schema", fmt.Sprintf("$schema is %q, want %q", clip(c.Schema), SchemaURL))
	}
}

func checkRemotes(obj map[string]json.RawMessage, out *finding.List) {
	items := rawArray(obj["remotes"])
	if len(items) == 0 {
		out.Add(finding.Warning, CodeNoRemotes, "/remotes", "card lists no remotes: nothing to connect to")
		return
	}
	usable := 0
	seen := map[string]int{}
	for i, raw := range items {
		r, ok := decodeRemote(raw)
		if !ok {
			continue // the schema reports a remote that is not an object
		}
		base := "/remotes/" + strconv.Itoa(i)
		if !IsUsableRemote(r) {
			continue
		}
		usable++
		if IsTemplate(r.URL) {
			out.Add(finding.Info, CodeRemoteTemplated, base+"/url", fmt.Sprintf("remote URL %q is a template", clip(r.URL)))
			for _, name := range TemplateVars(r.URL) {
				if _, ok := r.Variables[name]; !ok {
					out.Add(finding.Warning, CodeRemoteTemplateUndefined, base+"/url", fmt.Sprintf("placeholder {%s} has no entry in variables", name))
				}
			}
		}
		if strings.HasPrefix(strings.ToLower(r.URL), "http://") {
			out.Add(finding.Warning, CodeRemotePlainHTTP, base+"/url", "remote uses plain http")
		}
		if hasUserinfo(r.URL) {
			out.Add(finding.Warning, CodeRemoteUserinfo, base+"/url", "remote URL carries user info (user@host)")
		}
		if ip, ok := literalIP(r.URL); ok && !publicIP(ip) {
			out.Add(finding.Warning, CodeRemoteNonPublicAddress, base+"/url",
				fmt.Sprintf("remote points at %s, which is not a public address (loopback, private, link-local or cloud metadata); a public card must not", ip))
		}
		key, err := NormalizeURL(r.URL)
		if err != nil {
			out.Add(finding.Warning, CodeRemoteURLInvalid, base+"/url", fmt.Sprintf("remote URL cannot be normalised: %v", err))
		}
		key = r.Type + " " + key
		if prev, dup := seen[key]; dup {
			out.Add(finding.Info, CodeRemoteDuplicate, base, fmt.Sprintf("same type and URL as /remotes/%d", prev))
		} else {
			seen[key] = i
		}
		for j, h := range r.Headers {
			hp := base + "/headers/" + strconv.Itoa(j)
			if literalSecret(h.Input) {
				out.Add(finding.Warning, CodeSecretHeaderValue, hp+"/value", fmt.Sprintf("secret header %q has a literal value in a public card", h.Name))
			}
			for _, name := range sortedKeys(h.Variables) {
				if literalSecret(h.Variables[name]) {
					out.Add(finding.Warning, CodeSecretHeaderValue, hp+"/variables/"+escapePointer(name)+"/value",
						fmt.Sprintf("secret variable %q of header %q has a literal value in a public card", name, h.Name))
				}
			}
		}
		for _, name := range sortedKeys(r.Variables) {
			if literalSecret(r.Variables[name]) {
				out.Add(finding.Warning, CodeSecretVariableValue, base+"/variables/"+escapePointer(name)+"/value",
					fmt.Sprintf("secret URL variable %q has a literal value in a public card", name))
			}
		}
	}
	if usable == 0 {
		out.Add(finding.Warning, CodeNoUsableRemote, "/remotes", "no remote has a known transport and a valid URL")
	}
}

// literalSecret: a secret with a fixed value that is not just a template is a
// credential published to the world.
func literalSecret(in Input) bool {
	if !in.IsSecret || in.Value == "" {
		return false
	}
	return templateVar.ReplaceAllString(in.Value, "") == in.Value
}

func hasUserinfo(u string) bool {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "@")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// clip keeps hostile documents from putting megabytes into a finding
// message.
func clip(s string) string { return textcut.Cut(s, 200) }

// fixablePrefixes are the members whose schema errors a consumer can repair or
// ignore without guessing at the server's identity or endpoints.
var fixablePrefixes = []string{"/description", "/title", "/websiteUrl", "/icons", "/repository", "/_meta"}

func fixable(f finding.Finding) bool {
	switch f.Code {
	case CodeSchemaMissing, CodeSchemaWrong, CodeSchemaServerJSON, CodeVersionRange:
		return true
	case CodeURLSchemeNotAllowed:
		return true // a link or icon: dropping it loses nothing a client needs (see links.go)
	}
	if !strings.HasPrefix(f.Code, "schema_") {
		return false
	}
	for _, p := range fixablePrefixes {
		if f.Path == p || strings.HasPrefix(f.Path, p+"/") {
			return true
		}
	}
	return false
}

func grade(c *Card, shape string, schemaValid bool, fs finding.List) Grade {
	if c == nil || shape == ShapeLegacy {
		return NonConformant
	}
	if schemaValid && !fs.HasError() {
		return Conformant
	}
	if !slices.ContainsFunc(c.Remotes, IsUsableRemote) {
		return NonConformant
	}
	for _, f := range fs {
		if f.Severity == finding.Error && !fixable(f) {
			return NonConformant
		}
	}
	return NearConformant
}

// literalIP returns the host of a URL when it is written as an IP address.
func literalIP(raw string) (netip.Addr, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return netip.Addr{}, false
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return ip.Unmap(), err == nil
}

// publicIP is a coarse check for a card author's mistake (the fetch guard
// is the real gate): everything but global unicast, and the private,
// CGNAT and metadata ranges within it, is not public.
func publicIP(ip netip.Addr) bool {
	if !ip.IsGlobalUnicast() || ip.IsPrivate() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),  // CGNAT
	netip.MustParsePrefix("169.254.0.0/16"), // link-local, cloud metadata
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
}

package probe

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// challenge is one parsed WWW-Authenticate challenge; parameter names are
// lower-cased.
type challenge struct {
	Scheme string
	Params map[string]string
}

// parseChallenges parses WWW-Authenticate values (RFC 9110 §11.6.1): several
// challenges may share a header, separated by commas, and quoted values may
// contain commas. Malformed input yields what could be read.
func parseChallenges(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		s := v
		var cur *challenge
		afterScheme := false
		for {
			s = strings.TrimLeft(s, " \t")
			if strings.HasPrefix(s, ",") {
				afterScheme = false
				s = s[1:]
				continue
			}
			if s == "" {
				break
			}
			tok, rest := readToken(s)
			if tok == "" {
				// Skip a character we cannot read rather than loop forever.
				s = s[1:]
				continue
			}
			after := strings.TrimLeft(rest, " \t")
			if cur != nil && strings.HasPrefix(after, "=") && !strings.HasPrefix(after, "==") {
				if val := strings.TrimLeft(after[1:], " \t"); val != "" && val[0] != ',' {
					pv, rest2 := readValue(val)
					cur.Params[strings.ToLower(tok)] = pv
					s, afterScheme = rest2, false
					continue
				}
			}
			if afterScheme {
				// token68 (such as Basic's base64 blob): nothing to keep.
				s, afterScheme = strings.TrimLeft(after, "="), false
				continue
			}
			out = append(out, challenge{Scheme: strings.ToLower(tok), Params: map[string]string{}})
			cur = &out[len(out)-1]
			s, afterScheme = rest, true
		}
	}
	return out
}

func readToken(s string) (string, string) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

func readValue(s string) (string, string) {
	if !strings.HasPrefix(s, `"`) {
		return readToken(s)
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:]
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// docResult is one fetched metadata document.
type docResult struct {
	Status      int
	ContentType string
	Body        []byte
	Class       string // failure class, "" when a response came back
	Err         error
}

// docGetter fetches a small document anonymously under the client's guard.
type docGetter func(ctx context.Context, rawURL string) docResult

// metadataMaxBytes caps one OAuth metadata document.
const metadataMaxBytes = 256 << 10

// auth records what a 401/403 says about logging in, and follows it to the
// protected-resource and authorization-server metadata when a getter is set.
func (r *run) auth(ctx context.Context, rep reply) {
	info := &AuthInfo{Status: rep.status}
	r.res.Auth = info
	values := rep.header.Values("WWW-Authenticate")
	info.Challenge = len(values) > 0
	chs := parseChallenges(values)
	var ch *challenge
	for i := range chs {
		if chs[i].Scheme == "bearer" {
			ch = &chs[i]
			break
		}
	}
	if ch == nil && len(chs) > 0 {
		ch = &chs[0]
	}
	if ch != nil {
		info.Scheme = ch.Scheme
		info.ResourceMetadataURL = textcut.Cut(ch.Params["resource_metadata"], 2048)
		info.Scope = textcut.Cut(ch.Params["scope"], 512)
		info.Error = textcut.Cut(ch.Params["error"], 64)
		info.ErrorDescription = textcut.Cut(ch.Params["error_description"], 300)
	}
	info.PointsToOAuthMetadata = info.ResourceMetadataURL != ""
	if r.p.getDoc == nil {
		return
	}
	var candidates []string
	if info.ResourceMetadataURL != "" {
		candidates = []string{info.ResourceMetadataURL}
	} else {
		candidates = wellKnownPRM(r.url)
	}
	for _, c := range candidates {
		doc, ok := r.getJSON(ctx, "protected-resource-metadata", c)
		if !ok {
			continue
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
			BearerMethods        []string `json:"bearer_methods_supported"`
			ResourceName         string   `json:"resource_name"`
		}
		if json.Unmarshal(doc, &prm) != nil {
			continue
		}
		info.PointsToOAuthMetadata = true
		info.ProtectedResource = &ProtectedResourceInfo{
			URL:                  c,
			Resource:             textcut.Cut(prm.Resource, 2048),
			ResourceMatches:      sameResource(prm.Resource, r.url),
			AuthorizationServers: capStrings(prm.AuthorizationServers, 10, 2048),
			ScopesSupported:      capStrings(prm.ScopesSupported, 50, 128),
			BearerMethods:        capStrings(prm.BearerMethods, 5, 32),
			ResourceName:         textcut.Cut(prm.ResourceName, 200),
		}
		break
	}
	if pr := info.ProtectedResource; pr != nil && len(pr.AuthorizationServers) > 0 {
		info.AuthorizationServer = r.authServer(ctx, pr.AuthorizationServers[0])
	}
}

// authServer fetches the issuer's metadata: RFC 8414 first, then OpenID
// Connect, in the order the MCP authorization spec lists.
func (r *run) authServer(ctx context.Context, issuer string) *AuthServerInfo {
	for _, c := range authServerMetadataURLs(issuer) {
		doc, ok := r.getJSON(ctx, "authorization-server-metadata", c.url)
		if !ok {
			continue
		}
		var m struct {
			Issuer                string   `json:"issuer"`
			RegistrationEndpoint  string   `json:"registration_endpoint"`
			CIMD                  bool     `json:"client_id_metadata_document_supported"`
			CodeChallengeMethods  []string `json:"code_challenge_methods_supported"`
			ScopesSupported       []string `json:"scopes_supported"`
			AuthorizationEndpoint string   `json:"authorization_endpoint"`
		}
		if json.Unmarshal(doc, &m) != nil {
			continue
		}
		return &AuthServerInfo{
			URL:                      c.url,
			Source:                   c.source,
			Issuer:                   textcut.Cut(m.Issuer, 2048),
			IssuerMatches:            m.Issuer == issuer,
			DynamicRegistration:      m.RegistrationEndpoint != "",
			ClientIDMetadataDocument: m.CIMD,
			PKCES256:                 slices.Contains(m.CodeChallengeMethods, "S256"),
			ScopesSupported:          capStrings(m.ScopesSupported, 50, 128),
		}
	}
	return nil
}

// getJSON fetches one metadata document and records the exchange; only a
// 200 with a JSON object counts.
func (r *run) getJSON(ctx context.Context, step, raw string) ([]byte, bool) {
	res := r.res
	ex := Exchange{Step: step, Method: http.MethodGet, URL: textcut.Cut(raw, 2048)}
	if reason := checkTarget(raw); reason != "" {
		ex.Error, ex.Detail = OutcomeBlocked, reason
		res.Evidence = append(res.Evidence, ex)
		return nil, false
	}
	start := r.p.opts.Now()
	d := r.p.getDoc(ctx, raw)
	res.RoundTrips++
	ex.LatencyMs = r.p.sinceMs(start)
	ex.Status, ex.ContentType, ex.Error = d.Status, d.ContentType, d.Class
	if d.Err != nil {
		ex.Detail = textcut.Cut(d.Err.Error(), 300)
	}
	res.Evidence = append(res.Evidence, ex)
	if d.Status != http.StatusOK || d.Class != "" {
		return nil, false
	}
	b := []byte(strings.TrimSpace(string(d.Body)))
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		res.Evidence[len(res.Evidence)-1].Error = "not_json"
		return nil, false
	}
	return b, true
}

// wellKnownPRM lists the RFC 9728 locations for an endpoint: the path form,
// then the root.
func wellKnownPRM(endpoint string) []string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil
	}
	root := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/.well-known/oauth-protected-resource"}
	var out []string
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		withPath := root
		withPath.Path += u.Path
		out = append(out, withPath.String())
	}
	return append(out, root.String())
}

type metaURL struct{ url, source string }

// authServerMetadataURLs builds the discovery URLs for an issuer: for
// https://as.example/tenant, the RFC 8414 and OpenID forms with the path
// inserted after the well-known segment, then OpenID's appended form.
func authServerMetadataURLs(issuer string) []metaURL {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	mk := func(p string) string {
		v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}
		return v.String()
	}
	if path == "" {
		return []metaURL{
			{mk("/.well-known/oauth-authorization-server"), "oauth"},
			{mk("/.well-known/openid-configuration"), "openid"},
		}
	}
	return []metaURL{
		{mk("/.well-known/oauth-authorization-server" + path), "oauth"},
		{mk("/.well-known/openid-configuration" + path), "openid"},
		{mk(path + "/.well-known/openid-configuration"), "openid"},
	}
}

// sameResource compares the PRM resource with the endpoint, ignoring a
// trailing slash and the case of scheme and host.
func sameResource(resource, endpoint string) bool {
	a, err1 := url.Parse(resource)
	b, err2 := url.Parse(endpoint)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) &&
		strings.TrimSuffix(a.Path, "/") == strings.TrimSuffix(b.Path, "/")
}

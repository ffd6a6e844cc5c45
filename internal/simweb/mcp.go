package simweb

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// MCP server kinds accepted by MCPHandler and by SIMWEB-MCP fixtures.
const (
	// KindGoSDKStateful is go-sdk's Streamable HTTP handler with sessions,
	// answering POSTs with SSE streams.
	KindGoSDKStateful = "go-sdk-stateful"
	// KindGoSDKJSON is go-sdk with sessions, answering with application/json.
	KindGoSDKJSON = "go-sdk-json"
	// KindGoSDKStateless is go-sdk without sessions (GET and DELETE → 405).
	KindGoSDKStateless = "go-sdk-stateless"
	// KindMCPGoStreamable is mcp-go's Streamable HTTP server (default
	// session handling, JSON answers, DELETE → 200).
	KindMCPGoStreamable = "mcp-go-streamable"
	// KindMCPGoSSE is mcp-go's legacy HTTP+SSE transport: GET Path opens
	// the stream, whose endpoint event names Path+"/message".
	KindMCPGoSSE = "mcp-go-sse"
	// KindAuthRequired answers 401 with an RFC 9728 resource_metadata
	// challenge, and serves that metadata and RFC 8414 authorization-server
	// metadata on the same host.
	KindAuthRequired = "auth-required"
)

// Kinds lists every MCP server kind, in a stable order.
func Kinds() []string {
	return []string{KindGoSDKStateful, KindGoSDKJSON, KindGoSDKStateless, KindMCPGoStreamable, KindMCPGoSSE, KindAuthRequired}
}

func knownKind(k string) bool {
	for _, x := range Kinds() {
		if x == k {
			return true
		}
	}
	return false
}

// MCPOptions describes the server behind an MCP handler.
type MCPOptions struct {
	// Name and Version are what the server reports in serverInfo; defaults
	// "simweb-KIND" and "1.0.0".
	Name, Version string
	// Tools is how many tools are registered (tool_000, tool_001, …; never
	// called); 0 means 3.
	Tools int
	// Path is where the handler is mounted; only mcp-go-sse needs it (its
	// SSE and message endpoints are exact paths), and auth-required uses it
	// as the protected resource. Default "/mcp" ("/sse" for mcp-go-sse).
	Path string
}

func (o MCPOptions) withDefaults(kind string) MCPOptions {
	if o.Name == "" {
		o.Name = "simweb-" + kind
	}
	if o.Version == "" {
		o.Version = "1.0.0"
	}
	if o.Tools == 0 {
		o.Tools = 3
	}
	if o.Path == "" {
		o.Path = "/mcp"
		if kind == KindMCPGoSSE {
			o.Path = "/sse"
		}
	}
	return o
}

func toolName(i int) string { return fmt.Sprintf("tool_%03d", i) }

// MCPHandler builds a real MCP server of the given kind from the official
// go-sdk or mark3labs/mcp-go, with the SDKs' localhost Host/Origin checks
// disabled (every simulated host name reaches them over loopback).
func MCPHandler(kind string, opts MCPOptions) (http.Handler, error) {
	if !knownKind(kind) {
		return nil, fmt.Errorf("simweb: unknown MCP kind %q (want one of %s)", kind, strings.Join(Kinds(), ", "))
	}
	opts = opts.withDefaults(kind)
	if kind == KindAuthRequired {
		return authRequired(opts), nil
	}
	return sdkHandler(kind, opts)
}

// Well-known paths served by auth-required next to the protected endpoint.
const (
	wellKnownPRM = "/.well-known/oauth-protected-resource"
	wellKnownAS  = "/.well-known/oauth-authorization-server"
)

// extraMountPaths are the host paths a fixture mount of kind also needs.
func extraMountPaths(kind string) []string {
	if kind == KindAuthRequired {
		return []string{wellKnownPRM, wellKnownAS}
	}
	return nil
}

// authRequired is hand-written on purpose: the point is the exact shape of
// the challenge and of the two metadata documents, not an SDK's auth stack.
func authRequired(opts MCPOptions) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		origin := "https://" + normalizeHost(r.Host)
		switch {
		case r.URL.Path == wellKnownPRM || strings.HasPrefix(r.URL.Path, wellKnownPRM+"/"):
			writeJSON(rw, map[string]any{
				"resource":                 origin + opts.Path,
				"authorization_servers":    []string{origin},
				"scopes_supported":         []string{"mcp:tools"},
				"bearer_methods_supported": []string{"header"},
				"resource_name":            opts.Name,
			})
		case r.URL.Path == wellKnownAS:
			writeJSON(rw, map[string]any{
				"issuer":                                origin,
				"authorization_endpoint":                origin + "/oauth/authorize",
				"token_endpoint":                        origin + "/oauth/token",
				"registration_endpoint":                 origin + "/oauth/register",
				"scopes_supported":                      []string{"mcp:tools"},
				"response_types_supported":              []string{"code"},
				"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
				"token_endpoint_auth_methods_supported": []string{"none"},
				"code_challenge_methods_supported":      []string{"S256"},
				"client_id_metadata_document_supported": true,
			})
		default:
			rw.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+origin+wellKnownPRM+`"`)
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusUnauthorized)
			_, _ = rw.Write([]byte(`{"error":"invalid_token","error_description":"authorization required"}` + "\n"))
		}
	})
}

func writeJSON(rw http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	_, _ = rw.Write(append(b, '\n'))
}

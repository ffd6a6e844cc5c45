package probe

// The tests in this file run real go-sdk and mcp-go servers over loopback
// TLS; they build and run with a plain `go test`, no tags.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

func healthy(session bool, deleteStatus int, version string) summary {
	s := summary{Outcome: OutcomeOK, Transport: TransportStreamable, Era: Era2025, ProtocolVersion: version,
		ServerName: "sdk-test", ServerVersion: "1.2.3", SessionID: session, ToolCount: intp(3),
		ToolNames: []string{"tool_000", "tool_001", "tool_002"}, RoundTrips: 3,
		Steps: []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200"}}
	if session {
		s.RoundTrips = 4
		s.Steps = append(s.Steps, "DELETE delete "+strconv.Itoa(deleteStatus))
	}
	return s
}

// expiring wraps a stateful go-sdk handler and kills the session right after
// each of the first n initialize answers, so the next request gets 404.
func expiring(inner http.Handler, n int32) http.Handler {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		if bytes.Contains(b, []byte(`"method":"initialize"`)) && seen.Add(1) <= n {
			del := httptest.NewRequest(http.MethodDelete, "https://mcp.example.com/mcp", nil)
			del.Header.Set("Mcp-Session-Id", rec.Header().Get("Mcp-Session-Id"))
			inner.ServeHTTP(httptest.NewRecorder(), del)
		}
	})
}

func mcpgoServer(n int, opts ...mcpgoserver.ServerOption) *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcp-go-test", "2.0.0", append([]mcpgoserver.ServerOption{mcpgoserver.WithToolCapabilities(false)}, opts...)...)
	for i := range n {
		s.AddTool(mcpgo.NewTool(names("t", n)[i], mcpgo.WithDescription("x")),
			func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
				panic("the probe must never call a tool")
			})
	}
	return s
}

func TestProbeRealServers(t *testing.T) {
	paged := healthy(true, 204, ProtocolVersion)
	paged.ToolCount, paged.ToolsTruncated, paged.RoundTrips = intp(10), true, 8
	paged.ToolNames = []string{"tool_000", "tool_001", "tool_002", "tool_003", "tool_004", "tool_005", "tool_006", "tool_007", "tool_008", "tool_009"}
	paged.Steps = []string{"POST initialize 200", "POST notifications/initialized 202",
		"POST tools/list 200", "POST tools/list 200", "POST tools/list 200", "POST tools/list 200", "POST tools/list 200",
		"DELETE delete 204"}

	expired := healthy(true, 204, ProtocolVersion)
	expired.RoundTrips = 6
	expired.Steps = []string{"POST initialize 200", "POST notifications/initialized 404",
		"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200", "DELETE delete 204"}

	expiredTwice := healthy(true, 204, ProtocolVersion)
	expiredTwice.Partial, expiredTwice.ToolCount, expiredTwice.ToolNames, expiredTwice.RoundTrips = true, nil, nil, 5
	expiredTwice.Steps = []string{"POST initialize 200", "POST notifications/initialized 404",
		"POST initialize 200", "POST notifications/initialized 404", "DELETE delete 404"}

	mcpgoNames := names("t", 4)
	mcpgoOK := summary{Outcome: OutcomeOK, Transport: TransportStreamable, Era: Era2025, ProtocolVersion: ProtocolVersion,
		ServerName: "mcp-go-test", ServerVersion: "2.0.0", SessionID: true, ToolCount: intp(4), ToolNames: mcpgoNames,
		RoundTrips: 4, Steps: []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200", "DELETE delete 200"}}
	mcpgoStateless := mcpgoOK
	mcpgoStateless.SessionID, mcpgoStateless.RoundTrips = false, 3
	mcpgoStateless.Steps = mcpgoOK.Steps[:3]

	for _, tc := range []struct {
		name    string
		handler http.Handler
		want    summary
	}{
		{"go-sdk stateful SSE answers", sdkHandler(sdkServer(3, nil), nil), healthy(true, 204, ProtocolVersion)},
		{"go-sdk stateful JSON answers", sdkHandler(sdkServer(3, nil), &mcp.StreamableHTTPOptions{JSONResponse: true}), healthy(true, 204, ProtocolVersion)},
		{"go-sdk stateless", sdkHandler(sdkServer(3, nil), &mcp.StreamableHTTPOptions{Stateless: true}), healthy(false, 0, ProtocolVersion)},
		{"go-sdk older protocol version", sdkHandler(sdkServer(3, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-03-26"}}), nil), healthy(true, 204, "2025-03-26")},
		{"go-sdk more than 5 pages", sdkHandler(sdkServer(13, &mcp.ServerOptions{PageSize: 2}), nil), paged},
		{"go-sdk session expires once", expiring(sdkHandler(sdkServer(3, nil), &mcp.StreamableHTTPOptions{JSONResponse: true}), 1), expired},
		{"go-sdk session always expires", expiring(sdkHandler(sdkServer(3, nil), &mcp.StreamableHTTPOptions{JSONResponse: true}), 99), expiredTwice},
		{"mcp-go streamable", mcpgoserver.NewStreamableHTTPServer(mcpgoServer(4), mcpgoserver.WithDisableLocalhostProtection(true)), mcpgoOK},
		{"mcp-go stateful", mcpgoserver.NewStreamableHTTPServer(mcpgoServer(4), mcpgoserver.WithStateful(true), mcpgoserver.WithDisableLocalhostProtection(true)), mcpgoOK},
		{"mcp-go stateless", mcpgoserver.NewStreamableHTTPServer(mcpgoServer(4), mcpgoserver.WithStateLess(true), mcpgoserver.WithDisableLocalhostProtection(true)), mcpgoStateless},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": tc.handler})
			got := e.probe(Target{URL: mcpURL, Transport: "streamable-http"})
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("probe (-want +got):\n%s\nreason: %s", diff, got.Reason)
			}
			// A healthy server costs at most 4 round trips plus the DELETE.
			if got.Outcome == OutcomeOK && !got.ToolsTruncated && got.Evidence[0].Step == "initialize" {
				trips := got.RoundTrips
				if got.SessionID {
					trips--
				}
				if trips > 4 && tc.name != "go-sdk session expires once" {
					t.Errorf("round trips = %d, want ≤ 4 plus DELETE", got.RoundTrips)
				}
			}
		})
	}
}

func TestProbeLegacySSE(t *testing.T) {
	sdkSSE := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return sdkServer(1, nil) }, &mcp.SSEOptions{DisableLocalhostProtection: true})
	mgo := mcpgoserver.NewSSEServer(mcpgoServer(1), mcpgoserver.WithBaseURL("https://mcp.example.com"),
		mcpgoserver.WithSSEDisableLocalhostProtection(true))
	for _, tc := range []struct {
		name      string
		handler   http.Handler
		url       string
		transport string
		wantSteps []string
		wantEP    string // prefix of the resolved endpoint
	}{
		{"go-sdk relative endpoint after POST 400", sdkSSE, mcpURL, "",
			[]string{"POST initialize 400", "GET legacy-sse 200"}, "https://mcp.example.com/mcp?sessionid="},
		{"go-sdk declared sse goes straight to GET", sdkSSE, mcpURL, "sse",
			[]string{"GET legacy-sse 200"}, "https://mcp.example.com/mcp?sessionid="},
		{"mcp-go absolute endpoint after POST 405", mgo, "https://mcp.example.com/sse", "streamable-http",
			[]string{"POST initialize 405", "GET legacy-sse 200"}, "https://mcp.example.com/message?sessionId="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": tc.handler})
			got := e.probe(Target{URL: tc.url, Transport: tc.transport})
			if got.Outcome != OutcomeOK || got.Transport != TransportSSE || got.Era != EraLegacySSE {
				t.Fatalf("outcome %s transport %s era %s (%s)", got.Outcome, got.Transport, got.Era, got.Reason)
			}
			if diff := cmp.Diff(tc.wantSteps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			mustContain(t, "legacy endpoint", got.LegacyEndpoint, tc.wantEP)
			if got.LegacyEndpoint[:len(tc.wantEP)] != tc.wantEP {
				t.Errorf("legacy endpoint %q does not start with %q", got.LegacyEndpoint, tc.wantEP)
			}
		})
	}
}

// TestProbeBearerAuth runs go-sdk's bearer middleware with protected
// resource metadata, and an authorization server on another host.
func TestProbeBearerAuth(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.RequireBearerToken(
		func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return nil, auth.ErrInvalidToken
		},
		&auth.RequireBearerTokenOptions{ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Scopes: []string{"mcp:tools"}},
	)(sdkHandler(sdkServer(1, nil), nil)))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: mcpURL, AuthorizationServers: []string{"https://auth.example.com/tenant"}, ScopesSupported: []string{"mcp:tools"}}))
	as := http.NewServeMux()
	as.HandleFunc("/.well-known/oauth-authorization-server/tenant", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Errorf("metadata fetch carried credentials")
		}
		writeJSON(w, 200, map[string]any{"issuer": "https://auth.example.com/tenant",
			"authorization_endpoint": "https://auth.example.com/tenant/authorize", "token_endpoint": "https://auth.example.com/tenant/token",
			"registration_endpoint": "https://auth.example.com/tenant/register", "code_challenge_methods_supported": []string{"S256"},
			"client_id_metadata_document_supported": true})
	})
	e := newEnv(t, map[string]http.Handler{"mcp.example.com": mux, "auth.example.com": as})
	got := e.probe(Target{URL: mcpURL})
	want := &AuthInfo{Status: 401, Challenge: true, Scheme: "bearer",
		ResourceMetadataURL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Scope: "mcp:tools",
		PointsToOAuthMetadata: true,
		ProtectedResource: &ProtectedResourceInfo{URL: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
			Resource: mcpURL, ResourceMatches: true, AuthorizationServers: []string{"https://auth.example.com/tenant"},
			ScopesSupported: []string{"mcp:tools"}},
		AuthorizationServer: &AuthServerInfo{URL: "https://auth.example.com/.well-known/oauth-authorization-server/tenant",
			Source: "oauth", Issuer: "https://auth.example.com/tenant", IssuerMatches: true, DynamicRegistration: true,
			ClientIDMetadataDocument: true, PKCES256: true},
	}
	if got.Outcome != OutcomeRequiresLogin {
		t.Fatalf("outcome = %s (%s)", got.Outcome, got.Reason)
	}
	if diff := cmp.Diff(want, got.Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
	// No fallback after 401: one POST, then the two metadata documents.
	wantSteps := []string{"POST initialize 401", "GET protected-resource-metadata 200", "GET authorization-server-metadata 200"}
	if diff := cmp.Diff(wantSteps, steps(got)); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

type empty struct{}

// sdkServer is a go-sdk server with n tools named tool_000….
func sdkServer(n int, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk-test", Version: "1.2.3", Title: "SDK Test"}, opts)
	for i := range n {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "test tool"},
			func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
				panic("the probe must never call a tool")
			})
	}
	return s
}

func sdkHandler(s *mcp.Server, opts *mcp.StreamableHTTPOptions) http.Handler {
	if opts == nil {
		opts = &mcp.StreamableHTTPOptions{}
	}
	opts.DisableLocalhostProtection = true
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
}

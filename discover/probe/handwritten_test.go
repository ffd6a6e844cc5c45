package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// specModern is a 2026-07-28-only server written from the spec: initialize
// gets 400 with -32022, server/discover and tools/list need the version and
// method headers.
func specModern(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := readReq(t, r)
		if q.Method == "initialize" {
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{
				"code": -32022, "message": "Unsupported protocol version",
				"data": map[string]any{"supported": []string{ModernProtocolVersion}, "requested": ProtocolVersion}}})
			return
		}
		if r.Header.Get("MCP-Protocol-Version") != ModernProtocolVersion || r.Header.Get("Mcp-Method") != q.Method {
			writeJSON(w, 400, map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{"code": -32020, "message": "header mismatch"}})
			return
		}
		meta := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "modern", "version": "9.9"}}
		switch q.Method {
		case "server/discover":
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{
				"resultType": "complete", "supportedVersions": []string{ModernProtocolVersion},
				"capabilities": map[string]any{"tools": map[string]any{}}, "_meta": meta,
				"instructions": "hello", "ttlMs": 3600000, "cacheScope": "public"}})
		case "tools/list":
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{
				"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "_meta": meta,
				"tools": []map[string]any{{"name": "forecast", "inputSchema": map[string]any{"type": "object"}}}}})
		default:
			t.Errorf("unexpected method %q", q.Method)
		}
	})
}

func TestProbeModernSpecServer(t *testing.T) {
	e := newEnv(t, map[string]http.Handler{"mcp.example.com": specModern(t)})
	got := e.probe(Target{URL: mcpURL})
	want := summary{Outcome: OutcomeOK, Transport: TransportStreamable, Era: EraModern, ProtocolVersion: ModernProtocolVersion,
		ServerName: "modern", ServerVersion: "9.9", ToolCount: intp(1), ToolNames: []string{"forecast"}, RoundTrips: 3,
		Steps: []string{"POST initialize 400", "POST server/discover 200", "POST tools/list 200"}}
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("probe (-want +got):\n%s\nreason: %s", diff, got.Reason)
	}
	ttl := int64(3600000)
	wantDiscover := &DiscoverInfo{SupportedVersions: []string{ModernProtocolVersion}, Capabilities: json.RawMessage(`{"tools":{}}`),
		TTLMs: &ttl, CacheScope: "public", Instructions: true}
	if diff := cmp.Diff(wantDiscover, got.Discover); diff != "" {
		t.Errorf("discover (-want +got):\n%s", diff)
	}
	if ex := got.Evidence[0]; ex.JSONRPCCode == nil || *ex.JSONRPCCode != -32022 {
		t.Errorf("initialize evidence lacks the -32022 code: %+v", ex)
	}
}

// dropper hijacks and closes the first n connections without answering.
func dropper(n int32, next http.Handler) http.Handler {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

func TestProbeHandWritten(t *testing.T) {
	fake := func(t *testing.T) http.Handler {
		return &fakeMCP{t: t, tools: func(*string) ([]string, any) { return []string{"a", "b"}, nil }}
	}
	for _, tc := range []struct {
		name      string
		handler   func(t *testing.T) http.Handler
		transport string
		want      string // outcome
		steps     []string
		reason    string // a substring of the reason
		check     func(t *testing.T, r Result)
		timeout   time.Duration // per request; 300 ms when zero
	}{
		{name: "hang", want: OutcomeTimeout, steps: []string{"POST initialize 0 timeout"},
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					// The server notices the client leaving only once the body is read.
					_, _ = io.Copy(io.Discard, r.Body)
					<-r.Context().Done()
				})
			}},
		{name: "html 200", want: OutcomeNotMCP, steps: []string{"POST initialize 200 unexpected_content_type"}, reason: "text/html",
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					fmt.Fprint(w, "<!doctype html><title>Welcome</title>")
				})
			}},
		{name: "429 with Retry-After, no fallback", want: OutcomeRateLimited, steps: []string{"POST initialize 429"}, reason: "Retry-After 120",
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "120")
					w.WriteHeader(http.StatusTooManyRequests)
				})
			},
			check: func(t *testing.T, r Result) {
				if r.Evidence[0].RetryAfter != "120" {
					t.Errorf("retryAfter = %q", r.Evidence[0].RetryAfter)
				}
			}},
		{name: "403 without challenge, no fallback", want: OutcomeRequiresLogin,
			steps: []string{"POST initialize 403", "GET protected-resource-metadata 403 http_4xx", "GET protected-resource-metadata 403 http_4xx"},
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Error(w, "forbidden", http.StatusForbidden)
				})
			},
			check: func(t *testing.T, r Result) {
				want := &AuthInfo{Status: 403}
				if diff := cmp.Diff(want, r.Auth); diff != "" {
					t.Errorf("auth (-want +got):\n%s", diff)
				}
				if r.Evidence[1].URL != "https://mcp.example.com/.well-known/oauth-protected-resource/mcp" ||
					r.Evidence[2].URL != "https://mcp.example.com/.well-known/oauth-protected-resource" {
					t.Errorf("well-known order: %s, %s", r.Evidence[1].URL, r.Evidence[2].URL)
				}
			}},
		{name: "json-rpc error to initialize", want: OutcomeHandshakeRejected, steps: []string{"POST initialize 200"}, reason: "-32602",
			handler: func(t *testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					q := readReq(t, r)
					writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{
						"code": -32602, "message": "Unsupported protocol version", "data": map[string]any{"supported": []string{"2024-11-05"}}}})
				})
			},
			check: func(t *testing.T, r Result) {
				if diff := cmp.Diff([]string{"2024-11-05"}, r.Evidence[0].SupportedVersions); diff != "" {
					t.Errorf("supported (-want +got):\n%s", diff)
				}
			}},
		{name: "sse stream never sends the endpoint", want: OutcomeTimeout,
			steps: []string{"POST initialize 405", "GET legacy-sse 200 timeout"}, reason: "no endpoint event",
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						w.WriteHeader(http.StatusMethodNotAllowed)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, ": keep-alive\n\nevent: ping\ndata: {}\n\n")
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				})
			}},
		{name: "404 and no stream is http_4xx", want: OutcomeHTTP4xx,
			steps: []string{"POST initialize 404", "GET legacy-sse 404"}, reason: "initialize answered 404",
			handler: func(*testing.T) http.Handler { return http.NotFoundHandler() }},
		{name: "500", want: OutcomeHTTP5xx, steps: []string{"POST initialize 500"},
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) })
			}},
		{name: "result without serverInfo", want: OutcomeNotMCP, steps: []string{"POST initialize 200"},
			handler: func(t *testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					q := readReq(t, r)
					writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{"ok": true}})
				})
			}},
		{name: "302 is not followed", want: OutcomeNotMCP, steps: []string{"POST initialize 302"}, reason: "redirect",
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, "/login", http.StatusFound)
				})
			}},
		{name: "endless repeated cursor", want: OutcomeOK,
			steps: []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200", "POST tools/list 200"},
			handler: func(t *testing.T) http.Handler {
				return &fakeMCP{t: t, tools: func(*string) ([]string, any) { return []string{"a"}, "same" }}
			},
			check: func(t *testing.T, r Result) {
				if !r.ToolsTruncated || *r.ToolCount != 2 {
					t.Errorf("truncated %v count %v, want true 2", r.ToolsTruncated, *r.ToolCount)
				}
			}},
		{name: "endless fresh cursors stop at 5 pages", want: OutcomeOK,
			steps: []string{"POST initialize 200", "POST notifications/initialized 202",
				"POST tools/list 200", "POST tools/list 200", "POST tools/list 200", "POST tools/list 200", "POST tools/list 200"},
			handler: func(t *testing.T) http.Handler {
				var n atomic.Int32
				return &fakeMCP{t: t, tools: func(*string) ([]string, any) {
					return []string{"a"}, fmt.Sprint(n.Add(1))
				}}
			},
			check: func(t *testing.T, r Result) {
				if !r.ToolsTruncated || *r.ToolCount != 5 {
					t.Errorf("truncated %v count %v, want true 5", r.ToolsTruncated, *r.ToolCount)
				}
			}},
		{name: "10,000 tools", want: OutcomeOK, timeout: 15 * time.Second,
			steps: []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200"},
			handler: func(t *testing.T) http.Handler {
				return &fakeMCP{t: t, tools: func(*string) ([]string, any) { return names("tool_", 10000), nil }}
			},
			check: func(t *testing.T, r Result) {
				if *r.ToolCount != 10000 || len(r.ToolNames) != DefaultMaxToolNames || r.ToolsTruncated {
					t.Errorf("count %d names %d truncated %v", *r.ToolCount, len(r.ToolNames), r.ToolsTruncated)
				}
			}},
		{name: "dropped connection once is retried", want: OutcomeOK,
			steps:   []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200"},
			handler: func(t *testing.T) http.Handler { return dropper(1, fake(t)) }},
		{name: "dropped connection twice", want: OutcomeConnect, steps: []string{"POST initialize 0 connect"},
			handler: func(t *testing.T) http.Handler { return dropper(2, fake(t)) }},
		{name: "tools/list failing is partial", want: OutcomeOK,
			steps: []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 500"},
			handler: func(t *testing.T) http.Handler {
				inner := fake(t)
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.ContentLength > 0 && r.Header.Get("MCP-Protocol-Version") != "" {
						q := readReq(t, r)
						if q.Method == "tools/list" {
							http.Error(w, "broken", 500)
							return
						}
						w.WriteHeader(http.StatusAccepted)
						return
					}
					inner.ServeHTTP(w, r)
				})
			},
			check: func(t *testing.T, r Result) {
				if !r.Partial || r.ToolCount != nil || r.ServerName != "fake" {
					t.Errorf("partial %v toolCount %v server %q", r.Partial, r.ToolCount, r.ServerName)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A short request timeout keeps the hanging cases fast; a case
			// whose only cost is a big answer gets the real one, so a loaded
			// machine cannot turn it into a timeout.
			timeout := 300 * time.Millisecond
			if tc.timeout != 0 {
				timeout = tc.timeout
			}
			e := newEnvTimeout(t, map[string]http.Handler{"mcp.example.com": tc.handler(t)}, timeout)
			e.opts.SSEWait = 100 * time.Millisecond
			got := e.probe(Target{URL: mcpURL, Transport: tc.transport})
			if got.Outcome != tc.want {
				t.Errorf("outcome = %s (%s), want %s", got.Outcome, got.Reason, tc.want)
			}
			if diff := cmp.Diff(tc.steps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if tc.reason != "" {
				mustContain(t, "reason", got.Reason, tc.reason)
			}
			if tc.check != nil && got.Outcome == tc.want {
				tc.check(t, got)
			}
		})
	}
}

func TestProbeBlockedBeforeAnyRequest(t *testing.T) {
	p := New(Options{})
	for _, u := range []string{"http://mcp.example.com/mcp", "https://127.0.0.1/mcp", "https://{tenant}.example.com/mcp",
		"https://user:pw@mcp.example.com/", "https://10.1.2.3/"} {
		got := p.Probe(t.Context(), Target{URL: u})
		if got.Outcome != OutcomeBlocked || len(got.Evidence) != 0 || got.RoundTrips != 0 {
			t.Errorf("%s: outcome %s, %d exchanges", u, got.Outcome, len(got.Evidence))
		}
	}
}

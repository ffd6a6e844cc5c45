package probe

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// legacyOnGET serves a legacy endpoint event on GET and lets post answer
// every POST.
func legacyOnGET(post http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			post(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
	})
}

// rpcErrorAnswer answers a POST with status and a JSON-RPC error; ours
// decides whether the error carries the request's id or null.
func rpcErrorAnswer(t *testing.T, status, code int, ours bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var id any
		if r.Method == http.MethodPost && ours {
			id = readReq(t, r).ID
		}
		writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": "no"}})
	}
}

func TestProbeTransportFallback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		handler   func(t *testing.T) http.Handler
		transport string
		want      string // outcome
		steps     []string
	}{
		// A stale card: it says sse, but the URL is mcp-go's Streamable HTTP
		// server, whose sessionless GET opens a stream that never sends an
		// endpoint event.
		{name: "declared sse on an mcp-go streamable server", transport: "sse", want: OutcomeOK,
			handler: func(*testing.T) http.Handler {
				return mcpgoserver.NewStreamableHTTPServer(mcpgoServer(2), mcpgoserver.WithDisableLocalhostProtection(true))
			},
			steps: []string{"GET legacy-sse 200 timeout", "POST initialize 200", "POST notifications/initialized 202",
				"POST tools/list 200", "DELETE delete 200"}},
		// The stream opened and stayed silent, and the POST is refused: the
		// silent stream is the better story, and the GET is not repeated.
		{name: "declared sse, silent stream, POST 405", transport: "sse", want: OutcomeTimeout,
			handler: func(*testing.T) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						w.WriteHeader(http.StatusMethodNotAllowed)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, ": keep-alive\n\n")
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				})
			},
			steps: []string{"GET legacy-sse 200 timeout", "POST initialize 405"}},
		{name: "declared sse, 404 everywhere: one GET only", transport: "sse", want: OutcomeHTTP4xx,
			handler: func(*testing.T) http.Handler { return http.NotFoundHandler() },
			steps:   []string{"GET legacy-sse 404", "POST initialize 404"}},
		{name: "generic JSON-RPC error on 404 falls back to legacy", want: OutcomeOK,
			handler: func(t *testing.T) http.Handler { return legacyOnGET(rpcErrorAnswer(t, 404, -32000, false)) },
			steps:   []string{"POST initialize 404", "GET legacy-sse 200"}},
		{name: "generic JSON-RPC error on 400 falls back to legacy", want: OutcomeOK,
			handler: func(t *testing.T) http.Handler { return legacyOnGET(rpcErrorAnswer(t, 400, -32600, false)) },
			steps:   []string{"POST initialize 400", "GET legacy-sse 200"}},
		{name: "generic JSON-RPC error on 405 and no stream", want: OutcomeHTTP4xx,
			handler: func(t *testing.T) http.Handler { return rpcErrorAnswer(t, 405, -32000, false) },
			steps:   []string{"POST initialize 405", "GET legacy-sse 405"}},
		{name: "error answering our id on 400 is a rejected handshake", want: OutcomeHandshakeRejected,
			handler: func(t *testing.T) http.Handler { return legacyOnGET(rpcErrorAnswer(t, 400, -32602, true)) },
			steps:   []string{"POST initialize 400"}},
		{name: "generic JSON-RPC error on 415 is http_4xx", want: OutcomeHTTP4xx,
			handler: func(t *testing.T) http.Handler { return legacyOnGET(rpcErrorAnswer(t, 415, -32000, false)) },
			steps:   []string{"POST initialize 415"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": tc.handler(t)})
			e.opts.SSEWait = 50 * time.Millisecond
			got := e.probe(Target{URL: mcpURL, Transport: tc.transport})
			if got.Outcome != tc.want {
				t.Errorf("outcome = %s (%s), want %s", got.Outcome, got.Reason, tc.want)
			}
			if diff := cmp.Diff(tc.steps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if got.RoundTrips != len(got.Evidence) {
				t.Errorf("round trips %d for %d exchanges", got.RoundTrips, len(got.Evidence))
			}
		})
	}
}

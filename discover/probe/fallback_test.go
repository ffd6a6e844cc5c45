package probe

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		q := readReq(t, r)
		var id any
		if ours {
			id = q.ID
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
		{name: "declared sse, 404 everywhere: one GET only", transport: "sse", want: OutcomeHTTP4xx,
			handler: func(*testing.T) http.Handler { return http.NotFoundHandler() },
			steps:   []string{"GET legacy-sse 404", "POST initialize 404"}},
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

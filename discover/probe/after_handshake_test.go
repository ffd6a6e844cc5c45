package probe

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// interceptNth passes every request to inner except the nth POST (from 1)
// of method, which answer handles with the request's JSON-RPC id.
func interceptNth(method string, nth int32, inner http.Handler, answer func(w http.ResponseWriter, id json.RawMessage)) http.Handler {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var q struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(b, &q) == nil && q.Method == method && seen.Add(1) == nth {
			answer(w, q.ID)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

func answerError(status, code int) func(w http.ResponseWriter, id json.RawMessage) {
	return func(w http.ResponseWriter, id json.RawMessage) {
		writeJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": "Method not found"}})
	}
}

// TestProbeToolsListMethodNotFound: a -32601 on the first tools/list is the
// server saying it offers no tools, which is an answer (toolCount 0, not
// partial); on a later page it breaks a listing already under way, so the
// count is unknown (partial, no toolCount).
func TestProbeToolsListMethodNotFound(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nth         int32
		pageSize    int
		wantPartial bool
		wantCount   *int
		wantSteps   []string
		reason      string
	}{
		{"first page", 1, 0, false, intp(0),
			[]string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200", "DELETE delete 204"},
			"tools/list is not implemented"},
		{"second page", 2, 1, true, nil,
			[]string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 200", "POST tools/list 200", "DELETE delete 204"},
			"tools/list failed: 200 JSON-RPC error -32601"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := sdkHandler(sdkServer(3, &mcp.ServerOptions{PageSize: tc.pageSize}), &mcp.StreamableHTTPOptions{JSONResponse: true})
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": interceptNth("tools/list", tc.nth, inner, answerError(200, codeMethodNotFound))})
			got := e.probe(Target{URL: mcpURL})
			if got.Outcome != OutcomeOK || got.Partial != tc.wantPartial || got.ServerName != "sdk-test" {
				t.Errorf("outcome %s partial %v server %q (%s), want ok partial=%v sdk-test", got.Outcome, got.Partial, got.ServerName, got.Reason, tc.wantPartial)
			}
			if diff := cmp.Diff(tc.wantCount, got.ToolCount); diff != "" {
				t.Errorf("toolCount (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSteps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			mustContain(t, "reason", got.Reason, tc.reason)
		})
	}
}

// TestProbeDiscoverFailsAfterModernRejection: the server refused the 2025
// handshake as a modern server would, and then server/discover fails too.
func TestProbeDiscoverFailsAfterModernRejection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		goSDK  bool // go-sdk modern-only (refuses after initialize) instead of the spec server (refuses initialize)
		answer func(w http.ResponseWriter, id json.RawMessage)
		want   string
		steps  []string
		reason string
	}{
		{name: "method not found", answer: answerError(400, codeMethodNotFound), want: OutcomeHandshakeRejected,
			steps:  []string{"POST initialize 400", "POST server/discover 400"},
			reason: "initialize answered 400 JSON-RPC error -32022"},
		{name: "json-rpc error in a 200", answer: answerError(200, -32603), want: OutcomeHandshakeRejected,
			steps:  []string{"POST initialize 400", "POST server/discover 200"},
			reason: "server/discover answered 200 JSON-RPC error -32603"},
		{name: "500", want: OutcomeHTTP5xx, steps: []string{"POST initialize 400", "POST server/discover 500"},
			answer: func(w http.ResponseWriter, _ json.RawMessage) { http.Error(w, "oops", 500) }},
		{name: "429", want: OutcomeRateLimited, steps: []string{"POST initialize 400", "POST server/discover 429"},
			answer: func(w http.ResponseWriter, _ json.RawMessage) { w.WriteHeader(http.StatusTooManyRequests) }},
		{name: "result without supportedVersions", want: OutcomeNotMCP, steps: []string{"POST initialize 400", "POST server/discover 200"},
			reason: "lacks supportedVersions",
			answer: func(w http.ResponseWriter, id json.RawMessage) {
				writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"capabilities": map[string]any{}}})
			}},
		{name: "go-sdk modern-only, discover 404", goSDK: true, want: OutcomeHandshakeRejected,
			steps: []string{"POST initialize 200", "POST notifications/initialized 400", "POST server/discover 404"},
			// The rejection came on notifications/initialized, and the
			// reason must say so rather than blame initialize.
			reason: "notifications/initialized answered 400",
			answer: func(w http.ResponseWriter, _ json.RawMessage) { http.NotFound(w, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := specModern(t)
			if tc.goSDK {
				inner = sdkHandler(sdkServer(1, &mcp.ServerOptions{SupportedProtocolVersions: []string{ModernProtocolVersion}}),
					&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			}
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": interceptNth("server/discover", 1, inner, tc.answer)})
			got := e.probe(Target{URL: mcpURL})
			if got.Outcome != tc.want {
				t.Errorf("outcome = %s (%s), want %s", got.Outcome, got.Reason, tc.want)
			}
			if diff := cmp.Diff(tc.steps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if tc.reason != "" {
				mustContain(t, "reason", got.Reason, tc.reason)
			}
			if got.Era == EraModern || got.Discover != nil || got.ToolCount != nil {
				t.Errorf("era %q discover %+v toolCount %v: nothing modern was learned", got.Era, got.Discover, got.ToolCount)
			}
		})
	}
}

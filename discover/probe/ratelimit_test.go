package probe

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// limitMethod passes every request to inner except a POST of method, which
// gets 429 with Retry-After; it fails the test on any DELETE, since the
// host has just asked us to back off.
func limitMethod(t *testing.T, method string, inner http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			t.Errorf("DELETE sent to a host that answered 429")
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"method":"`+method+`"`)) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// TestProbeNoDeleteAfter429 runs a stateful go-sdk server (it hands out a
// session id, so a DELETE would normally follow) that rate-limits one step
// after the handshake.
func TestProbeNoDeleteAfter429(t *testing.T) {
	for _, tc := range []struct {
		method string
		steps  []string
	}{
		{"notifications/initialized", []string{"POST initialize 200", "POST notifications/initialized 429"}},
		{"tools/list", []string{"POST initialize 200", "POST notifications/initialized 202", "POST tools/list 429"}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			h := limitMethod(t, tc.method, sdkHandler(sdkServer(1, nil), nil))
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": h})
			got := e.probe(Target{URL: mcpURL})
			if diff := cmp.Diff(tc.steps, steps(got)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if got.Outcome != OutcomeOK || !got.Partial || !got.SessionID {
				t.Errorf("outcome %s partial %v session %v, want a partial ok with a session", got.Outcome, got.Partial, got.SessionID)
			}
			mustContain(t, "reason", got.Reason, "DELETE skipped after 429")
		})
	}
}

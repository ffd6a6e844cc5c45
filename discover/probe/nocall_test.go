package probe

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProbeNeverCallsATool: a probe lists a server's tools and stops there.
// It sends the handshake and tools/list only, never tools/call or any other
// method that could act, whatever tools the server offers.
func TestProbeNeverCallsATool(t *testing.T) {
	h := &fakeMCP{t: t, tools: func(*string) ([]string, any) { return []string{"delete_everything", "send_email"}, nil }}
	e := newEnv(t, map[string]http.Handler{"mcp.example.com": h})
	if got := e.probe(Target{URL: mcpURL}); got.Outcome != OutcomeOK {
		t.Fatalf("outcome %s (%s), want ok", got.Outcome, got.Reason)
	}
	h.mu.Lock()
	calls := slices.Clone(h.calls)
	h.mu.Unlock()
	if diff := cmp.Diff([]string{"initialize", "notifications/initialized", "tools/list"}, calls); diff != "" {
		t.Errorf("methods sent (-want +got):\n%s", diff)
	}
}

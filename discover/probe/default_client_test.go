package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDefaultClientIsGuarded: a Prober built without a client must still
// refuse loopback, rather than fall back to an unguarded default client.
func TestDefaultClientIsGuarded(t *testing.T) {
	hit := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	r := New(Options{}).Probe(context.Background(), Target{URL: srv.URL + "/mcp"})
	if r.Outcome != OutcomeBlocked || hit {
		t.Errorf("outcome %q (server hit: %v), want blocked with no request", r.Outcome, hit)
	}
}

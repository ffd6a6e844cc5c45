package probe

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk restricted to 2026-07-28 answers initialize with 2025-11-25 and
// then refuses the next request in plain text; the probe must notice and
// switch to server/discover.
func TestProbeModernOnlyGoSDK(t *testing.T) {
	h := sdkHandler(sdkServer(2, &mcp.ServerOptions{SupportedProtocolVersions: []string{ModernProtocolVersion}}),
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	e := newEnv(t, map[string]http.Handler{"mcp.example.com": h})
	got := e.probe(Target{URL: mcpURL})
	want := summary{Outcome: OutcomeOK, Transport: TransportStreamable, Era: EraModern, ProtocolVersion: ModernProtocolVersion,
		ServerName: "sdk-test", ServerVersion: "1.2.3", ToolCount: intp(2), ToolNames: []string{"tool_000", "tool_001"},
		RoundTrips: 4, Steps: []string{"POST initialize 200", "POST notifications/initialized 400", "POST server/discover 200", "POST tools/list 200"}}
	if diff := cmp.Diff(want, summarize(got)); diff != "" {
		t.Errorf("probe (-want +got):\n%s\nreason: %s", diff, got.Reason)
	}
	if got.Discover == nil || got.Discover.CacheScope == "" || got.Discover.TTLMs == nil {
		t.Errorf("discover = %+v, want supported versions, ttlMs and cacheScope", got.Discover)
	}
	if diff := cmp.Diff([]string{ModernProtocolVersion}, got.Evidence[1].SupportedVersions); diff != "" {
		t.Errorf("versions read from the plain-text 400 (-want +got):\n%s", diff)
	}
}

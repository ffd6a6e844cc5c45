package probe

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkProbeGoSDK measures sequential probes of one stateful go-sdk
// server (initialize, initialized, tools/list, DELETE).
func BenchmarkProbeGoSDK(b *testing.B) {
	opts := benchClient(b, sdkHandler(sdkServer(10, nil), nil))
	p := New(opts)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := p.Probe(context.Background(), Target{URL: mcpURL})
		if r.Outcome != OutcomeOK || r.Partial || r.RoundTrips != 4 {
			b.Fatalf("probe: %s %s (%d round trips)", r.Outcome, r.Reason, r.RoundTrips)
		}
	}
}

// BenchmarkProbeGoSDK1000 probes 1,000 endpoints (one go-sdk server under
// 1,000 host names) at concurrency 32.
func BenchmarkProbeGoSDK1000(b *testing.B) {
	h := sdkHandler(sdkServer(10, nil), &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
	probeMany(b, benchClient(b, h), 1000, 32)
}

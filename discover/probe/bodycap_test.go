package probe

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// TestBodyCap checks the 1 MiB default, the same cap the rest of the program
// puts on one document, for JSON answers and for SSE answers (whose one data
// line must not be allowed to grow past it either), and that Options can
// raise it.
func TestBodyCap(t *testing.T) {
	if got := New(Options{}).opts.MaxBodyBytes; got != 1<<20 {
		t.Errorf("default MaxBodyBytes = %d, want 1 MiB", got)
	}
	// About 1.2 MiB of tools/list: over the default, under 2 MiB.
	long := make([]string, 1200)
	for i := range long {
		long[i] = strings.Repeat("x", 1000) + names("", len(long))[i]
	}
	for _, tc := range []struct {
		name     string
		sse      bool
		maxBody  int64
		wantCapd bool
	}{
		{"json over the default cap", false, 0, true},
		{"sse over the default cap", true, 0, true},
		{"json under a raised cap", false, 2 << 20, false},
		{"sse under a raised cap", true, 2 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeMCP{t: t, sse: tc.sse, tools: func(*string) ([]string, any) { return long, nil }}
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": h})
			e.opts.MaxBodyBytes = tc.maxBody
			got := e.probe(Target{URL: mcpURL})
			last := got.Evidence[len(got.Evidence)-1]
			if tc.wantCapd {
				if got.Outcome != OutcomeOK || !got.Partial || got.ToolCount != nil || last.Error != fetch.ClassTooLarge {
					t.Errorf("outcome %s partial %v toolCount %v last error %q (%s), want ok, partial, no count, too_large",
						got.Outcome, got.Partial, got.ToolCount, last.Error, got.Reason)
				}
				return
			}
			if got.Outcome != OutcomeOK || got.Partial || got.ToolCount == nil || *got.ToolCount != len(long) {
				t.Errorf("outcome %s partial %v toolCount %v (%s), want ok with %d tools", got.Outcome, got.Partial, got.ToolCount, got.Reason, len(long))
			}
		})
	}
}

// TestReadSSELineCap: a data line longer than MaxBytes is refused as too
// large, whatever the scanner's own buffer would allow.
func TestReadSSELineCap(t *testing.T) {
	in := "data: " + strings.Repeat("y", 4096) + "\n\n"
	err := readSSE(strings.NewReader(in), sseLimits{MaxBytes: 1024}, func(sseEvent) bool { return true })
	if err == nil || !strings.Contains(err.Error(), errBodySizeLimit.Error()) {
		t.Errorf("err = %v, want the body size limit", err)
	}
	if got := sseMaxLine(sseLimits{MaxBytes: 1024}); got > 1024+1 {
		t.Errorf("scanner max token = %d, want ≤ MaxBytes+1 1025", got)
	}
	if got := sseMaxLine(sseLimits{}); got > DefaultMaxBodyBytes {
		t.Errorf("scanner max token without a cap = %d, want ≤ %d", got, DefaultMaxBodyBytes)
	}
}

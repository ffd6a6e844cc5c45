package probe

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// TestProbeCanceled interrupts a probe the way Ctrl-C does, from inside the
// server so that the moment is exact: the result must say canceled, not
// timeout, so that callers can refuse to store it.
func TestProbeCanceled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		transport string
		handler   func(cancel context.CancelFunc) http.Handler
	}{
		{"during initialize", "", func(cancel context.CancelFunc) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				cancel()
				<-r.Context().Done()
			})
		}},
		{"while waiting for the endpoint event", "sse", func(cancel context.CancelFunc) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, ": keep-alive\n\n")
				w.(http.Flusher).Flush()
				cancel()
				<-r.Context().Done()
			})
		}},
		{"during tools/list", "", func(cancel context.CancelFunc) http.Handler {
			inner := &fakeMCP{t: t, tools: func(*string) ([]string, any) {
				cancel()
				return []string{"a"}, nil
			}}
			return inner
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			e := newEnv(t, map[string]http.Handler{"mcp.example.com": tc.handler(cancel)})
			e.opts.SSEWait = testTimeout // longer than the test ever waits: only the cancel can end it
			got := New(e.opts).Probe(ctx, Target{URL: mcpURL, Transport: tc.transport})
			if got.Outcome != OutcomeCanceled {
				t.Errorf("outcome = %s (%s), want %s; steps %v", got.Outcome, got.Reason, OutcomeCanceled, steps(got))
			}
		})
	}
}

func TestOutcomeOfCanceled(t *testing.T) {
	if got := outcomeOf(fetch.ClassCanceled); got != OutcomeCanceled {
		t.Errorf("outcomeOf(%q) = %q, want %q", fetch.ClassCanceled, got, OutcomeCanceled)
	}
}

package fetch

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordingGate is a HostGate that notes what it was asked.
type recordingGate struct {
	mu     sync.Mutex
	events []string
	held   bool
}

func (g *recordingGate) Acquire(_ context.Context, host string) (func(time.Duration), error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.events = append(g.events, "acquire "+host)
	g.held = true
	return func(wait time.Duration) {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.events = append(g.events, "release "+host+" "+wait.String())
		g.held = false
	}, nil
}

// TestHostGateHook: the shared gate is held from before the request until
// the body is closed, and hears the Retry-After of a 429 or 503.
func TestHostGateHook(t *testing.T) {
	e := newEnv(t)
	gate := &recordingGate{}
	e.mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		gate.mu.Lock()
		held := gate.held
		gate.mu.Unlock()
		if !held {
			t.Error("request reached the server without the gate")
		}
		w.Write([]byte("{}"))
	})
	e.mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	c := e.client(t, Options{HostGate: gate})
	ctx := context.Background()
	if r := c.Get(ctx, Request{URL: "https://a.example/ok"}); r.Class != "" {
		t.Fatalf("ok: %s %v", r.Class, r.Err)
	}
	if r := c.Get(ctx, Request{URL: "https://B.example/busy"}); r.Class != "http_429" {
		t.Fatalf("busy: %q %v", r.Class, r.Err)
	}
	want := []string{"acquire a.example", "release a.example 0s", "acquire b.example", "release b.example 7s"}
	if diff := cmp.Diff(want, gate.events); diff != "" {
		t.Errorf("gate events (-want +got):\n%s", diff)
	}
}

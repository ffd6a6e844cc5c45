package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStreamReadToItsEnd holds the politeness fix of drainStream: after the
// answer on an event stream the prober waits for the server to end the
// stream before it sends its next request, instead of closing the stream
// under a server still writing. The server here ends the stream only once
// the prober reads past the answer, so closing early is seen every time,
// not only when scheduling happens to show two requests overlapping.
func TestStreamReadToItsEnd(t *testing.T) {
	release := make(chan struct{})
	var answerLen atomic.Int64 // written by the server, read by the client
	var conns sync.Map         // the client's address of every request: one per connection
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.Store(r.RemoteAddr, true)
		q := readReq(t, r)
		switch q.Method {
		case "initialize":
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{
				"protocolVersion": ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "slow-ender", "version": "1"}}})
			answer := fmt.Appendf(nil, "event: message\ndata: %s\n\n", b)
			answerLen.Store(int64(len(answer)))
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write(answer)
			w.(http.Flusher).Flush()
			select {
			case <-release: // the stream ends: the handler returns
			case <-r.Context().Done():
			}
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{
				"tools": []map[string]any{{"name": "t", "inputSchema": map[string]any{"type": "object"}}}}})
		}
	})
	e := newEnv(t, map[string]http.Handler{"mcp.example.com": h})
	w := &watchedStream{release: release, answerLen: func() int { return int(answerLen.Load()) }}
	e.opts.HTTP = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := e.opts.Fetch.HTTPClient().Transport.RoundTrip(r)
		if err == nil && resp.Header.Get("Content-Type") == "text/event-stream" {
			w.body = resp.Body
			resp.Body = w
		}
		return resp, err
	})}

	got := e.probe(Target{URL: mcpURL})
	if got.Outcome != OutcomeOK {
		t.Fatalf("outcome %s (%s), want ok", got.Outcome, got.Reason)
	}
	if w.closedEarly {
		t.Errorf("the event stream was closed after its answer while the server was still writing it")
	}
	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d connections for one probe, want 1 (the stream's connection reused)", n)
	}
}

// watchedStream lets the server end its stream once the client reads past
// the answer, and notes a close that came before the end.
type watchedStream struct {
	body        io.ReadCloser
	release     chan struct{}
	answerLen   func() int
	read        int
	sawEOF      bool
	closedEarly bool
	once        sync.Once
}

func (s *watchedStream) Read(p []byte) (int, error) {
	if s.read >= s.answerLen() {
		s.once.Do(func() { close(s.release) })
	}
	n, err := s.body.Read(p)
	s.read += n
	if err == io.EOF {
		s.sawEOF = true
	}
	return n, err
}

func (s *watchedStream) Close() error {
	if !s.sawEOF {
		s.closedEarly = true
		s.once.Do(func() { close(s.release) })
	}
	return s.body.Close()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

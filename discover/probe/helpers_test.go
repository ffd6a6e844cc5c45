package probe

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// testTimeout bounds each exchange in tests; only the hang cases reach it.
const testTimeout = 2 * time.Second

// env is one loopback TLS world: servers reachable under made-up
// *.example.com names through the real guarded client.
type env struct {
	t       *testing.T
	servers map[string]*httptest.Server // by host name
	opts    Options
}

// newEnv starts one TLS server per host name and a fetch client whose
// ConnectTo maps each name to its server, so the guard is exercised.
func newEnv(t *testing.T, hosts map[string]http.Handler) *env {
	t.Helper()
	return newEnvTimeout(t, hosts, testTimeout)
}

func newEnvTimeout(t *testing.T, hosts map[string]http.Handler, timeout time.Duration) *env {
	t.Helper()
	e := &env{t: t, servers: map[string]*httptest.Server{}}
	pool := x509.NewCertPool()
	var cts []fetch.ConnectTo
	for host, h := range hosts {
		ts := httptest.NewUnstartedServer(h)
		ts.StartTLS()
		t.Cleanup(ts.Close)
		e.servers[host] = ts
		pool.AddCert(ts.Certificate())
		_, port, err := net.SplitHostPort(ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cts = append(cts, fetch.ConnectTo{FromHost: host, FromPort: "443", ToHost: "127.0.0.1", ToPort: port})
	}
	fc, err := fetch.New(fetch.Options{ConnectTo: cts, RootCAs: pool, Timeout: timeout, RetryWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.opts = Options{HTTP: fc.HTTPClient(), Fetch: fc, SSEWait: time.Second, ClientVersion: "test"}
	return e
}

func (e *env) probe(target Target) Result {
	e.t.Helper()
	return New(e.opts).Probe(context.Background(), target)
}

// steps lists the evidence as "step status" strings, a compact picture of
// the exchange for diffs.
func steps(r Result) []string {
	var out []string
	for _, ex := range r.Evidence {
		s := fmt.Sprintf("%s %s %d", ex.Method, ex.Step, ex.Status)
		if ex.Error != "" {
			s += " " + ex.Error
		}
		out = append(out, s)
	}
	return out
}

const mcpURL = "https://mcp.example.com/mcp"

// summary is the part of a Result the table tests compare.
type summary struct {
	Outcome, Transport, Era, ProtocolVersion, ServerName, ServerVersion string
	Partial, SessionID, ToolsTruncated                                  bool
	ToolCount                                                           *int
	ToolNames                                                           []string
	LegacyEndpoint                                                      string
	RoundTrips                                                          int
	Steps                                                               []string
}

func summarize(r Result) summary {
	return summary{Outcome: r.Outcome, Transport: r.Transport, Era: r.Era, ProtocolVersion: r.ProtocolVersion,
		ServerName: r.ServerName, ServerVersion: r.ServerVersion, Partial: r.Partial, SessionID: r.SessionID,
		ToolsTruncated: r.ToolsTruncated, ToolCount: r.ToolCount, ToolNames: r.ToolNames,
		LegacyEndpoint: r.LegacyEndpoint, RoundTrips: r.RoundTrips, Steps: steps(r)}
}

// rpcReq is what hand-written handlers read from a POST.
type rpcReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Cursor *string `json:"cursor"`
	} `json:"params"`
}

func readReq(t testing.TB, r *http.Request) rpcReq {
	t.Helper()
	var q rpcReq
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &q); err != nil {
		t.Errorf("request body %q: %v", b, err)
	}
	return q
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeMCP is a minimal 2025-06-18 server whose tools/list is scripted.
type fakeMCP struct {
	t     testing.TB
	tools func(cursor *string) (names []string, next any)
	// sse makes tools/list answer as an event stream instead of JSON.
	sse   bool
	mu    sync.Mutex
	calls []string // methods seen, in order
}

func (f *fakeMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	q := readReq(f.t, r)
	for _, h := range []string{"Authorization", "Cookie", "Origin"} {
		if r.Header.Get(h) != "" {
			f.t.Errorf("%s carried %s", q.Method, h)
		}
	}
	if (q.Method == "initialize") != (r.Header.Get("MCP-Protocol-Version") == "") {
		f.t.Errorf("%s: MCP-Protocol-Version %q (none on initialize, the negotiated one after)", q.Method, r.Header.Get("MCP-Protocol-Version"))
	}
	if !strings.Contains(r.Header.Get("Accept"), "application/json") || !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		f.t.Errorf("%s: Accept %q", q.Method, r.Header.Get("Accept"))
	}
	f.mu.Lock()
	f.calls = append(f.calls, q.Method)
	f.mu.Unlock()
	switch q.Method {
	case "initialize":
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": map[string]any{
			"protocolVersion": ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "fake", "version": "0.0.1"}}})
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "tools/list":
		names, next := f.tools(q.Params.Cursor)
		tools := make([]map[string]any, len(names))
		for i, n := range names {
			tools[i] = map[string]any{"name": n, "inputSchema": map[string]any{"type": "object"}}
		}
		result := map[string]any{"tools": tools}
		if next != nil {
			result["nextCursor"] = next
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": q.ID, "result": result}
		if f.sse {
			b, _ := json.Marshal(msg)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			return
		}
		writeJSON(w, 200, msg)
	default:
		f.t.Errorf("unexpected method %q", q.Method)
		writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{"code": -32601, "message": "no"}})
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, i)
	}
	return out
}

func intp(n int) *int { return &n }

// mustContain fails unless s contains sub.
func mustContain(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%s = %q, want it to contain %q", what, s, sub)
	}
}

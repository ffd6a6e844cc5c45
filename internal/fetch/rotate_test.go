package fetch

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"testing"
)

// TestTransportRetired: a transport serves a bounded number of failed
// requests, or of requests, and is then replaced (it would otherwise keep
// an entry for every dead host it met); the retired one closes its idle
// connections, and a live host's connection is reused until then.
func TestTransportRetired(t *testing.T) {
	tests := []struct {
		name                     string
		maxFailures, maxRequests int
		failing                  int // requests to names that do not resolve
	}{
		{name: "after failures", maxFailures: 3, maxRequests: 1000, failing: 3},
		{name: "after requests", maxFailures: 1000, maxRequests: 5, failing: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.mux.HandleFunc("/x", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "{}") })
			c := e.client(t, Options{})
			r := c.transport
			r.maxFailures, r.maxRequests = tt.maxFailures, tt.maxRequests
			get := func(host string) *Response {
				return c.Get(context.Background(), Request{URL: "https://" + host + "/x"})
			}
			for range 2 {
				if res := get("a.example"); res.Err != nil {
					t.Fatal(res.Err)
				}
			}
			if n := e.conns.Load(); n != 1 {
				t.Fatalf("%d connections for two requests to one host, want 1 (reused)", n)
			}
			for i := range tt.failing {
				if res := get(fmt.Sprintf("nx%d.example", i)); res.Err == nil {
					t.Fatalf("nx%d.example answered; want a failure", i)
				}
			}
			if r.generation != 0 {
				t.Fatalf("retired %d transports before the limit was passed", r.generation)
			}
			if n := c.dialer.open.Load(); n != 1 {
				t.Fatalf("%d connections open before retirement, want the idle one", n)
			}
			if res := get("a.example"); res.Err != nil {
				t.Fatal(res.Err)
			}
			if r.generation != 1 {
				t.Errorf("retired %d transports, want 1", r.generation)
			}
			if n := e.conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2: the new transport dials its own", n)
			}
			if n := c.dialer.open.Load(); n != 1 {
				t.Errorf("%d connections open, want 1: the retired transport closed its idle one", n)
			}
		})
	}
}

// BenchmarkDeadHosts measures the heap a client keeps per host that
// refused its connection, with the transport retired as the client does
// and with one transport for the whole run.
//
//	go test ./internal/fetch -run '^$' -bench DeadHosts -benchtime 20000x
func BenchmarkDeadHosts(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	_, closed, _ := net.SplitHostPort(l.Addr().String())
	l.Close() // nothing listens there now: every dial is refused
	for _, bb := range []struct {
		name        string
		maxFailures int
	}{{"retired", maxFailuresPerTransport}, {"one transport", math.MaxInt}} {
		b.Run(bb.name, func(b *testing.B) {
			e := newEnv(b)
			c := e.client(b, Options{ConnectTo: []ConnectTo{{ToHost: "127.0.0.1", ToPort: closed}}})
			c.transport.maxFailures = bb.maxFailures
			ctx := context.Background()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := 0; b.Loop(); i++ {
				if r := c.Get(ctx, Request{URL: fmt.Sprintf("https://dead%d.example/x", i)}); r.Err == nil {
					b.Fatal("a refused host answered")
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(c) // the client in use keeps what it holds
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "heap-B/dead-host")
		})
	}
}

// TestIdleConnectionPerHostInFlight: a crawl fetches a domain's catalog,
// then its cards from the same host, while hundreds of other hosts do the
// same; each host's connection must still be idle, not evicted, when its
// next request comes.
func TestIdleConnectionPerHostInFlight(t *testing.T) {
	const hosts = 150 // more than the spare idle connections alone
	e := newEnv(t)
	e.mux.HandleFunc("/x", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "{}") })
	c := e.client(t, Options{HostsInFlight: hosts,
		ConnectTo: []ConnectTo{{FromPort: "443", ToHost: e.host, ToPort: e.port}}})
	for round := range 2 {
		for i := range hosts {
			res := c.Get(context.Background(), Request{URL: fmt.Sprintf("https://h%d.example/x", i)})
			if res.Err != nil {
				t.Fatalf("round %d, host %d: %v", round, i, res.Err)
			}
		}
	}
	if n := e.conns.Load(); n != hosts {
		t.Errorf("%d connections for two requests to each of %d hosts, want %d (each reused)", n, hosts, hosts)
	}
}

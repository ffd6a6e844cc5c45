package probe

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// benchClient serves every *.example.com name from one TLS server (an empty
// FromHost in ConnectTo matches any host), so each name gets its own
// per-host slot as distinct hosts would.
func benchClient(b *testing.B, h http.Handler) Options {
	b.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.StartTLS()
	b.Cleanup(ts.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	fc, err := fetch.New(fetch.Options{ConnectTo: []fetch.ConnectTo{{FromPort: "443", ToHost: "127.0.0.1", ToPort: port}},
		RootCAs: pool, Timeout: 10 * time.Second, RetryWait: -1})
	if err != nil {
		b.Fatal(err)
	}
	return Options{HTTP: fc.HTTPClient(), Fetch: fc}
}

// probeMany probes n endpoints on distinct host names with c workers and
// reports endpoints/s and the peak live heap seen between probes.
func probeMany(b *testing.B, opts Options, n, c int) {
	b.Helper()
	p := New(opts)
	var peak atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var mu sync.Mutex
	readHeap := func() {
		mu.Lock()
		metrics.Read(sample)
		v := sample[0].Value.Uint64()
		mu.Unlock()
		for old := peak.Load(); v > old && !peak.CompareAndSwap(old, v); old = peak.Load() {
		}
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		jobs := make(chan int)
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range c {
			wg.Go(func() {
				for i := range jobs {
					r := p.Probe(context.Background(), Target{URL: fmt.Sprintf("https://mcp%d.example.com/mcp", i)})
					if r.Outcome != OutcomeOK || r.Partial {
						failed.Add(1)
					}
					readHeap()
				}
			})
		}
		for i := range n {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if f := failed.Load(); f > 0 {
			b.Fatalf("%d of %d probes failed", f, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "endpoints/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
}

// BenchmarkProbeFake1000 probes 1,000 hand-written servers at concurrency 32.
func BenchmarkProbeFake1000(b *testing.B) {
	f := &fakeMCP{t: b, tools: func(*string) ([]string, any) { return []string{"a", "b", "c"}, nil }}
	probeMany(b, benchClient(b, f), 1000, 32)
}

package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// peakHeap samples the heap while f runs. The simulated web runs in the same
// process, so the figure covers crawler and servers together.
func peakHeap(f func()) uint64 {
	var (
		peak uint64
		mu   sync.Mutex
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// BenchmarkCrawlGenerated crawls a generated web of 1,000 domains (30 %
// publish a catalog with two cards; half the remotes are real MCP servers)
// at concurrency 32, probes included, into a fresh SQLite file each round.
// Run: go test ./discover -run '^$' -bench CrawlGenerated -benchtime 3x
// (CARDCRAWL_BENCH_DOMAINS=10000 for a bigger web).
func BenchmarkCrawlGenerated(b *testing.B) {
	domains := 1000
	if n, err := strconv.Atoi(os.Getenv("CARDCRAWL_BENCH_DOMAINS")); err == nil && n > 0 {
		domains = n
	}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		web, err := simweb.New(simweb.Options{DiscardRequests: true})
		if err != nil {
			b.Fatal(err)
		}
		names, err := web.Generate(simweb.GenerateOptions{Domains: domains, CatalogShare: 0.3, CardsPerCatalog: 2,
			MCPShare: 0.5, Seed: int64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		if err := web.Start(); err != nil {
			b.Fatal(err)
		}
		fc := clientFor(b, web, 15*time.Second)
		st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		v, err := servercard.NewValidator()
		if err != nil {
			b.Fatal(err)
		}
		opts := discover.Options{Fetch: fc, Store: st, Validator: v, Concurrency: 32,
			Probe: discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{HTTP: fc.HTTPClient(), Fetch: fc})}}
		b.StartTimer()

		var sum discover.Summary
		start := time.Now()
		peak := peakHeap(func() {
			sum, err = discover.Crawl(context.Background(), opts, names)
		})
		elapsed := time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		probes := 0
		for _, n := range sum.Probes {
			probes += n
		}
		b.ReportMetric(float64(domains)/elapsed.Seconds(), "domains/s")
		b.ReportMetric(float64(probes), "probes")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		st.Close()
		web.Close()
		b.StartTimer()
	}
}

package discover_test

import (
	"context"
	"fmt"
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
			Probe: discover.ProbeOptions{Mode: discover.ProbeAuto, Prober: probe.New(probe.Options{Fetch: fc})}}
		b.StartTimer()

		var sum discover.Summary
		start := time.Now()
		peak := peakHeap(func() {
			sum, err = discover.Crawl(context.Background(), opts, discover.Names(names...))
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

// BenchmarkProbe1000 probes 1,000 endpoints on the simulated web (one
// host name each, served by real go-sdk and mcp-go servers) at concurrency
// 32 through the program's own client, and checks every probe succeeded in
// at most 4 round trips (3 plus the DELETE).
// Run: go test ./discover -run '^$' -bench Probe1000 -benchtime 3x
func BenchmarkProbe1000(b *testing.B) {
	const endpoints, concurrency = 1000, 32
	web, err := simweb.New(simweb.Options{DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	kinds := []string{simweb.KindGoSDKStateful, simweb.KindGoSDKJSON, simweb.KindMCPGoStreamable}
	var urls []string
	for i := range endpoints {
		kind := kinds[i%len(kinds)]
		h, err := simweb.MCPHandler(kind, simweb.MCPOptions{Name: kind, Tools: 5, Path: "/mcp"})
		if err != nil {
			b.Fatal(err)
		}
		host := fmt.Sprintf("mcp%d.bench.example", i)
		web.Handle(host, h)
		urls = append(urls, "https://"+host+"/mcp")
	}
	if err := web.Start(); err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	fc := clientFor(b, web, 15*time.Second)
	p := probe.New(probe.Options{Fetch: fc})

	for b.Loop() {
		work := make(chan string)
		var (
			mu       sync.Mutex
			outcomes = map[string]int{}
			maxTrips int
			wg       sync.WaitGroup
		)
		start := time.Now()
		peak := peakHeap(func() {
			for range concurrency {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for u := range work {
						r := p.Probe(context.Background(), probe.Target{URL: u, Transport: "streamable-http"})
						mu.Lock()
						outcomes[r.Outcome]++
						maxTrips = max(maxTrips, r.RoundTrips)
						mu.Unlock()
					}
				}()
			}
			for _, u := range urls {
				work <- u
			}
			close(work)
			wg.Wait()
		})
		elapsed := time.Since(start)
		if outcomes[probe.OutcomeOK] != endpoints || maxTrips > 4 {
			b.Fatalf("outcomes %v, max round trips %d; want all ok in at most 4", outcomes, maxTrips)
		}
		b.ReportMetric(endpoints/elapsed.Seconds(), "endpoints/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}

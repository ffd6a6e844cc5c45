package feed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

// benchStore is CARDCRAWL_BENCH_DB (a database built with TestFillDB, see
// BENCHMARKS.md) opened read-only with a pool of readers, or a 1,000-domain
// store built here.
func benchStore(b *testing.B) *store.DB {
	b.Helper()
	path := os.Getenv("CARDCRAWL_BENCH_DB")
	if path == "" {
		db, _ := filledStore(b, 1000)
		return db
	}
	db, err := store.Open(context.Background(), path, store.Options{ReadOnly: true, ReadConns: 8})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// peakHeap samples the heap in use while fn runs.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}

// BenchmarkExport writes the whole feed in every format to io.Discard,
// reporting records per second and the peak heap.
//
//	CARDCRAWL_BENCH_DB=/tmp/100k.db go test ./internal/feed -run '^$' -bench Export -benchtime 1x
func BenchmarkExport(b *testing.B) {
	db := benchStore(b)
	ctx := context.Background()
	n, err := db.CountFeedServers(ctx, store.FeedQuery{})
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range feed.Formats {
		b.Run(f.Name, func(b *testing.B) {
			var heap uint64
			for b.Loop() {
				heap = max(heap, peakHeap(func() {
					if err := f.Write(ctx, io.Discard, db, feed.WriteOptions{}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "servers/s")
			b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkServe loads /v0.1/servers?limit=100 (pages spread over the
// whole list) and / with 1 and 50 concurrent clients, and, in the same run,
// a static handler returning the same page bytes from memory: the floor.
// It reports p50 and p99 latency of each.
//
//	CARDCRAWL_BENCH_DB=/tmp/100k.db go test ./internal/feed -run '^$' -bench Serve -benchtime 2000x
func BenchmarkServe(b *testing.B) {
	db := benchStore(b)
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: db}))
	defer srv.Close()
	// Cursors spread over the list, so pages are not all the first one.
	var paths []string
	cursor := ""
	for len(paths) < 50 {
		path := "/v0.1/servers?limit=100"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		paths = append(paths, path)
		var page listPage
		body := fetch(b, srv.URL+path)
		if err := jsonUnmarshal(body, &page); err != nil {
			b.Fatal(err)
		}
		if cursor = page.Metadata.NextCursor; cursor == "" {
			break
		}
		for range 10 { // skip ahead
			body := fetch(b, srv.URL+"/v0.1/servers?limit=100&cursor="+cursor)
			_ = jsonUnmarshal(body, &page)
			if page.Metadata.NextCursor == "" {
				break
			}
			cursor = page.Metadata.NextCursor
		}
	}
	first := fetch(b, srv.URL+paths[0])
	static := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(first)
	}))
	defer static.Close()
	for _, clients := range []int{1, 50} {
		b.Run(fmt.Sprintf("list-%dclients", clients), func(b *testing.B) {
			p50, p99 := load(b, srv.URL, paths, clients)
			f50, f99 := load(b, static.URL, []string{"/"}, clients)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(f50, "floor-p50-ms")
			b.ReportMetric(f99, "floor-p99-ms")
		})
	}
	b.Run("page", func(b *testing.B) {
		p50, p99 := load(b, srv.URL, []string{"/"}, 1)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
	})
}

func fetch(b *testing.B, u string) []byte {
	b.Helper()
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v", u, resp.StatusCode, err)
	}
	return body
}

// load makes b.N requests from clients goroutines, cycling through paths,
// and returns the p50 and p99 latency in milliseconds.
func load(b *testing.B, base string, paths []string, clients int) (p50, p99 float64) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t := time.Now()
				resp, err := c.Get(base + paths[i%len(paths)])
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// BenchmarkSiteCounts is the summary page's count of every server
// (CARDCRAWL_BENCH_DB names a database; 1,000 servers otherwise).
func BenchmarkSiteCounts(b *testing.B) {
	db := benchStore(b)
	ctx := context.Background()
	for b.Loop() {
		c, err := db.SiteCounts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(c.Total), "servers")
	}
}

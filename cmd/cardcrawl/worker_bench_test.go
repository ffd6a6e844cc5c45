package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/store"
)

// BenchmarkWorkers crawls a generated web with 100 ms per response using 1,
// 2 and 4 worker processes on one PostgreSQL database, and reports
// domains/s for the whole fleet and the largest peak RSS of any worker.
// CARDCRAWL_BENCH_DOMAINS sets the web's size (default 2000).
func BenchmarkWorkers(b *testing.B) {
	n := 2000
	if v, err := strconv.Atoi(os.Getenv("CARDCRAWL_BENCH_DOMAINS")); err == nil && v > 0 {
		n = v
	}
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for range b.N {
				rate, rss := benchWorkers(b, workers, n)
				b.ReportMetric(rate, "domains/s")
				b.ReportMetric(rss, "peak-RSS-MiB/worker")
			}
		})
	}
}

func benchWorkers(b *testing.B, workers, n int) (rate, rssMiB float64) {
	b.StopTimer()
	ctx := context.Background()
	web, err := simweb.New(simweb.Options{DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	domains, err := web.Generate(simweb.GenerateOptions{Domains: n, CatalogShare: 0.3, CardsPerCatalog: 2,
		MCPShare: 0.5, Seed: 3, Latency: 100 * time.Millisecond, Jitter: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	if err := web.Start(); err != nil {
		b.Fatal(err)
	}
	defer web.Close()
	dir := b.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		b.Fatal(err)
	}
	dsn := pgtest.NewDB(b)
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.AddDomains(ctx, domains); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	start := time.Now()
	var procs []*runningProc
	for range workers {
		procs = append(procs, startProc(b, "worker", "--db", dsn, "--connect-to", web.ConnectTo(), "--ca-cert", ca,
			"--idle", "200ms", "--timeout", "15s"))
	}
	deadline := time.Now().Add(30 * time.Minute)
	for {
		// One index range, not Status: its pass over every domain, ten
		// times a second, cost PostgreSQL a third of its CPU in this
		// benchmark at 10,000 domains.
		var done int
		if err := st.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM domains WHERE state = 'done'`).Scan(&done); err != nil {
			b.Fatal(err)
		}
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not done after 30 minutes: %d of %d", done, n)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition, with a deadline
	}
	elapsed := time.Since(start)
	b.StopTimer()
	var peak int64
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // KiB on Linux
		}
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			b.Errorf("worker exit %d: %s", code, p.stderr.String())
		}
	}
	return float64(n) / elapsed.Seconds(), float64(peak) / 1024
}

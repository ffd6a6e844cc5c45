package main

import (
	"os"
	"runtime/debug"
)

// streamingGC tunes the collector for a command that streams the feed:
// rows pass through a small live heap (a page of records) at a high
// allocation rate, so with the default GOGC=100 the collector runs every
// few megabytes and took about a third of an export's CPU at 100,000
// servers (BENCHMARKS.md). Collecting at five times the live heap instead
// of twice cuts that work, and the soft memory limit keeps a large live
// heap (one entry with a huge card) from growing five times over. GOGC and
// GOMEMLIMIT set in the environment win.
func streamingGC(limit int64) { tuneGC(400, limit) }

// crawlGC tunes the collector for crawl and worker: a crawl allocates
// about 150 KB per domain (most of it in TLS handshakes) and keeps only a
// few MB live, so at GOGC=100 the collector runs every few megabytes and
// cost ~7 % of a crawl's CPU (BENCHMARKS.md, "Crawl"). Collecting at three
// times the live heap halves that. What is live grows with the requests in
// flight (~30 KB each: connection buffers and handshake state), and three
// times that let a crawl of 1,024 hosts at once reach 200 MB of RSS; the
// soft limit, sized for the concurrency, makes such a crawl collect
// earlier instead of growing.
func crawlGC(concurrency int) { tuneGC(200, crawlMemoryLimit(concurrency)) }

// crawlMemoryLimit is the crawl's soft memory limit: a base for the
// store, the domain list and the runtime, and 64 KiB for each request in
// flight, about twice what one keeps live.
func crawlMemoryLimit(concurrency int) int64 {
	return 64<<20 + int64(concurrency)*64<<10
}

// tuneGC sets the collector's target and, when limit > 0, a soft memory
// limit; GOGC and GOMEMLIMIT set in the environment win.
func tuneGC(percent int, limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

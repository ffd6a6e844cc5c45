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
func streamingGC(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}

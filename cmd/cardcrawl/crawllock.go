package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// lockCrawl takes the database for a command that fetches from the crawled
// web: a crawl (or a bulk probe) alone, workers together. A crawl passes
// no host gate and leases no domain, so two on one database would crawl
// the same domains, and fetch from the same hosts, at once; the second is
// refused instead (exit 3) with what the first said of itself.
func lockCrawl(ctx context.Context, st *store.DB, mode store.CrawlMode, command string) (*store.CrawlLock, error) {
	host, _ := os.Hostname()
	// PostgreSQL shows it as the session's application_name (63 bytes).
	holder := fmt.Sprintf("%s, pid %d on %s since %s", command, os.Getpid(), host, time.Now().UTC().Format("2006-01-02T15:04Z"))
	l, err := st.LockCrawl(ctx, mode, holder)
	if errors.Is(err, store.ErrCrawlBusy) {
		return nil, fmt.Errorf("%w; %s", err, busyAdvice(mode))
	}
	return l, err
}

func busyAdvice(mode store.CrawlMode) string {
	if mode == store.CrawlShared {
		return "a worker starts once it has ended"
	}
	return "run this once it has ended, or, with workers, put domains on their frontier with 'cardcrawl domains add'"
}

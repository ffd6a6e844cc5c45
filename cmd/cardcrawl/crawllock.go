package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/termsafe"
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

// The pauses between tries while --wait waits: a crawl that just ended is
// noticed soon, one that goes on is asked a few times a minute.
const (
	waitPollMin = 250 * time.Millisecond
	waitPollMax = 15 * time.Second
)

// waitCrawl is lockCrawl for a crawl alone that may wait up to wait for
// the database (--wait), saying once on stderr what it waits for.
func waitCrawl(ctx context.Context, st *store.DB, command string, wait time.Duration, stderr io.Writer) (*store.CrawlLock, error) {
	deadline := time.Now().Add(wait)
	poll := waitPollMin
	told := false
	for {
		l, err := lockCrawl(ctx, st, store.CrawlAlone, command)
		left := time.Until(deadline)
		if !errors.Is(err, store.ErrCrawlBusy) || left <= 0 {
			return l, err
		}
		if !told && stderr != nil {
			var be *store.CrawlBusyError
			holder := "workers"
			if errors.As(err, &be) && be.Holder != "" {
				holder = be.Holder
			}
			fmt.Fprintf(stderr, "cardcrawl: waiting up to %s for the database, held by %s\n", wait, termsafe.String(holder))
			told = true
		}
		t := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errInterrupted
		case <-t.C:
		}
		poll = min(2*poll, waitPollMax)
	}
}

// lockCheckEvery is how often a command holding the crawl lock makes sure
// it still does: a PostgreSQL lock goes with its session (store's
// CrawlLock.Check), and a crawl going on beside another would fetch from
// the same hosts at once, for up to this long. A check is a ping of one
// connection (nothing on SQLite), so it can be frequent.
const lockCheckEvery = 2 * time.Second

// checkPeriods is how many periods one check of the lock may take.
const checkPeriods = 5

// lockChecker is what guardCrawl checks (a *store.CrawlLock).
type lockChecker interface {
	Check(ctx context.Context) error
}

// guardCrawl checks lock every period while the command runs. When it is
// lost, the returned context is cancelled, so the run stops as after
// Ctrl-C with what it did stored; stop ends the checks and returns why
// the lock was lost (nil when it was not), for the command to return
// instead of "interrupted"; a second call returns the same.
func guardCrawl(ctx context.Context, lock lockChecker, every time.Duration, log *slog.Logger) (_ context.Context, stop func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// A check that hangs (a network partition) must not hold up
			// every later one; but one given up on may take its session
			// (and the lock) with it, so a slow database gets a while.
			cctx, cancelCheck := context.WithTimeout(ctx, checkPeriods*every)
			err := lock.Check(cctx)
			cancelCheck()
			if errors.Is(err, store.ErrCrawlLockLost) {
				log.Error("stopping: the crawl lock was lost", "err", err)
				cancel(err)
				return
			}
			if err != nil && ctx.Err() == nil {
				log.Warn("could not check the crawl lock; checking again later", "err", err)
			}
		}
	}()
	return ctx, sync.OnceValue(func() error {
		close(done)
		<-ended
		cause := context.Cause(ctx)
		cancel(nil)
		if errors.Is(cause, store.ErrCrawlLockLost) {
			return cause
		}
		return nil
	})
}

// reportLost, deferred with a command's named error and guardCrawl's stop,
// ends the checks and puts why the lock was lost, when it was, in place of
// what the command returns: the run stopped for that, not as it seemed.
func reportLost(err *error, stop func() error) {
	if why := stop(); why != nil {
		*err = why
	}
}

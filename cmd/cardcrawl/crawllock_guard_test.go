package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// checks is a lock whose checks succeed until the nth, which finds it
// lost; each check is told on checked when someone listens.
type checks struct {
	n, done atomic.Int32
	checked chan struct{}
}

func (c *checks) Check(context.Context) error {
	select {
	case c.checked <- struct{}{}:
	default:
	}
	if c.done.Add(1) >= c.n.Load() {
		return fmt.Errorf("%w: held by crawl, pid 9", store.ErrCrawlLockLost)
	}
	return nil
}

// TestGuardCrawl: a lost lock cancels the run's context and is what the
// command returns; a lock never lost cancels nothing and returns nil.
func TestGuardCrawl(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	lock := &checks{}
	lock.n.Store(3)
	ctx, stop := guardCrawl(context.Background(), lock, time.Millisecond, log)
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the run goes on after its lock was lost")
	}
	if err := stop(); !errors.Is(err, store.ErrCrawlLockLost) || lock.done.Load() != 3 {
		t.Errorf("stop = %v after %d checks, want lost after 3", err, lock.done.Load())
	}
	if err := stop(); !errors.Is(err, store.ErrCrawlLockLost) {
		t.Errorf("second stop = %v", err)
	}

	held := &checks{checked: make(chan struct{})}
	held.n.Store(1 << 30)
	ctx, stop = guardCrawl(context.Background(), held, time.Millisecond, log)
	for range 3 {
		select {
		case <-held.checked:
		case <-time.After(time.Minute):
			t.Fatal("the lock is not checked")
		}
	}
	if ctx.Err() != nil {
		t.Fatal("a held lock cancelled the run")
	}
	if err := stop(); err != nil || ctx.Err() == nil {
		t.Errorf("stop = %v, context %v; want nil and the context ended with the run", err, ctx.Err())
	}
}

// hangs is a lock whose first check hangs until its context ends (a
// network partition under a PostgreSQL session); the next finds it lost.
type hangs struct{ calls atomic.Int32 }

func (h *hangs) Check(ctx context.Context) error {
	if h.calls.Add(1) == 1 {
		<-ctx.Done()
		return ctx.Err()
	}
	return fmt.Errorf("%w: held by crawl, pid 9", store.ErrCrawlLockLost)
}

// TestGuardCrawlCheckThatHangs: a check that hangs is given up after a
// few periods, so the next check still runs and finds the lock lost.
func TestGuardCrawlCheckThatHangs(t *testing.T) {
	lock := &hangs{}
	ctx, stop := guardCrawl(context.Background(), lock, time.Millisecond, slog.New(slog.DiscardHandler))
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("a hung check kept the lost lock from being found")
	}
	if err := stop(); !errors.Is(err, store.ErrCrawlLockLost) || lock.calls.Load() != 2 {
		t.Errorf("stop = %v after %d checks, want lost after 2", err, lock.calls.Load())
	}
}

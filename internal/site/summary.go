package site

import (
	"context"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// The summary counts every server, which takes seconds at 100,000 servers
// (1.7 s on an idle machine, 6.3 s under load), so one count is shared by
// the requests that arrive while it runs and kept for a while after: a
// crowd on /summary costs one count, not one each. It is kept for twenty
// times what it took, so counting costs at most a twentieth of a core
// however often the page is asked for (until a count takes over 15 s, the
// cap's twentieth), and a small database's summary is never more than a
// second old.
const (
	summaryKeepFactor = 20
	summaryKeepMin    = time.Second
	summaryKeepMax    = 5 * time.Minute
)

// summaryData is what the summary page shows, as counted at one time.
type summaryData struct {
	counts   store.SiteCounts
	outcomes []store.OutcomeCount
	at       time.Time
}

// summaryCounts hands out the latest summary count, counting again when it
// is older than it may be kept.
type summaryCounts struct {
	store Store
	now   func() time.Time

	mu      sync.Mutex
	kept    *summaryRound // the last count that succeeded
	running *summaryRound
}

type summaryRound struct {
	done chan struct{}
	data summaryData
	keep time.Duration
	err  error
}

// keepFor is how long a count that took took may be served.
func keepFor(took time.Duration) time.Duration {
	return min(max(summaryKeepFactor*took, summaryKeepMin), summaryKeepMax)
}

// get returns a kept count still young enough, or the count under way, or
// a new one. A new count runs in the request that starts it, so the HTTP
// server's drain waits for it before the store closes; it does not stop
// when that request's client goes away, since others may be waiting.
func (c *summaryCounts) get(ctx context.Context) (summaryData, error) {
	c.mu.Lock()
	if k := c.kept; k != nil && c.now().Sub(k.data.at) < k.keep {
		c.mu.Unlock()
		return k.data, nil
	}
	r := c.running
	if r == nil {
		r = &summaryRound{done: make(chan struct{})}
		c.running = r
		c.mu.Unlock()
		c.count(context.WithoutCancel(ctx), r)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-r.done:
		return r.data, r.err
	case <-ctx.Done():
		return summaryData{}, ctx.Err()
	}
}

func (c *summaryCounts) count(ctx context.Context, r *summaryRound) {
	begun := c.now()
	r.data.counts, r.err = c.store.SiteCounts(ctx)
	if r.err == nil {
		r.data.outcomes, r.err = c.store.ProbeOutcomeCounts(ctx, store.SourceAll)
	}
	r.data.at = c.now()
	r.keep = keepFor(r.data.at.Sub(begun))
	c.mu.Lock()
	c.running = nil
	if r.err == nil {
		c.kept = r
	}
	c.mu.Unlock()
	close(r.done)
}

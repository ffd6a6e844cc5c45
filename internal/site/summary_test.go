package site

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// countingStore counts the summary's counts; the first waits for release.
type countingStore struct {
	hostileStore
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
	fail    atomic.Bool
}

func (c *countingStore) SiteCounts(ctx context.Context) (store.SiteCounts, error) {
	if c.calls.Add(1) == 1 {
		close(c.entered)
		<-c.release
	}
	if c.fail.Load() {
		return store.SiteCounts{}, errors.New("disk on fire")
	}
	return store.SiteCounts{Total: int(c.calls.Load())}, nil
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestSummaryShared: requests that arrive while the summary is counted, or
// while its count may be kept, share one count; an older count, or a
// failed one, is counted again.
func TestSummaryShared(t *testing.T) {
	st := &countingStore{entered: make(chan struct{}), release: make(chan struct{})}
	clock := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	h := Handler(Options{Store: st, Now: clock.now})

	var wg sync.WaitGroup
	codes := make([]int, 20)
	wg.Go(func() { resp, _ := get(t, h, "/summary"); codes[0] = resp.StatusCode })
	<-st.entered // the first count runs and waits
	for i := 1; i < len(codes); i++ {
		wg.Go(func() { resp, _ := get(t, h, "/summary"); codes[i] = resp.StatusCode })
	}
	close(st.release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	if n := st.calls.Load(); n != 1 {
		t.Fatalf("%d requests counted %d times, want once", len(codes), n)
	}
	_, body := get(t, h, "/summary")
	if !strings.Contains(body, "Counted at 2026-12-01T12:00:00Z") {
		t.Error("the page does not say when it was counted")
	}

	// The count took no time on this clock: it is kept for the minimum.
	clock.add(summaryKeepMin - time.Millisecond)
	get(t, h, "/summary")
	if n := st.calls.Load(); n != 1 {
		t.Fatalf("a count younger than it may be kept was counted again (%d counts)", n)
	}
	clock.add(time.Millisecond)
	if _, body := get(t, h, "/summary"); !strings.Contains(body, "2 server(s)") {
		t.Errorf("an old count was served: %q", body)
	}

	st.fail.Store(true)
	clock.add(summaryKeepMin)
	if resp, _ := get(t, h, "/summary"); resp.StatusCode == http.StatusOK {
		t.Error("a failed count answered 200")
	}
	st.fail.Store(false)
	if resp, body := get(t, h, "/summary"); resp.StatusCode != http.StatusOK || !strings.Contains(body, "4 server(s)") {
		t.Errorf("after a failed count: status %d, %q", resp.StatusCode, body)
	}
}

func TestKeepFor(t *testing.T) {
	for _, tc := range []struct{ took, want time.Duration }{
		{0, summaryKeepMin},
		{10 * time.Millisecond, summaryKeepMin},
		{time.Second, 20 * time.Second},
		{time.Hour, summaryKeepMax},
	} {
		if got := keepFor(tc.took); got != tc.want {
			t.Errorf("keepFor(%v) = %v, want %v", tc.took, got, tc.want)
		}
	}
}

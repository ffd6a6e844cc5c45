package feed_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

// readCounter counts the store reads behind the API's answers.
type readCounter struct {
	*store.DB
	reads atomic.Int32
}

func (c *readCounter) FeedEntries(ctx context.Context, q store.EntryQuery) ([]store.FeedEntry, bool, error) {
	c.reads.Add(1)
	return c.DB.FeedEntries(ctx, q)
}

func (c *readCounter) FeedEntryPage(ctx context.Context, q store.EntryQuery) (store.EntryPage, error) {
	c.reads.Add(1)
	return c.DB.FeedEntryPage(ctx, q)
}

func (c *readCounter) FeedEntriesNamed(ctx context.Context, q store.NamedQuery) ([]store.FeedEntry, error) {
	c.reads.Add(1)
	return c.DB.FeedEntriesNamed(ctx, q)
}

// TestAPIAnswersKeptPerVersion: between two writes, asking for the same
// API answer again reads the store once and gets the same bytes and
// headers; a write makes the next answer a fresh read that shows it; an
// error is never kept; a crowd asking at once gets one answer.
func TestAPIAnswersKeptPerVersion(t *testing.T) {
	db, _ := filledStore(t, 5)
	rc := &readCounter{DB: db}
	srv := httptest.NewServer(feed.Handler(feed.ServerOptions{Store: rc}))
	t.Cleanup(srv.Close)
	c := client{t, srv.URL}
	type answer struct {
		Code   int
		Header http.Header
		Body   string
	}
	get := func(path string) answer {
		code, h, body := c.get(path)
		h.Del("Date")
		return answer{code, h, body}
	}

	paths := []string{"/v0.1/servers?limit=2", "/v0.1/servers/com.example.d000001%2Fa/versions",
		"/v0.1/servers/com.example.d000001%2Fa/versions/latest"}
	first := map[string]answer{}
	for _, p := range paths {
		before := rc.reads.Load()
		first[p] = get(p)
		again := get(p)
		if first[p].Code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, first[p].Code, first[p].Body)
		}
		if diff := cmp.Diff(first[p], again); diff != "" {
			t.Errorf("%s asked again (-first +again):\n%s", p, diff)
		}
		if n := rc.reads.Load() - before; n != 1 {
			t.Errorf("%s asked twice read the store %d times, want 1", p, n)
		}
	}

	insert(t, db, 1)
	before := rc.reads.Load()
	after := get("/v0.1/servers?limit=100")
	if n := rc.reads.Load() - before; n != 1 {
		t.Errorf("after a write: %d reads, want 1", n)
	}
	if !containsAll(after.Body, "com.example/early-1", "com.example/late-1") {
		t.Errorf("the answer after a write does not show it:\n%s", after.Body)
	}
	if again := get("/v0.1/servers?limit=2"); again.Header.Get("ETag") == first["/v0.1/servers?limit=2"].Header.Get("ETag") {
		t.Errorf("the answer after a write kept the old ETag %s", again.Header.Get("ETag"))
	}

	for range 2 {
		bad := get("/v0.1/servers?limit=0")
		if bad.Code != http.StatusBadRequest || bad.Header.Get("ETag") != "" {
			t.Errorf("limit=0: %d, ETag %q; want 400 without an ETag", bad.Code, bad.Header.Get("ETag"))
		}
	}
	if code, _, _ := c.get("/v0.1/servers/nobody%2Fnothing/versions"); code != http.StatusNotFound {
		t.Errorf("an unknown name: %d, want 404", code)
	}
	before = rc.reads.Load()
	if code, _, _ := c.get("/v0.1/servers/nobody%2Fnothing/versions"); code != http.StatusNotFound {
		t.Errorf("an unknown name again: %d, want 404", code)
	}
	if n := rc.reads.Load() - before; n != 1 {
		t.Errorf("a 404 asked again read the store %d times, want 1 (errors are not kept)", n)
	}

	var wg sync.WaitGroup
	bodies := make([]string, 20)
	for i := range bodies {
		wg.Go(func() { _, _, bodies[i] = c.get("/v0.1/servers?limit=3") })
	}
	wg.Wait()
	for i, b := range bodies {
		if b != bodies[0] {
			t.Errorf("client %d of a crowd got a different answer:\n%s\nwant\n%s", i, b, bodies[0])
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

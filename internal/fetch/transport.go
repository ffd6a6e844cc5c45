package fetch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// guard is the outermost RoundTripper: everything that must hold for every
// request of the program (streaming users included) lives here or below,
// not in Get.
type guard struct {
	next      http.RoundTripper // retry once, then the SSRF-dialing transport
	userAgent string
	timeout   time.Duration
	slots     *slots
	gate      HostGate // nil: the slot alone
}

// strippedHeaders are never sent: cardcrawl carries no credentials and no
// ambient authority, whatever a caller or a redirect put on the request.
var strippedHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper must close it, even on error
		}
		return nil, err
	}
	if req.URL == nil {
		return fail(fmt.Errorf("%w: request without url", ErrInvalidURL))
	}
	if err := CheckURL(req.URL.String()); err != nil {
		return fail(err)
	}
	release, err := g.acquire(req.Context(), slotKey(req.URL))
	if err != nil {
		return fail(err)
	}
	// The timeout starts once the host's slot is ours, so waiting behind a
	// slow request to the same host does not eat this request's budget.
	ctx, cancel := context.WithTimeout(req.Context(), g.timeout)
	ctx = withSendCounter(ctx)
	out := req.Clone(ctx)
	for _, h := range strippedHeaders {
		out.Header.Del(h)
	}
	if out.Header.Get("User-Agent") == "" {
		out.Header.Set("User-Agent", g.userAgent)
	}
	resp, err := g.next.RoundTrip(out)
	if err != nil {
		cancel()
		release(0)
		return nil, err
	}
	wait := restFor(resp)
	resp.Body = &guardedBody{ReadCloser: resp.Body, ctx: ctx, done: func() { cancel(); release(wait) }}
	return resp, nil
}

// acquire takes the host's in-process slot, then the shared gate if there
// is one; the release gives both back, telling the gate how long the host
// asked to rest.
func (g *guard) acquire(ctx context.Context, host string) (func(wait time.Duration), error) {
	release, err := g.slots.acquire(ctx, host)
	if err != nil {
		return nil, err
	}
	if g.gate == nil {
		return func(time.Duration) { release() }, nil
	}
	shared, err := g.gate.Acquire(ctx, host)
	if err != nil {
		release()
		return nil, err
	}
	return func(wait time.Duration) { shared(wait); release() }, nil
}

// restFor is how long a response asks its host to be left alone.
func restFor(resp *http.Response) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	wait, _ := RetryAfter(resp.Header.Get("Retry-After"), time.Now())
	return wait
}

// guardedBody holds the host slot and the request timeout until the caller
// closes the body; streaming readers (SSE) therefore keep the slot while
// they listen.
type guardedBody struct {
	io.ReadCloser
	ctx  context.Context
	once sync.Once
	done func()
}

// Read turns an end of body that comes after the deadline or a
// cancellation into that error: when the transport closes a timed-out TLS
// connection, its close_notify can make the server end the chunked body
// cleanly, and a truncated document would pass for a whole one.
func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && b.ctx.Err() != nil {
		return n, fmt.Errorf("body cut short: %w", context.Cause(b.ctx))
	}
	return n, err
}

func (b *guardedBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

func slotKey(u *url.URL) string {
	// One host, one slot, however its name is spelled.
	if h, err := asciiHost(u.Hostname()); err == nil {
		return h
	}
	return strings.TrimRight(strings.ToLower(u.Hostname()), ".")
}

// slots gives one in-flight request per host name across the client.
// Entries are reference-counted and removed when idle, so a crawl over
// millions of hosts does not grow the map without bound.
type slots struct {
	mu sync.Mutex
	m  map[string]*slot
	// onWait, when set (tests only), is called when a request has to queue
	// behind another one to the same host.
	onWait func(host string)
}

type slot struct {
	ch   chan struct{}
	refs int
}

func newSlots() *slots { return &slots{m: make(map[string]*slot)} }

func (s *slots) acquire(ctx context.Context, host string) (release func(), err error) {
	s.mu.Lock()
	sl := s.m[host]
	if sl == nil {
		sl = &slot{ch: make(chan struct{}, 1)}
		s.m[host] = sl
	}
	sl.refs++
	s.mu.Unlock()

	select {
	case sl.ch <- struct{}{}:
	default:
		if s.onWait != nil {
			s.onWait(host)
		}
		select {
		case sl.ch <- struct{}{}:
		case <-ctx.Done():
			s.drop(host, sl)
			return nil, fmt.Errorf("waiting for %s: %w", host, ctx.Err())
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-sl.ch
			s.drop(host, sl)
		})
	}, nil
}

func (s *slots) drop(host string, sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl.refs--
	if sl.refs == 0 {
		delete(s.m, host)
	}
}

// sendCounter counts how often one exchange was put on a connection. The
// transport itself resends an idempotent request once when a reused idle
// connection turns out dead; counting those sends keeps the total to one
// retry whoever makes it.
type sendCounter struct{ n atomic.Int32 }

type sendCounterKey struct{}

func withSendCounter(ctx context.Context) context.Context {
	sc := &sendCounter{}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { sc.n.Add(1) },
	})
	return context.WithValue(ctx, sendCounterKey{}, sc)
}

// sends reports how often the request of ctx was put on a connection so
// far, or 0 if ctx does not count.
func sends(ctx context.Context) int {
	if sc, ok := ctx.Value(sendCounterKey{}).(*sendCounter); ok {
		return int(sc.n.Load())
	}
	return 0
}

// noCloseIdle hides http.Transport's CloseIdleConnections from the client
// that retryablehttp wraps: retryablehttp calls it after every failed
// request, which would drop the pooled connections of every other host.
type noCloseIdle struct{ rt http.RoundTripper }

func (n noCloseIdle) RoundTrip(req *http.Request) (*http.Response, error) { return n.rt.RoundTrip(req) }

// retryLogger routes retryablehttp's messages to slog at debug level: a
// failed fetch is data in a crawl, not an error of the program.
type retryLogger struct{ l *slog.Logger }

func (r retryLogger) Error(msg string, kv ...any) { r.l.Debug(msg, kv...) }
func (r retryLogger) Info(msg string, kv ...any)  { r.l.Debug(msg, kv...) }
func (r retryLogger) Debug(msg string, kv ...any) { r.l.Debug(msg, kv...) }
func (r retryLogger) Warn(msg string, kv ...any)  { r.l.Debug(msg, kv...) }

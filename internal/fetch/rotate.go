package fetch

import (
	"net/http"
	"sync"
)

// http.Transport keeps, for every host it ever waited on a connection for,
// an entry in its queue of requests waiting for an idle connection (with
// the request's context). The entry goes only when a connection to that
// host later becomes idle, which never happens for a host that refused,
// hung or did not resolve (golang/go#76784): a crawl of a million domains,
// a sixth of them dead, would hold a sixth of a million such entries. A
// transport is therefore used for a bounded number of failed requests, and
// of requests, and then replaced; the old one closes its idle connections
// and is dropped once its requests in flight are done.
const (
	maxFailuresPerTransport = 1024
	maxRequestsPerTransport = 1 << 16
)

// rotating is an http.RoundTripper over a series of transports, each
// retired after maxFailures failed round trips or maxRequests round
// trips, whichever comes first.
type rotating struct {
	newTransport             func() *http.Transport
	maxFailures, maxRequests int

	mu                 sync.Mutex
	cur                *http.Transport
	requests, failures int
	generation         int // transports retired so far (tests read it)
}

func newRotating(newTransport func() *http.Transport) *rotating {
	return &rotating{newTransport: newTransport, maxFailures: maxFailuresPerTransport,
		maxRequests: maxRequestsPerTransport, cur: newTransport()}
}

func (r *rotating) RoundTrip(req *http.Request) (*http.Response, error) {
	t := r.take()
	resp, err := t.RoundTrip(req)
	if err != nil {
		r.mu.Lock()
		if r.cur == t {
			r.failures++
		}
		r.mu.Unlock()
	}
	return resp, err
}

// take returns the transport for the next round trip, replacing the
// current one first when it has served its share.
func (r *rotating) take() *http.Transport {
	r.mu.Lock()
	if r.failures >= r.maxFailures || r.requests >= r.maxRequests {
		old := r.cur
		r.cur, r.requests, r.failures = r.newTransport(), 0, 0
		r.generation++
		// Idle connections close now, busy ones when their response is
		// done: nothing keeps the old transport alive after that.
		defer old.CloseIdleConnections()
	}
	r.requests++
	t := r.cur
	r.mu.Unlock()
	return t
}

// CloseIdleConnections closes the current transport's idle connections
// (retired ones closed theirs when retired).
func (r *rotating) CloseIdleConnections() {
	r.mu.Lock()
	t := r.cur
	r.mu.Unlock()
	t.CloseIdleConnections()
}

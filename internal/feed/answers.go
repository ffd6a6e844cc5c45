package feed

import (
	"bytes"
	"container/list"
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// answers keeps the API's recent answers for the store version they were
// read at, so that many clients asking for the same page between two
// writes cost one read of the store, and a crowd asking at once waits for
// that one read instead of each running it. The version is the one the
// ETag is made of: an answer is served only while the store is at the
// version it was read at, so it is exactly what a read would give (as a
// 304 is). Only the API's pages are kept, each at most maxAnswer bytes;
// the feed files stream and are never held.
//
// A checked answer (one whose handler says how to tell it is still what a
// read gives: a list page, by the span of the feed it shows) outlives the
// version: when the store has moved on, one check of the answer, shared by
// the requests that wait for it, either vouches for it at the new version
// or drops it for a read. It keeps its ETag while it lives.
type answers struct {
	mu       sync.Mutex
	byKey    map[string]*list.Element // of *answer
	lru      list.List                // most recently used first
	bytes    int
	maxBytes int
	// tick orders requests against the reads and checks they may use: a
	// request may take what a read or check begun after it learnt the
	// store's version found.
	tick atomic.Uint64
}

// answer is one kept API answer, or one being read (ready open).
type answer struct {
	key, version string
	ready        chan struct{}
	// Set before ready closes; ok false when the read did not give a
	// keepable answer (an error, or too large), so waiters read their own.
	ok     bool
	header http.Header
	body   []byte

	// checked: the answer is read by a handler that may say how to check
	// it (validity); check is that, set with ok.
	checked bool
	check   func(context.Context) (version string, still bool, err error)
	// tick is when the read or the last check that vouched for it began;
	// running and next are its check rounds (c.mu).
	tick          uint64
	running, next *checkRound
}

// validity is what a handler says of a whole answer it wrote: the store
// version it read it at, and how to tell later whether it still is what a
// read would give (check reads the store's version first, then whether
// the answer still holds at it; nil: it holds at its version only).
type validity struct {
	version string
	check   func(context.Context) (version string, still bool, err error)
}

// keptHandler writes an answer, and says how to check it (nil: it holds
// at the version it was asked at only).
type keptHandler func(http.ResponseWriter, *http.Request) *validity

// checkRound is one check of a checked answer, shared by the requests
// that wait for it.
type checkRound struct {
	done chan struct{}
	tick uint64
}

const (
	maxAnswer        = 1 << 20
	maxAnswersMemory = 16 << 20
	maxAnswers       = 1024
	// maxRounds bounds how often one request waits for another's read or
	// check before it reads for itself.
	maxRounds = 4
)

func newAnswers(maxBytes int) *answers {
	return &answers{byKey: make(map[string]*list.Element), maxBytes: maxBytes}
}

// serveKept is serve for a handler whose answers may be checked (checked
// true): one it says how to check is served while its check vouches for
// it, whatever the version.
func (c *answers) serveKept(w http.ResponseWriter, r *http.Request, key, version string, checked bool, h keptHandler) {
	tick := c.tick.Add(1) // the request knows version from here on
	for range maxRounds {
		c.mu.Lock()
		el := c.byKey[key]
		if el == nil {
			c.read(w, r, key, version, checked, h) // unlocks
			return
		}
		a := el.Value.(*answer)
		switch {
		case a.version == version || (a.checked && a.tick > tick):
			// Read at this version, or read or vouched for since the
			// request learnt it.
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			c.answer(w, r, a, h)
			return
		case a.checked && !isClosed(a.ready):
			// Being read for an earlier version: a check of what it
			// finds costs less than another read.
			c.mu.Unlock()
			if !wait(r, a.ready) {
				return
			}
		case a.checked && a.check != nil:
			rd := c.round(el, a)
			c.mu.Unlock()
			if !wait(r, rd.done) {
				return
			}
		default:
			c.remove(el) // kept for another version
			c.read(w, r, key, version, checked, h)
			return
		}
	}
	h(w, r) // others' reads kept being outdated: read alone
}

// answer writes a kept answer once it is read: a 304 when the request
// names its ETag.
func (c *answers) answer(w http.ResponseWriter, r *http.Request, a *answer, h keptHandler) {
	if !wait(r, a.ready) {
		return
	}
	if !a.ok {
		h(w, r) // the read it waited for gave nothing to keep
		return
	}
	if etag := a.header.Get("ETag"); a.checked && matches(r.Header.Get("If-None-Match"), etag) {
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", a.header.Get("Cache-Control"))
		w.WriteHeader(http.StatusNotModified)
		return
	}
	replace(w.Header(), a.header)
	_, _ = w.Write(a.body)
}

// read runs h for r as the entry of key at version, and keeps what it
// wrote; c.mu is held, and released.
func (c *answers) read(w http.ResponseWriter, r *http.Request, key, version string, checked bool, h keptHandler) {
	a := &answer{key: key, version: version, ready: make(chan struct{}), checked: checked, tick: c.tick.Add(1)}
	el := c.lru.PushFront(a)
	c.byKey[key] = el
	c.mu.Unlock()

	rec := &recorder{w: w, header: w.Header().Clone(), status: http.StatusOK}
	var v *validity
	defer func() { c.fill(el, a, rec, v) }() // waiters must wake whatever h does
	v = h(rec, r)
	// Kept only if h finished for a client still there: a read cut short
	// writes nothing, which must not become the page.
	rec.complete = r.Context().Err() == nil
	if !rec.passed {
		// The whole answer is here: its length lets the server write it
		// in one piece instead of chunks.
		rec.header.Set("Content-Length", strconv.Itoa(rec.body.Len()))
		replace(w.Header(), rec.header)
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	}
}

// round is the check round a request waiting on a's check joins: the next
// one, which begins after the request arrived; c.mu is held.
func (c *answers) round(el *list.Element, a *answer) *checkRound {
	if a.next != nil {
		return a.next
	}
	rd := &checkRound{done: make(chan struct{})}
	if a.running != nil {
		a.next = rd
		return rd
	}
	a.running = rd
	go c.runCheck(el, a, rd)
	return rd
}

// runCheck checks a for a round: the answer holds at the version the
// check read, or is dropped. The check belongs to no one request, so no
// one client's going away cancels it for the others.
func (c *answers) runCheck(el *list.Element, a *answer, rd *checkRound) {
	rd.tick = c.tick.Add(1)
	version, still, err := a.check(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	close(rd.done)
	next := a.next
	a.running, a.next = nil, nil
	if err == nil && still {
		a.version, a.tick = version, rd.tick
		if next != nil {
			a.running = next
			go c.runCheck(el, a, next)
		}
		return
	}
	if c.byKey[a.key] == el {
		c.remove(el) // its waiters read it afresh
	}
	if next != nil {
		close(next.done)
	}
}

// wait waits for ch, or for the request to go; it reports which.
func wait(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// fill publishes what the reading request wrote, or forgets the entry. A
// checked entry whose handler said nothing of it is not kept.
func (c *answers) fill(el *list.Element, a *answer, rec *recorder, v *validity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(a.ready)
	if !rec.complete || !rec.wrote || rec.status != http.StatusOK || rec.passed || (a.checked && v == nil) {
		if c.byKey[a.key] == el {
			c.remove(el)
		}
		return
	}
	a.ok, a.header, a.body = true, rec.header, rec.body.Bytes()
	if v != nil {
		a.version, a.check = v.version, v.check
	}
	if c.byKey[a.key] != el {
		return // replaced by a newer version meanwhile; its waiters still get it
	}
	c.bytes += len(a.body)
	for c.bytes > c.maxBytes || c.lru.Len() > maxAnswers {
		back := c.lru.Back()
		if back == nil || back == el {
			break
		}
		c.remove(back)
	}
}

// remove drops an entry; c.mu is held.
func (c *answers) remove(el *list.Element) {
	a := el.Value.(*answer)
	c.lru.Remove(el)
	delete(c.byKey, a.key)
	if a.ok {
		c.bytes -= len(a.body)
	}
}

// replace makes dst's header exactly src: a handler may have removed what
// was set before it ran (problem drops the ETag). A kept answer's header
// is shared by every request it answers: capacity-capped, an append to a
// value copies it instead of writing into the shared one.
func replace(dst, src http.Header) {
	clear(dst)
	for k, v := range src {
		dst[k] = v[:len(v):len(v)]
	}
}

// recorder holds what a handler writes, up to maxAnswer bytes; past that
// the answer is not kept, and it and the rest go straight to the client.
type recorder struct {
	w      http.ResponseWriter
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
	passed bool
	// complete: the handler returned, for a client still there.
	complete bool
}

func (r *recorder) Header() http.Header {
	if r.passed {
		return r.w.Header()
	}
	return r.header
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.passed {
		return r.w.Write(p)
	}
	if r.body.Len()+len(p) <= maxAnswer {
		return r.body.Write(p)
	}
	r.passed = true
	replace(r.w.Header(), r.header)
	r.w.WriteHeader(r.status)
	if _, err := r.w.Write(r.body.Bytes()); err != nil {
		return 0, err
	}
	r.body = bytes.Buffer{}
	return r.w.Write(p)
}

package feed

import (
	"bytes"
	"container/list"
	"net/http"
	"strconv"
	"sync"
)

// answers keeps the API's recent answers for the store version they were
// read at, so that many clients asking for the same page between two
// writes cost one read of the store, and a crowd asking at once waits for
// that one read instead of each running it. The version is the one the
// ETag is made of: an answer is served only while the store is at the
// version it was read at, so it is exactly what a read would give (as a
// 304 is). Only the API's pages are kept, each at most maxAnswer bytes;
// the feed files stream and are never held.
type answers struct {
	mu       sync.Mutex
	byKey    map[string]*list.Element // of *answer
	lru      list.List                // most recently used first
	bytes    int
	maxBytes int
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
}

const (
	maxAnswer        = 1 << 20
	maxAnswersMemory = 16 << 20
	maxAnswers       = 1024
)

func newAnswers(maxBytes int) *answers {
	return &answers{byKey: make(map[string]*list.Element), maxBytes: maxBytes}
}

// serve answers r from what is kept for (key, version), or runs h, keeps
// what it wrote if it is a whole 200 answer, and writes it.
func (c *answers) serve(w http.ResponseWriter, r *http.Request, key, version string, h http.HandlerFunc) {
	c.mu.Lock()
	el := c.byKey[key]
	if el != nil {
		if a := el.Value.(*answer); a.version == version {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			select {
			case <-a.ready:
			case <-r.Context().Done():
				return
			}
			if a.ok {
				replace(w.Header(), a.header)
				_, _ = w.Write(a.body)
				return
			}
			h(w, r) // the read it waited for gave nothing to keep
			return
		}
		c.remove(el) // kept for another version
	}
	a := &answer{key: key, version: version, ready: make(chan struct{})}
	el = c.lru.PushFront(a)
	c.byKey[key] = el
	c.mu.Unlock()

	rec := &recorder{w: w, header: w.Header().Clone(), status: http.StatusOK}
	defer c.fill(el, a, rec) // waiters must wake whatever h does
	h(rec, r)
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

// fill publishes what the reading request wrote, or forgets the entry.
func (c *answers) fill(el *list.Element, a *answer, rec *recorder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(a.ready)
	if !rec.complete || !rec.wrote || rec.status != http.StatusOK || rec.passed {
		if c.byKey[a.key] == el {
			c.remove(el)
		}
		return
	}
	a.ok, a.header, a.body = true, rec.header, rec.body.Bytes()
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

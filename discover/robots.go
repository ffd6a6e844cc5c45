package discover

import (
	"container/list"
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/robots"
	"github.com/cardcrawl/cardcrawl/store"
)

// With Options.Robots, each host's robots.txt is read before the first
// document fetched from it in a run, and a URL it disallows for cardcrawl
// is not fetched: the attempt is recorded with class robots. The file is
// fetched by the first domain that needs it, recorded among that domain's
// fetches (kind robots), and kept for the rest of the run; domains that
// need it meanwhile wait for that fetch rather than make their own. What an
// answer means follows RFC 9309: a 4xx (and more redirects than the client
// follows) is no file, so everything is allowed; a 429 or 5xx, or no answer
// at all, is an unreachable file, so nothing is, and the URLs it gates are
// recorded with that failure's class (a host that does not answer for its
// robots.txt is not asked again for the document). An answer that was a
// file, or none, is used from the store for a day after its fetch, in
// later runs and by other workers too (RFC 9309 asks crawlers not to use a
// cached file for longer), and then asked for with that fetch's validators,
// so an unchanged file costs a 304; an unreachable file is asked for again.

const (
	kindRobots = "robots"
	// maxRobotsHosts bounds the hosts whose answer a run keeps (each at
	// most robots.MaxRuleBytes of rules); past it the least recently used
	// is forgotten, and asked again if a later domain needs it, so memory
	// does not grow with the list while a host many cards live on stays.
	maxRobotsHosts = 1_000
	// robotsFresh is how long a stored answer is used without asking.
	robotsFresh = 24 * time.Hour
)

// robotsAnswer is what one fetch of a robots.txt says about its host.
type robotsAnswer int

const (
	robotsFile        robotsAnswer = iota // rules to obey
	robotsNone                            // no file (a 4xx, or too many redirects): everything is allowed
	robotsBusy                            // a 429 or 5xx: nothing is allowed
	robotsUnreachable                     // no answer: nothing is allowed
)

func answerOf(status int, class failure.Class) robotsAnswer {
	switch {
	case class == failure.None:
		return robotsFile
	case class == failure.HTTP429 || class == failure.HTTP5xx:
		return robotsBusy
	case status >= 400 && status < 500, class == failure.RedirectLimit:
		return robotsNone
	default:
		return robotsUnreachable
	}
}

// robotsCache is one run's robots.txt answers, by origin.
type robotsCache struct {
	// token is the product token robots.txt groups are matched with: the
	// first word of the User-Agent the fetch client sends.
	token   string
	mu      sync.Mutex
	entries map[string]*list.Element // of *robotsEntry
	recent  list.List                // most recently used first
}

// robotsEntry is one origin's answer; done is closed once it is known.
type robotsEntry struct {
	origin string
	done   chan struct{}
	rules  *robots.Rules // nil when its reader was interrupted
	// class and reason, when the file was unreachable, are what a URL it
	// gates is recorded with.
	class, reason string
}

func newRobotsCache(userAgent string) *robotsCache {
	return &robotsCache{token: robots.Token(userAgent), entries: map[string]*list.Element{}}
}

// claim returns origin's entry, and whether the caller must fill it (and
// then close done).
func (c *robotsCache) claim(origin string) (*robotsEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[origin]; ok {
		c.recent.MoveToFront(el)
		return el.Value.(*robotsEntry), false
	}
	e := &robotsEntry{origin: origin, done: make(chan struct{})}
	c.entries[origin] = c.recent.PushFront(e)
	if c.recent.Len() > maxRobotsHosts {
		last := c.recent.Back()
		c.recent.Remove(last)
		delete(c.entries, last.Value.(*robotsEntry).origin)
	}
	return e, true
}

// forget drops e (an interrupted fetch is no answer).
func (c *robotsCache) forget(e *robotsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.origin]; ok && el.Value == e {
		c.recent.Remove(el)
		delete(c.entries, e.origin)
	}
}

// robotsGate returns, when robots.txt keeps rawURL from being fetched, the
// fetch to record in its place; nil when it may be fetched.
func (d *domainCrawl) robotsGate(ctx context.Context, kind, rawURL string) *fetched {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil // the fetch client refuses it, with its own class
	}
	origin := u.Scheme + "://" + u.Host
	var e *robotsEntry
	for e == nil || e.rules == nil { // nil rules: its reader was interrupted, ask again
		var mine bool
		if e, mine = d.c.robots.claim(origin); mine {
			read := d.storedRobots(ctx, origin, e) || d.readRobots(ctx, origin, e)
			if !read {
				d.c.robots.forget(e) // no answer: the next domain asks again
			}
			close(e.done)
			if !read {
				return d.gated(kind, rawURL, fetch.ClassCanceled, "interrupted while reading robots.txt")
			}
			break
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return d.gated(kind, rawURL, fetch.ClassCanceled, "interrupted while waiting for robots.txt")
		}
	}
	if e.class != "" {
		return d.gated(kind, rawURL, e.class, e.reason)
	}
	if e.rules.Allowed(u.RequestURI()) {
		return nil
	}
	return d.gated(kind, rawURL, string(failure.Robots), fmt.Sprintf("%s%s disallows it for %s", origin, robots.Path, d.c.robots.token))
}

// readRobots fetches origin's robots.txt, records the fetch and fills e;
// false when the run was interrupted.
func (d *domainCrawl) readRobots(ctx context.Context, origin string, e *robotsEntry) bool {
	f := d.conditional(ctx, kindRobots, fetch.Request{URL: origin + robots.Path, Accept: "text/plain"})
	if f.obs.Class == fetch.ClassCanceled || ctx.Err() != nil {
		// Interrupted, or this domain's time ran out: no answer about
		// the host.
		return false
	}
	d.record(ctx, f)
	st := f.obs.Status
	switch answerOf(st, failure.Class(f.obs.Class)) {
	case robotsFile:
		e.rules = robots.Parse(f.body, d.c.robots.token)
	case robotsBusy:
		e.rules, e.class = robots.DisallowAll(), f.obs.Class
		e.reason = fmt.Sprintf("%s%s answered %d, so nothing on the host may be fetched (RFC 9309)", origin, robots.Path, st)
	case robotsNone:
		e.rules = &robots.Rules{}
	default:
		e.rules, e.class = robots.DisallowAll(), f.obs.Class
		e.reason = fmt.Sprintf("%s%s could not be read (%s), so nothing on the host is fetched (RFC 9309)", origin, robots.Path,
			f.obs.Reason)
	}
	return true
}

// storedRobots fills e from the store's latest fetch of origin's
// robots.txt when that was an answer (a file, or none) less than
// robotsFresh ago, and reports whether it did. --force asks again.
func (d *domainCrawl) storedRobots(ctx context.Context, origin string, e *robotsEntry) bool {
	if d.c.opts.Force {
		return false
	}
	last, ok, err := d.c.opts.Store.LastFetch(ctx, origin+robots.Path)
	if err != nil {
		if ctx.Err() == nil {
			d.c.opts.Logger.Warn("reading the last robots.txt fetch", "origin", origin, "err", err)
		}
		return false
	}
	if !ok || d.now().Sub(last.FetchedAt) >= robotsFresh {
		return false
	}
	switch answerOf(last.Status, failure.Class(last.Class)) {
	case robotsFile:
		body, err := d.c.opts.Store.Document(ctx, last.SHA256)
		if err != nil {
			return false // ask again
		}
		e.rules = robots.Parse(body, d.c.robots.token)
	case robotsNone:
		e.rules = &robots.Rules{}
	default:
		return false
	}
	return true
}

// gated is the fetch recorded for a URL robots.txt kept from being
// fetched.
func (d *domainCrawl) gated(kind, rawURL, class, reason string) *fetched {
	f := &fetched{resp: &fetch.Response{}, finalURL: rawURL}
	f.obs = store.Observation{RunID: d.c.runID, Domain: d.domain, Kind: kind, URL: rawURL, FetchedAt: d.now(),
		Class: class, Reason: reason}
	return f
}

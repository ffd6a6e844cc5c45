package store

import (
	"hash/fnv"
	"time"
)

// Back-off after consecutive failed crawls of a domain: the first failure
// keeps the crawl's own choice (an hour, or what Retry-After asked); from
// the second on the wait doubles from backoffBase up to backoffCap, plus a
// jitter of up to an eighth of it derived from the domain's name, so a
// batch of domains that failed together (one hosting provider down) comes
// back spread out, and the same domain always gets the same wait.
const (
	backoffBase = time.Hour
	backoffCap  = 7 * 24 * time.Hour
)

// Backoff is how long to leave a domain after its attempts-th consecutive
// failure (0 for the first: the crawl's freshness rules apply).
func Backoff(domain string, attempts int) time.Duration {
	if attempts < 2 {
		return 0
	}
	wait := backoffCap
	if shift := attempts - 1; shift < 16 {
		wait = min(backoffBase<<shift, backoffCap)
	}
	h := fnv.New64a()
	h.Write([]byte(domain))
	jitter := time.Duration(h.Sum64() % uint64(wait/8+1))
	return wait + jitter
}

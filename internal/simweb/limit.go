package simweb

import (
	"fmt"
	"strconv"
	"time"
)

// Limit is how fast the network of a generated web lets anyone crawl it:
// the simulated waits alone, with the client's own work taken as free.
// It covers what a crawl with --probe never fetches (the well-known
// catalog, then each card it lists, one at a time per host); probes are
// not counted.
type Limit struct {
	Domains int
	// Responses is how many HTTP responses such a crawl receives.
	Responses int
	// Total is the sum over domains of each domain's chain: the delay of
	// each of its responses, its slow handshake, or the full client
	// timeout when it hangs. Unresolvable and refusing domains cost
	// nothing (a loopback answer, and a retry pause that is the client's
	// own policy).
	Total time.Duration
	// Longest is the longest single chain: requests to one host are one
	// at a time, so no concurrency finishes sooner.
	Longest time.Duration
}

// At is the limit with concurrency domains in flight: Total spread over
// them, and never below the longest chain.
func (l Limit) At(concurrency int) time.Duration {
	if concurrency < 1 {
		concurrency = 1
	}
	return max(l.Total/time.Duration(concurrency), l.Longest)
}

// String is a one-line summary, for humans.
func (l Limit) String() string {
	return fmt.Sprintf("%d domains, %d responses, sum of per-domain waits %s, longest %s",
		l.Domains, l.Responses, l.Total.Round(time.Millisecond), l.Longest.Round(time.Millisecond))
}

// NetworkLimit computes the Limit of the web opts generates, for a client
// whose per-request timeout is timeout (what a hanging host costs it). It
// uses the very delays the Web serves, so jitter is counted exactly.
func NetworkLimit(opts GenerateOptions, timeout time.Duration) (Limit, error) {
	if err := opts.check(); err != nil {
		return Limit{}, fmt.Errorf("simweb: network limit: %w", err)
	}
	g := newGenerator(opts)
	l := Limit{Domains: opts.Domains}
	for i := range opts.Domains {
		var chain time.Duration
		switch g.fault(i) {
		case faultUnresolvable, faultRefuse:
			continue
		case faultHang:
			chain = timeout
		case faultSlowTLS:
			chain = opts.SlowTLSDelay + g.chain(i, &l.Responses)
		default:
			chain = g.chain(i, &l.Responses)
		}
		l.Total += chain
		l.Longest = max(l.Longest, chain)
	}
	return l, nil
}

// chain is the sum of the delays of domain i's responses: its catalog (or
// 404), then each card, all on one host. It counts them into responses.
func (g *generator) chain(i int, responses *int) time.Duration {
	host := g.domain(i)
	d := g.delay(host, "/.well-known/ai-catalog.json")
	*responses++
	if g.hasCatalog(i) {
		for j := range g.opts.CardsPerCatalog {
			d += g.delay(host, "/mcp/"+strconv.Itoa(j)+"/server-card")
			*responses++
		}
	}
	return d
}

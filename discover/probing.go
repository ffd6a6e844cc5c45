package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// ProbeRecord is what is stored for each probe: the probe's own result and
// how the live server compares with the card that declared it.
type ProbeRecord struct {
	probe.Result
	CardKey        string           `json:"cardKey,omitempty"`
	CardMismatches []probe.Mismatch `json:"cardMismatches,omitempty"`
}

// Skip reasons the crawl adds to probe.Decide's.
const (
	// ReasonUnresolvable: the host does not resolve (a probe needs public
	// addresses, so the crawl resolves it before deciding).
	ReasonUnresolvable = "unresolvable"
	// ReasonProbeCap: the domain already caused --max-probes probes in this
	// run; the endpoint is probed on a later crawl.
	ReasonProbeCap = "probe_cap"
	// ReasonDomainTimeout: the domain's time (--domain-timeout) ran out
	// before the endpoint was probed, or while it was.
	ReasonDomainTimeout = "domain_timeout"
)

// endpoint is one remote URL a domain lists, with what its probe needs:
// the declaration followed is the first with a transport a probe can use,
// so a card with a bad type does not hide another card's good one.
type endpoint struct {
	norm        string
	remote      servercard.Remote
	cardKey     string
	cardSHA     string
	cardName    string
	cardVersion string
	// declaredBy names the declaration followed when it is not a card's
	// ("registry:" name@version); a card's is "card:" and its key.
	declaredBy string
}

func (ep *endpoint) add(other endpoint) {
	if !probeable(ep.remote.Type) && probeable(other.remote.Type) {
		*ep = other
	}
}

// endpointsOf groups a domain's remotes by normalised URL, in the order
// they were found.
func endpointsOf(refs []remoteRef) []*endpoint {
	var order []*endpoint
	byNorm := map[string]*endpoint{}
	for _, r := range refs {
		e := endpoint{norm: r.Norm, remote: r.Remote, cardKey: r.CardKey, cardSHA: r.CardSHA,
			cardName: r.Card.Name, cardVersion: r.Card.Version}
		if ep, ok := byNorm[r.Norm]; ok {
			ep.add(e)
			continue
		}
		byNorm[r.Norm] = &e
		order = append(order, &e)
	}
	return order
}

func (ep *endpoint) declarer() string {
	if ep.declaredBy != "" {
		return ep.declaredBy
	}
	return "card:" + ep.cardKey
}

func probeable(transport string) bool {
	return transport == servercard.TransportStreamableHTTP || transport == servercard.TransportSSE
}

// budget is one domain's share of the run's probing: its probes so far,
// the caps it hit, and its deadline (the domain's, which covers its
// fetches and its probes).
type budget struct {
	c      *crawler
	runCtx context.Context // cancelled only by Ctrl-C
	ctx    context.Context // the domain's deadline
	domain string
	probes int
	capped []string
	// batch: decisions not to probe wait in queued, their endpoints still
	// claimed, and are written together with the next decision to probe or
	// by finish — one shared write per domain rather than one per endpoint.
	batch  bool
	queued []store.ProbeDecision
}

// decidesWithResult says a domain's decisions are made before its result
// is saved and written with it: under --probe never every decision is a
// skip that nothing saved can change. That write leaves out those the run
// already has, so no look-up comes first.
func (c *crawler) decidesWithResult() bool { return c.opts.Probe.Mode == ProbeNever }

func (c *crawler) newBudget(runCtx, ctx context.Context, domain string) *budget {
	return &budget{c: c, runCtx: runCtx, ctx: ctx, domain: domain}
}

func (b *budget) cap(name string) {
	for _, n := range b.capped {
		if n == name {
			return
		}
	}
	b.capped = append(b.capped, name)
}

// claim marks an endpoint as being decided by this worker; false when
// another worker has it now (that worker records the decision).
func (c *crawler) claim(norm string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[norm] {
		return false
	}
	c.inflight[norm] = true
	return true
}

func (c *crawler) release(norm string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, norm)
}

// decide decides whether to probe one endpoint, records the decision, and
// probes it when warranted and the domain's budget allows. An endpoint
// this run already decided (for another domain, or in flight in another
// worker now) is left alone: one decision and at most one probe per
// endpoint per run. It returns false when the run is interrupted or
// failed, and the domain should stop.
func (b *budget) decide(ep *endpoint) bool {
	c := b.c
	if b.runCtx.Err() != nil {
		return false // interrupted: what is undecided stays so for the next run
	}
	if !c.claim(ep.norm) {
		return true
	}
	held := false // queued: released once written
	defer func() {
		if !held {
			c.release(ep.norm)
		}
	}()
	// The store is written even after the domain's deadline: the decision
	// is what records that the deadline was hit.
	st, dbCtx := c.opts.Store, context.WithoutCancel(b.runCtx)
	if !c.decidesWithResult() {
		if done, err := st.DecidedInRun(dbCtx, c.runID, ep.norm); err != nil {
			c.fail(err)
			return false
		} else if done {
			return true
		}
	}
	dec, err := b.verdict(dbCtx, ep)
	if err != nil {
		c.fail(err)
		return false
	}
	if b.runCtx.Err() != nil {
		return false
	}
	if !dec.Probe && b.batch {
		b.queued = append(b.queued, b.decision(ep, dec))
		held = true
		return true
	}
	if !b.record(dbCtx, ep, dec) || !dec.Probe {
		return true
	}
	b.probes++
	res := c.opts.Probe.Prober.Probe(b.ctx, probe.Target{URL: ep.remote.URL, Transport: ep.remote.Type})
	switch {
	case b.runCtx.Err() != nil:
		return false // interrupted: an unfinished probe is not a result
	case b.ctx.Err() != nil:
		// Cut by the domain's deadline: not the endpoint's outcome. Say
		// why it has no probe, so it is not taken for unfinished work.
		b.cap(store.CapTime)
		return b.record(dbCtx, ep, probe.Decision{Reason: ReasonDomainTimeout})
	}
	if err := st.AddProbe(dbCtx, c.runID, ProbeRow(ep.norm, ep.cardKey, ep.cardSHA, res,
		probe.CompareCard(res, ep.cardName, ep.cardVersion, ep.remote.Type, ep.remote.SupportedProtocolVersions))); err != nil {
		c.fail(err)
		return false
	}
	c.mu.Lock()
	c.sum.Probes[res.Outcome]++
	c.mu.Unlock()
	return true
}

// decideAll decides the domain's endpoints in the order they were found,
// until the run stops.
func (b *budget) decideAll(refs []remoteRef) {
	for _, ep := range endpointsOf(refs) {
		if !b.decide(ep) {
			return
		}
	}
}

// verdict applies the probe rule, the host check and the domain's bounds.
func (b *budget) verdict(dbCtx context.Context, ep *endpoint) (probe.Decision, error) {
	c := b.c
	facts := probe.RemoteFacts{
		Type: ep.remote.Type, URL: ep.remote.URL, Mode: c.opts.Probe.Mode,
		MaxAge: c.opts.Probe.MaxAge, Now: c.opts.Now(),
	}
	if c.opts.Probe.Mode == ProbeNever {
		return probe.Decide(facts), nil // the rule says no before looking at history
	}
	at, sha, ok, err := c.opts.Store.LastProbe(dbCtx, ep.norm)
	if err != nil {
		return probe.Decision{}, err
	}
	if ok {
		facts.LastProbedAt = at
		// Changed means no card declaring it now, from any domain, is the
		// one it was last probed against.
		same, err := c.opts.Store.StillDeclared(dbCtx, ep.norm, sha)
		if err != nil {
			return probe.Decision{}, err
		}
		facts.CardChangedSince = !same
	}
	dec := probe.Decide(facts)
	if !dec.Probe {
		return dec, nil
	}
	if b.probes >= c.opts.Probe.MaxPerDomain {
		b.cap(store.CapProbes)
		return probe.Decision{Reason: ReasonProbeCap}, nil
	}
	if b.ctx.Err() == nil {
		dec = c.checkAddress(b.ctx, ep.remote.URL, dec)
	}
	if dec.Probe && b.ctx.Err() != nil {
		b.cap(store.CapTime)
		return probe.Decision{Reason: ReasonDomainTimeout}, nil
	}
	return dec, nil
}

// decision is the stored form of a decision about ep.
func (b *budget) decision(ep *endpoint, dec probe.Decision) store.ProbeDecision {
	verdict := "skip"
	if dec.Probe {
		verdict = "probe"
	}
	return store.ProbeDecision{RunID: b.c.runID, RemoteNorm: ep.norm, URL: ep.remote.URL, Decision: verdict,
		Reason: dec.Reason, DeclaredBy: ep.declarer()}
}

// record appends the decision, after those queued, and counts the skips;
// false when the store failed (the run is ending).
func (b *budget) record(dbCtx context.Context, ep *endpoint, dec probe.Decision) bool {
	return b.write(dbCtx, b.decision(ep, dec))
}

// write stores the queued decisions and more in one shared write, then
// releases the queued endpoints' claims.
func (b *budget) write(dbCtx context.Context, more ...store.ProbeDecision) bool {
	c := b.c
	ds := append(b.queued, more...)
	queued := len(b.queued)
	b.queued = nil
	if len(ds) == 0 {
		return true
	}
	return b.written(ds, queued, c.opts.Store.AddProbeDecision(dbCtx, ds...))
}

// take hands the queued decisions over to a write of the caller's (the
// domain's result); written must follow it.
func (b *budget) take() []store.ProbeDecision {
	ds := b.queued
	b.queued = nil
	return ds
}

// written releases the claims of the first queued decisions of ds, now
// written (or not: err), and counts the skips; false when the store
// failed (the run is ending).
func (b *budget) written(ds []store.ProbeDecision, queued int, err error) bool {
	c := b.c
	for _, d := range ds[:queued] {
		c.release(d.RemoteNorm)
	}
	if err != nil {
		c.fail(err)
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range ds {
		if d.Decision != "probe" && !d.Repeated {
			c.sum.ProbeSkips[d.Reason]++
		}
	}
	return true
}

// finish writes the queued decisions, and records the caps the domain hit,
// those of its fetches (already saved with its result) and those of its
// probes, in the summary, and the latter in the store.
func (b *budget) finish(saved []string) {
	c := b.c
	// Decided before any interruption: written as they would have been
	// one by one.
	b.write(context.WithoutCancel(b.runCtx))
	if len(b.capped) > 0 {
		if err := c.opts.Store.AddDomainCaps(context.WithoutCancel(b.runCtx), b.domain, b.capped); err != nil {
			c.fail(err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, n := range append(append([]string(nil), saved...), b.capped...) {
		if !seen[n] {
			seen[n] = true
			c.sum.Capped[n]++
		}
	}
}

// finishLeftovers decides and probes the remotes that runs no longer
// running left undecided or unprobed (killed between saving a domain and
// deciding its remotes, or stopped mid-probe), domain by domain with each
// domain's bounds, reading them page by page. A stopped run whose
// leftovers are all finished is marked settled and not searched again.
// Concurrent runs' domains are theirs to finish.
func (c *crawler) finishLeftovers(ctx context.Context) error {
	runs, err := c.opts.Store.UnsettledRuns(ctx)
	if err != nil {
		return interruptedOr(ctx, err)
	}
	for _, run := range runs {
		if err := c.finishRun(ctx, run); err != nil || ctx.Err() != nil {
			return interruptedOr(ctx, err)
		}
	}
	return nil
}

func (c *crawler) finishRun(ctx context.Context, run int64) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	c.stop = stop
	work := make(chan string)
	var wg sync.WaitGroup
	for range c.opts.Concurrency {
		wg.Go(func() {
			for d := range work {
				c.leftoverDomain(runCtx, d)
			}
		})
	}
	err := c.opts.Store.PendingProbeDomains(runCtx, run, func(d string) error {
		select {
		case work <- d:
			return nil
		case <-runCtx.Done():
			return runCtx.Err()
		}
	})
	close(work)
	wg.Wait()
	switch {
	case c.runErr != nil:
		return c.runErr
	case err != nil || runCtx.Err() != nil:
		return interruptedOr(ctx, err)
	}
	// Every domain it left was decided (a probe the deadline cut records
	// domain_timeout): nothing of it is pending any more.
	return c.opts.Store.SettleRun(context.WithoutCancel(ctx), run)
}

// leftoverDomain finishes one domain's pending remotes within a fresh
// per-domain time limit and probe budget.
func (c *crawler) leftoverDomain(runCtx context.Context, domain string) {
	ctx, cancel := context.WithTimeout(runCtx, c.opts.DomainTimeout)
	defer cancel()
	b := c.newBudget(runCtx, ctx, domain)
	g := &adjacent{decide: b.decide}
	err := c.opts.Store.PendingProbes(context.WithoutCancel(runCtx), domain, func(p store.PendingRemote) error {
		e := endpoint{norm: p.Norm, cardKey: p.CardKey, cardSHA: p.CardSHA256, cardName: p.CardName, cardVersion: p.CardVersion}
		if err := json.Unmarshal([]byte(p.RemoteJSON), &e.remote); err != nil {
			c.opts.Logger.Warn("stored remote does not decode", "remote", p.Norm, "err", err)
			return nil
		}
		return g.add(e)
	})
	if err = g.end(err); err != nil {
		c.fail(fmt.Errorf("pending probes of %s: %w", domain, err))
		return
	}
	b.finish(nil)
}

// interruptedOr hides an error caused by Ctrl-C: an interrupted run is not
// a failed one.
func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// checkAddress resolves a warranted endpoint's host the way the dialer will,
// so a name that points into private space, or nowhere, is skipped with a
// reason instead of being probed into a refusal.
func (c *crawler) checkAddress(ctx context.Context, rawURL string, dec probe.Decision) probe.Decision {
	err := c.opts.Fetch.CheckHost(ctx, rawURL)
	switch fetch.Class(err, 0) {
	case "":
		return dec
	case fetch.ClassBlockedAddress:
		return probe.Decision{Reason: probe.ReasonBlockedAddress}
	case fetch.ClassDNS:
		return probe.Decision{Reason: ReasonUnresolvable}
	default:
		// Anything else (a timeout of the resolver, say) is left to the
		// probe itself, which records it with its evidence.
		return dec
	}
}

// ProbeRow turns a probe result into the stored row.
func ProbeRow(norm, cardKey, cardSHA string, res probe.Result, mismatches []probe.Mismatch) store.ProbeRow {
	rec, _ := json.Marshal(ProbeRecord{Result: res, CardKey: cardKey, CardMismatches: mismatches})
	probedAt := ""
	if !res.StartedAt.IsZero() {
		probedAt = res.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	return store.ProbeRow{
		RemoteNorm: norm, URL: res.URL, ProbedAt: probedAt,
		Outcome: res.Outcome, Transport: res.Transport, Protocol: res.ProtocolVersion,
		ServerName: res.ServerName, ServerVersion: res.ServerVersion, ToolCount: res.ToolCount,
		CardSHA256: cardSHA, Result: string(rec),
	}
}

// errStopRows ends a row walk early: the decisions were told to stop.
var errStopRows = errors.New("stop")

// adjacent turns rows ordered by URL, one per declarer, into endpoints: a
// URL's rows are adjacent, so one endpoint at a time is held, and each is
// decided once all its declarers are in.
type adjacent struct {
	decide func(*endpoint) bool // false: stop the walk
	cur    *endpoint
}

func (a *adjacent) add(e endpoint) error {
	if a.cur != nil && a.cur.norm == e.norm {
		a.cur.add(e)
		return nil
	}
	if !a.flush() {
		return errStopRows
	}
	a.cur = &e
	return nil
}

func (a *adjacent) flush() bool {
	if a.cur == nil {
		return true
	}
	ep := a.cur
	a.cur = nil
	return a.decide(ep)
}

// end decides the last endpoint after a complete walk and returns the
// walk's own error; a walk stopped by a decision is no error.
func (a *adjacent) end(err error) error {
	switch {
	case err == nil:
		a.flush()
		return nil
	case errors.Is(err, errStopRows):
		return nil
	}
	return err
}

package discover

import (
	"context"
	"encoding/json"
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

// Skip reasons the crawl adds to probe.Decide's, from resolving the host
// before deciding (the rule says a probe needs public addresses).
const (
	ReasonUnresolvable = "unresolvable"
)

// endpoint is one remote URL found this run, with every card declaring it.
type endpoint struct {
	ref     remoteRef       // the declaration the probe follows
	cardSHA map[string]bool // hashes of every card that declares it
}

// endpoints groups remotes by normalised URL, in order: this run's, then
// those an interrupted run left without a decision or a probe. The
// declaration followed is the first with a transport a probe can use, so a
// card with a bad type does not hide another card's good one.
func endpoints(results []*domainCrawl, pending []remoteRef) []*endpoint {
	var order []*endpoint
	byNorm := map[string]*endpoint{}
	add := func(r remoteRef) {
		ep, ok := byNorm[r.Norm]
		if !ok {
			ep = &endpoint{ref: r, cardSHA: map[string]bool{}}
			byNorm[r.Norm] = ep
			order = append(order, ep)
		} else if !probeable(ep.ref.Remote.Type) && probeable(r.Remote.Type) {
			ep.ref = r
		}
		ep.cardSHA[r.CardSHA] = true
	}
	for _, dc := range results {
		for _, r := range dc.remotes {
			add(r)
		}
	}
	for _, r := range pending {
		add(r)
	}
	return order
}

// pendingRefs loads the remotes an interrupted run left undecided or
// unprobed. A stored remote that no longer decodes is skipped and logged.
func (c *crawler) pendingRefs(ctx context.Context) ([]remoteRef, error) {
	rows, err := c.opts.Store.PendingProbes(ctx)
	if err != nil {
		return nil, err
	}
	refs := make([]remoteRef, 0, len(rows))
	for _, p := range rows {
		r := remoteRef{Norm: p.Norm, CardKey: p.CardKey, CardSHA: p.CardSHA256, Card: &servercard.Card{}}
		if err := json.Unmarshal([]byte(p.RemoteJSON), &r.Remote); err != nil {
			c.opts.Logger.Warn("stored remote does not decode", "remote", p.Norm, "err", err)
			continue
		}
		_ = json.Unmarshal([]byte(p.CardJSON), r.Card) // name and version are only compared, never required
		refs = append(refs, r)
	}
	return refs, nil
}

func probeable(transport string) bool {
	return transport == servercard.TransportStreamableHTTP || transport == servercard.TransportSSE
}

// probeAll decides, for every remote found this run, whether to probe it,
// records the decision, and probes the warranted ones (one probe per
// endpoint per run, however many cards and domains list it).
func (c *crawler) probeAll(ctx context.Context, results []*domainCrawl, sum *Summary) error {
	sum.Probes, sum.ProbeSkips = map[string]int{}, map[string]int{}
	pending, err := c.pendingRefs(ctx)
	if err != nil {
		return interruptedOr(ctx, err)
	}
	var todo []remoteRef
	for _, ep := range endpoints(results, pending) {
		r := ep.ref
		facts := probe.RemoteFacts{
			Type: r.Remote.Type, URL: r.Remote.URL, Mode: c.opts.Probe.Mode,
			MaxAge: c.opts.Probe.MaxAge, Now: c.opts.Now(),
		}
		if ctx.Err() != nil {
			return nil // interrupted: the summary says so
		}
		at, sha, ok, err := c.opts.Store.LastProbe(ctx, r.Norm)
		if err != nil {
			return interruptedOr(ctx, err)
		}
		if ok {
			facts.LastProbedAt = at
			// Changed means no card declaring it now is the one last probed
			// against; which card happens to come first does not matter.
			facts.CardChangedSince = !ep.cardSHA[sha]
		}
		dec := probe.Decide(facts)
		if dec.Probe {
			dec = c.checkAddress(ctx, r.Remote.URL, dec)
		}
		if ctx.Err() != nil {
			return nil
		}
		verdict := "skip"
		if dec.Probe {
			verdict = "probe"
			todo = append(todo, r)
		} else {
			sum.ProbeSkips[dec.Reason]++
		}
		if err := c.opts.Store.AddProbeDecision(ctx, store.ProbeDecision{
			RunID: c.runID, RemoteNorm: r.Norm, URL: r.Remote.URL, Decision: verdict, Reason: dec.Reason,
		}); err != nil {
			return interruptedOr(ctx, err)
		}
	}
	if len(todo) == 0 {
		return nil
	}

	work := make(chan remoteRef)
	var (
		mu     sync.Mutex
		runErr error
		wg     sync.WaitGroup
	)
	for range min(c.opts.Probe.Concurrency, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				res := c.opts.Probe.Prober.Probe(ctx, probe.Target{URL: r.Remote.URL, Transport: r.Remote.Type})
				if ctx.Err() != nil {
					continue // interrupted: an unfinished probe is not a result
				}
				err := c.opts.Store.AddProbe(context.WithoutCancel(ctx), c.runID, ProbeRow(r.Norm, r.CardKey, r.CardSHA, res,
					probe.CompareCard(res, r.Card.Name, r.Card.Version, r.Remote.Type, r.Remote.SupportedProtocolVersions)))
				mu.Lock()
				sum.Probes[res.Outcome]++
				if err != nil && runErr == nil {
					runErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range todo {
		select {
		case work <- r:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	return runErr
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

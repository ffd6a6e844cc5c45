package discover

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/store"
)

// ProbeRecord is what is stored for each probe: the probe's own result and
// how the live server compares with the card that declared it.
type ProbeRecord struct {
	probe.Result
	CardKey        string           `json:"cardKey,omitempty"`
	CardMismatches []probe.Mismatch `json:"cardMismatches,omitempty"`
}

// probeAll decides, for every remote found this run, whether to probe it,
// records the decision, and probes the warranted ones (one probe per
// endpoint per run, however many cards and domains list it).
func (c *crawler) probeAll(ctx context.Context, results []*domainCrawl, sum *Summary) error {
	sum.Probes, sum.ProbeSkips = map[string]int{}, map[string]int{}
	decided := map[string]bool{}
	var todo []remoteRef
	for _, dc := range results {
		for _, r := range dc.remotes {
			facts := probe.RemoteFacts{
				Type: r.Remote.Type, URL: r.Remote.URL, Mode: c.opts.Probe.Mode,
				MaxAge: c.opts.Probe.MaxAge, Now: c.opts.Now(), ProbedThisRun: decided[r.Norm],
			}
			if !decided[r.Norm] {
				at, sha, ok, err := c.opts.Store.LastProbe(ctx, r.Norm)
				if err != nil {
					return err
				}
				if ok {
					facts.LastProbedAt = at
					facts.CardChangedSince = sha != r.CardSHA
				}
			}
			dec := probe.Decide(facts)
			if dec.Reason == probe.ReasonDuplicate {
				// Already decided this run through another card or domain;
				// one decision per endpoint per run is enough.
				continue
			}
			decided[r.Norm] = true
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
				return err
			}
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
				err := c.opts.Store.AddProbe(ctx, c.runID, ProbeRow(r.Norm, r.CardKey, r.CardSHA, res,
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

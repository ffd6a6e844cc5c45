package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// RefreshRegistryRemotes brings registry_remotes in step with the latest
// Registry entries that are not deleted (those the Registry lists),
// reading them a page at a time and parsing only those that changed since
// their remotes were recorded.
func RefreshRegistryRemotes(ctx context.Context, st RegistryRemotes) error {
	err := st.EachListedEntry(ctx, func(e store.RegistryEntryDoc) error {
		if e.ServerJSON == "" {
			return nil // recorded from the entry as it is now
		}
		sum := sha256.Sum256([]byte(e.ServerJSON))
		return st.ReplaceRegistryRemotes(ctx, e, hex.EncodeToString(sum[:]), registryRemotes(e.ServerJSON))
	})
	if err != nil {
		return err
	}
	_, err = st.PruneRegistryRemotes(ctx)
	return err
}

// registryRemotes reads the remotes of a server.json, normalised as card
// remotes are, so an endpoint a card and an entry both declare is one; the
// first defaultMaxRemotes, as a card's. Each is a server whose record
// carries the entry's server.json, so an entry of R remotes would cost R
// times its size in every feed (and R probes in every run).
func registryRemotes(serverJSON string) []store.RegistryRemote {
	var doc struct {
		Remotes []servercard.Remote `json:"remotes"`
	}
	if json.Unmarshal([]byte(serverJSON), &doc) != nil {
		return nil
	}
	var out []store.RegistryRemote
	seen := map[string]bool{}
	for _, r := range doc.Remotes {
		norm, err := servercard.NormalizeURL(r.URL)
		if err != nil || r.URL == "" {
			norm = r.URL // kept, so its decision says why it is not probed
		}
		if norm == "" || seen[norm] {
			continue
		}
		seen[norm] = true
		out = append(out, store.RegistryRemote{URLNorm: norm, URL: r.URL, Type: r.Type})
		if len(out) == defaultMaxRemotes {
			break
		}
	}
	return out
}

// ProbeRegistry probes the remotes of latest, active Registry entries as a
// run of its own (see Crawl's probing: the same warrant rules, host checks
// and one decision per endpoint per run). Only the probe options, Fetch,
// Store, Logger, Concurrency, DomainTimeout and Now are used.
func ProbeRegistry(ctx context.Context, opts Options) (Summary, error) {
	opts.Validator = &servercard.Validator{} // not used: no card is read
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	start := opts.Now()
	sum := Summary{Outcomes: map[string]int{}, Classes: map[string]int{}, Probes: map[string]int{}, ProbeSkips: map[string]int{}}
	host, _ := os.Hostname()
	runID, err := opts.Store.StartRun(ctx, store.RunStart{Options: map[string]any{"probeRegistry": true, "probe": opts.Probe.Mode},
		Host: host, PID: os.Getpid()})
	if err != nil {
		return sum, err
	}
	sum.RunID = runID
	c := &crawler{opts: opts, runID: runID, sum: &sum, inflight: map[string]bool{}}
	return finishRun(ctx, opts, start, &sum, c.probeRegistry(ctx))
}

// probeRegistry decides about, and probes when warranted, every endpoint a
// latest, active Registry entry declares, after the run's card remotes: an
// endpoint this run already decided for a card is left alone, one probed
// recently (for a card or an entry) is fresh. Each endpoint gets its own
// time limit and counts against no domain's probe budget.
func (c *crawler) probeRegistry(ctx context.Context) error {
	if err := RefreshRegistryRemotes(ctx, c.opts.Store); err != nil {
		return interruptedOr(ctx, err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	c.stop = stop
	g := &adjacent{decide: func(ep *endpoint) bool {
		epCtx, cancel := context.WithTimeout(runCtx, c.opts.DomainTimeout)
		defer cancel()
		return c.newBudget(runCtx, epCtx, "").decide(ep)
	}}
	// Rows come ordered by URL, one per declaring entry: the first entry
	// with a transport a probe can use declares it.
	err := c.opts.Store.EachActiveRegistryRemote(context.WithoutCancel(runCtx), func(d store.DeclaredRemote) error {
		return g.add(endpoint{norm: d.URLNorm, remote: servercard.Remote{Type: d.Type, URL: d.URL}, cardSHA: d.EntrySHA256,
			declaredBy: "registry:" + d.Name + "@" + d.Version})
	})
	if err = g.end(err); err != nil {
		c.setErr(fmt.Errorf("registry remotes: %w", err))
	}
	if c.runErr != nil {
		return c.runErr
	}
	return interruptedOr(ctx, runCtx.Err())
}

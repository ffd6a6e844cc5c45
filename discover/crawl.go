// Package discover is the crawl: it takes domains, fetches their AI Catalogs,
// follows entries to Server Cards (nested catalogs within bounds), validates
// them, records everything in the store, and decides which remotes warrant an
// MCP probe. It is the only package besides cmd that knows all the parts;
// parsing lives in catalog and servercard, fetching in internal/fetch, SQL in
// store.
package discover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Options configure a crawl. Zero values take the documented defaults.
type Options struct {
	Fetch     *fetch.Client
	Store     *store.DB
	Validator *servercard.Validator
	Logger    *slog.Logger

	// Concurrency is the number of domains in flight (default 32). Requests
	// to any one host are still one at a time: the fetch client enforces it.
	Concurrency int
	// Force ignores freshness (Cache-Control max-age, cached misses); the
	// crawl still revalidates with If-None-Match / If-Modified-Since.
	Force bool
	// FollowLinks reads the home page's rel="ai-catalog" links (HTML and
	// Link header) when the well-known catalog is missing.
	FollowLinks bool
	// LegacyPaths also tries pre-AI-Catalog locations, recorded as non-standard.
	LegacyPaths bool
	// MaxDepth bounds nested catalogs (default 4, as the spec recommends);
	// a negative value follows none.
	MaxDepth int
	// MaxEntries bounds the entries kept from one catalog document (default 1000).
	MaxEntries int
	// MaxCards bounds the cards fetched for one domain (default 500).
	MaxCards int
	// DomainTimeout bounds the time one domain may take, all its fetches
	// together (default 10 minutes), so a catalog pointing at hundreds of
	// stalling hosts cannot hold a worker for hours.
	DomainTimeout time.Duration

	// Probe configures the MCP probe phase that follows the crawl.
	Probe ProbeOptions

	// Progress, when set, is called after each domain finishes.
	Progress func(Progress)
	// Now is the clock (tests inject one). Defaults to time.Now.
	Now func() time.Time
}

// ProbeOptions configure the probe phase.
type ProbeOptions struct {
	Mode        string        // auto (default), always, never
	MaxAge      time.Duration // a probe younger than this is fresh (default 24h)
	Prober      *probe.Prober // required unless Mode is never
	Concurrency int           // endpoints in flight (default: Options.Concurrency)
}

// Progress reports a crawl's advance.
type Progress struct {
	Done, Total int
	Domain      string
	Outcome     string
	Class       string
}

// Summary is what a crawl did, for people and for --json.
type Summary struct {
	RunID       int64          `json:"runId"`
	Requested   int            `json:"requested"`
	Invalid     []string       `json:"invalid,omitempty"`
	Fresh       int            `json:"fresh"`
	Crawled     int            `json:"crawled"`
	Left        int            `json:"left"`
	Outcomes    map[string]int `json:"outcomes"`
	Classes     map[string]int `json:"classes"`
	Cards       int            `json:"cards"`
	Remotes     int            `json:"remotes"`
	Probes      map[string]int `json:"probes,omitempty"`
	ProbeSkips  map[string]int `json:"probeSkips,omitempty"`
	Interrupted bool           `json:"interrupted"`
	DurationMs  int64          `json:"durationMs"`
}

const (
	defaultConcurrency   = 32
	defaultMaxDepth      = 4
	defaultMaxEntries    = 1000
	defaultMaxCards      = 500
	defaultDomainTimeout = 10 * time.Minute
	defaultProbeMaxAge   = 24 * time.Hour
)

func (o *Options) defaults() error {
	if o.Fetch == nil || o.Store == nil || o.Validator == nil {
		return errors.New("discover: Fetch, Store and Validator are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = defaultConcurrency
	}
	switch {
	case o.MaxDepth == 0:
		o.MaxDepth = defaultMaxDepth
	case o.MaxDepth < 0:
		o.MaxDepth = 0
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = defaultMaxEntries
	}
	if o.MaxCards <= 0 {
		o.MaxCards = defaultMaxCards
	}
	if o.DomainTimeout <= 0 {
		o.DomainTimeout = defaultDomainTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	switch o.Probe.Mode {
	case "":
		o.Probe.Mode = ProbeAuto
	case ProbeAuto, ProbeAlways, ProbeNever:
	default:
		return fmt.Errorf("discover: unknown probe mode %q (want auto, always or never)", o.Probe.Mode)
	}
	if o.Probe.Mode != ProbeNever && o.Probe.Prober == nil {
		return errors.New("discover: a Prober is required unless probe mode is never")
	}
	if o.Probe.MaxAge <= 0 {
		o.Probe.MaxAge = defaultProbeMaxAge
	}
	if o.Probe.Concurrency <= 0 {
		o.Probe.Concurrency = o.Concurrency
	}
	return nil
}

// Probe modes.
const (
	ProbeAuto   = "auto"
	ProbeAlways = "always"
	ProbeNever  = "never"
)

// Crawl crawls the given domains into the store. Failures of single domains
// are data, not errors: Crawl returns an error only when the run itself
// cannot go on (the database fails). When ctx is cancelled it stops taking
// new domains, lets in-flight ones end, and reports how many are left; they
// stay pending for the next run.
func Crawl(ctx context.Context, opts Options, domains []string) (Summary, error) {
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	start := opts.Now()
	sum := Summary{Requested: len(domains), Outcomes: map[string]int{}, Classes: map[string]int{}}

	var names []string
	seen := map[string]bool{}
	for _, d := range domains {
		n, err := NormalizeDomain(d)
		if err != nil {
			// Listed in the summary; a domains file with some junk lines is
			// data, not a failed run.
			sum.Invalid = append(sum.Invalid, d)
			opts.Logger.Debug("skipping input that is not a domain", "input", d, "err", err)
			continue
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}

	host, _ := os.Hostname()
	if n, err := opts.Store.AbandonDeadRuns(ctx, host, processAlive); err != nil {
		return sum, err
	} else if n > 0 {
		opts.Logger.Info("earlier runs ended without finishing (killed?); their work resumes now", "runs", n)
	}
	runID, err := opts.Store.StartRun(ctx, store.RunStart{Options: runOptions(opts), Host: host, PID: os.Getpid()})
	if err != nil {
		return sum, err
	}
	sum.RunID = runID
	due, fresh, err := opts.Store.Enqueue(ctx, names, store.EnqueueOptions{Force: opts.Force})
	if err != nil {
		_ = opts.Store.FinishRun(runID, store.RunFailed, sum)
		return sum, err
	}
	sum.Fresh = len(fresh)

	c := &crawler{opts: opts, runID: runID}
	results, runErr := c.crawlAll(ctx, due, &sum)

	if runErr == nil && ctx.Err() == nil {
		runErr = c.probeAll(ctx, results, &sum)
	}
	sum.Interrupted = ctx.Err() != nil
	sum.DurationMs = opts.Now().Sub(start).Milliseconds()
	status := store.RunDone
	switch {
	case runErr != nil:
		status = store.RunFailed
	case sum.Interrupted:
		status = store.RunInterrupted
	}
	if err := opts.Store.FinishRun(runID, status, sum); err != nil && runErr == nil {
		runErr = err
	}
	return sum, runErr
}

func runOptions(o Options) map[string]any {
	return map[string]any{
		"concurrency": o.Concurrency, "force": o.Force, "followLinks": o.FollowLinks,
		"legacyPaths": o.LegacyPaths, "maxDepth": o.MaxDepth, "maxEntries": o.MaxEntries,
		"maxCards": o.MaxCards, "domainTimeout": o.DomainTimeout.String(), "probe": o.Probe.Mode, "probeMaxAge": o.Probe.MaxAge.String(),
	}
}

type crawler struct {
	opts  Options
	runID int64
}

// crawlAll runs the domain workers. A database error stops the run; ctx
// cancellation stops handing out domains.
func (c *crawler) crawlAll(ctx context.Context, due []string, sum *Summary) ([]*domainCrawl, error) {
	work := make(chan string)
	var (
		mu      sync.Mutex
		results []*domainCrawl
		runErr  error
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for range min(c.opts.Concurrency, max(len(due), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				dc := c.crawlDomain(runCtx, d)
				if runCtx.Err() != nil {
					// Cancelled mid-domain: leave it pending for the next run,
					// rather than recording a half-read domain as done.
					continue
				}
				// The domain is complete: let its one transaction finish even
				// if Ctrl-C arrives now, so a clean stop never reads as a
				// database failure.
				err := c.opts.Store.SaveDomain(context.WithoutCancel(runCtx), dc.result)
				mu.Lock()
				if err != nil {
					if runErr == nil {
						runErr = err
					}
					stop()
					mu.Unlock()
					continue
				}
				results = append(results, dc)
				sum.Crawled++
				sum.Outcomes[dc.result.Outcome]++
				if dc.result.Class != "" {
					sum.Classes[dc.result.Class]++
				}
				if c.opts.Progress != nil {
					c.opts.Progress(Progress{Done: sum.Crawled, Total: len(due), Domain: d, Outcome: dc.result.Outcome, Class: dc.result.Class})
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, d := range due {
		select {
		case work <- d:
		case <-runCtx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	sum.Left = len(due) - sum.Crawled
	cards, remotes := map[string]bool{}, map[string]bool{}
	for _, dc := range results {
		for _, cr := range dc.result.Cards {
			cards[cr.Key] = true
		}
		for _, r := range dc.result.Remotes {
			remotes[r.URLNorm] = true
		}
	}
	sum.Cards, sum.Remotes = len(cards), len(remotes)
	sort.Slice(results, func(i, j int) bool { return results[i].result.Domain < results[j].result.Domain })
	return results, runErr
}

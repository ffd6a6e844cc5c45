// Package discover is the crawl: it takes domains, fetches their AI Catalogs,
// follows entries to Server Cards (nested catalogs within bounds), validates
// them, records everything in the store, and decides which remotes warrant an
// MCP probe. Parsing lives in catalog and servercard, fetching in
// internal/fetch, SQL in store, reached through the Store interface declared
// here; internal/pipeline runs the reconciliation and namespace steps after
// a crawl.
package discover

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// Options configure a crawl. Zero values take the documented defaults.
type Options struct {
	Fetch     *fetch.Client
	Store     Store
	Validator *servercard.Validator
	Logger    *slog.Logger

	// Concurrency is the number of domains in flight (default 256: a crawl
	// of the open web mostly waits on round trips and timeouts). Requests
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
	// Robots reads each host's robots.txt before fetching documents from
	// it, and fetches none it disallows for cardcrawl (robots.go).
	Robots bool

	// The bounds on what one domain can cause. Hitting one is a finding and
	// marks the domain as capped; the rest of the run is unaffected.

	// MaxCards bounds the cards read for one domain, inline and fetched
	// together (default 200).
	MaxCards int
	// MaxCatalogs bounds the catalogs read for one domain, the root and
	// nested ones, inline or fetched (default 50).
	MaxCatalogs int
	// MaxRemotes bounds the remotes kept from one card (default 32); the
	// rest are not stored.
	MaxRemotes int
	// DomainTimeout bounds the time one domain may take, its fetches and its
	// probes together (default 2 minutes), so a catalog pointing at hundreds
	// of stalling hosts cannot hold a worker for long.
	DomainTimeout time.Duration

	// Probe configures the MCP probes that follow each domain.
	Probe ProbeOptions
	// ProbeRegistry also decides about (and probes, when warranted) the
	// remotes of latest, active Registry entries, after the domains.
	ProbeRegistry bool

	// Progress, when set, is called after each domain finishes (its result
	// saved and its probes done), from the worker that crawled it.
	Progress func(Progress)
	// Now is the clock (tests inject one). Defaults to time.Now.
	Now func() time.Time
}

// ProbeOptions configure probing.
type ProbeOptions struct {
	Mode   string        // auto (default), always, never
	MaxAge time.Duration // a probe younger than this is fresh (default 24h)
	Prober *probe.Prober // required unless Mode is never
	// MaxPerDomain bounds the probes one domain causes in one run (default
	// 16); remotes past it are skipped as probe_cap and probed on a later
	// crawl, when those probed now are fresh.
	MaxPerDomain int
}

// Progress reports a crawl's advance. Total is the number of domains taken
// on so far: the list is read while the crawl runs.
type Progress struct {
	Done, Total int
	Domain      string
	Outcome     string
	Class       string
}

// Summary is what a crawl did, for people and for --json.
type Summary struct {
	RunID     int64 `json:"runId"`
	Requested int   `json:"requested"`
	// Invalid holds the first few inputs that are not domain names;
	// InvalidCount counts them all.
	Invalid      []string       `json:"invalid,omitempty"`
	InvalidCount int            `json:"invalidCount"`
	Duplicates   int            `json:"duplicates"`
	Fresh        int            `json:"fresh"`
	Crawled      int            `json:"crawled"`
	Left         int            `json:"left"`
	Outcomes     map[string]int `json:"outcomes"`
	Classes      map[string]int `json:"classes"`
	Capped       map[string]int `json:"capped,omitempty"`
	Cards        int            `json:"cards"`
	Remotes      int            `json:"remotes"`
	Probes       map[string]int `json:"probes,omitempty"`
	ProbeSkips   map[string]int `json:"probeSkips,omitempty"`
	Interrupted  bool           `json:"interrupted"`
	DurationMs   int64          `json:"durationMs"`
}

// maxInvalidExamples bounds Summary.Invalid: a list of a million junk
// lines is counted, not kept.
const maxInvalidExamples = 10

const (
	defaultConcurrency   = 256
	defaultMaxDepth      = 4
	defaultMaxEntries    = 1000
	defaultMaxCards      = 200
	defaultMaxCatalogs   = 50
	defaultMaxRemotes    = 32
	defaultMaxProbes     = 16
	defaultDomainTimeout = 2 * time.Minute
	defaultProbeMaxAge   = 24 * time.Hour
	// enqueueBatch is how many input names are enqueued per transaction.
	enqueueBatch = 500
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
	setDefault(&o.MaxEntries, defaultMaxEntries)
	setDefault(&o.MaxCards, defaultMaxCards)
	setDefault(&o.MaxCatalogs, defaultMaxCatalogs)
	setDefault(&o.MaxRemotes, defaultMaxRemotes)
	setDefault(&o.Probe.MaxPerDomain, defaultMaxProbes)
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
	return nil
}

func setDefault(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// Probe modes.
const (
	ProbeAuto   = "auto"
	ProbeAlways = "always"
	ProbeNever  = "never"
)

// ErrInput wraps an error reading the list of domains: the run stops
// taking new domains, finishes those in flight, and reports it.
var ErrInput = errors.New("reading the domains")

// Crawl crawls the domains the sequence yields into the store, reading it
// while it crawls: names are enqueued in batches, a name is crawled as soon
// as it is read (a list on a pipe need not end first), and memory does not
// grow with the list. Each domain's result is saved in one transaction,
// then its remotes are decided and probed within the same per-domain time
// limit. Remotes that earlier, stopped runs left undecided are finished at
// the end. Failures of single domains are data, not errors: Crawl returns
// an error only when the run itself cannot go on (the database fails, the
// list cannot be read). When ctx is cancelled it stops taking new domains,
// lets in-flight ones end, and reports how many are left; they stay
// pending for the next run.
func Crawl(ctx context.Context, opts Options, domains iter.Seq2[string, error]) (Summary, error) {
	if err := opts.defaults(); err != nil {
		return Summary{}, err
	}
	start := opts.Now()
	sum := Summary{Outcomes: map[string]int{}, Classes: map[string]int{}, Capped: map[string]int{},
		Probes: map[string]int{}, ProbeSkips: map[string]int{}}

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

	c := &crawler{opts: opts, runID: runID, sum: &sum, inflight: map[string]bool{}}
	if opts.Robots {
		c.robots = newRobotsCache(opts.Fetch.UserAgent())
	}
	runErr := c.crawlAll(ctx, domains)
	if runErr == nil && ctx.Err() == nil {
		runErr = c.finishLeftovers(ctx)
	}
	if runErr == nil && ctx.Err() == nil && opts.ProbeRegistry {
		runErr = c.probeRegistry(ctx)
	}
	// Counted once the run's writes are done, from what the store holds.
	cards, remotes, err := opts.Store.RunTotals(context.WithoutCancel(ctx), runID)
	if err != nil && runErr == nil {
		runErr = err
	}
	sum.Cards, sum.Remotes = cards, remotes
	return finishRun(ctx, opts, start, &sum, runErr)
}

// finishRun records how a run ended, with its summary.
func finishRun(ctx context.Context, opts Options, start time.Time, sum *Summary, runErr error) (Summary, error) {
	sum.Interrupted = ctx.Err() != nil
	sum.DurationMs = opts.Now().Sub(start).Milliseconds()
	status := store.RunDone
	switch {
	case runErr != nil:
		status = store.RunFailed
	case sum.Interrupted:
		status = store.RunInterrupted
	}
	if err := opts.Store.FinishRun(sum.RunID, status, *sum); err != nil && runErr == nil {
		runErr = err
	}
	return *sum, runErr
}

// Names yields the given names, for callers that have a list in hand.
func Names(list ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, n := range list {
			if !yield(n, nil) {
				return
			}
		}
	}
}

func runOptions(o Options) map[string]any {
	return map[string]any{
		"concurrency": o.Concurrency, "force": o.Force, "followLinks": o.FollowLinks,
		"legacyPaths": o.LegacyPaths, "maxDepth": o.MaxDepth, "maxEntries": o.MaxEntries,
		"maxCards": o.MaxCards, "maxCatalogs": o.MaxCatalogs, "maxRemotes": o.MaxRemotes,
		"maxProbes": o.Probe.MaxPerDomain, "domainTimeout": o.DomainTimeout.String(), "probe": o.Probe.Mode,
		"probeMaxAge": o.Probe.MaxAge.String(),
	}
}

type crawler struct {
	opts  Options
	runID int64

	mu       sync.Mutex // guards sum, inflight and runErr
	sum      *Summary
	inflight map[string]bool // endpoints being decided or probed now: at most one per worker
	runErr   error
	stop     context.CancelFunc // ends the run on a database error
	finished int                // domains done, probes included (Progress.Done)
	robots   *robotsCache       // with Options.Robots

	due atomic.Int64 // domains taken on so far
}

// fail records the first error that ends the run, and ends it.
func (c *crawler) fail(err error) {
	c.setErr(err)
	c.stop()
}

// setErr records the first error that ends the run without stopping what
// is in flight.
func (c *crawler) setErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runErr == nil {
		c.runErr = err
	}
}

// crawlAll reads the list, enqueues it in batches and runs the domain
// workers. A database error or a read error stops the run; ctx
// cancellation stops handing out domains.
func (c *crawler) crawlAll(ctx context.Context, domains iter.Seq2[string, error]) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	c.stop = stop
	// One batch of due domains waits here, so the workers keep busy while
	// the next batch is read and enqueued (which waits its turn for the
	// database like everyone else).
	work := make(chan string, enqueueBatch)
	var wg sync.WaitGroup
	for range c.opts.Concurrency {
		wg.Go(func() {
			for d := range work {
				c.domain(runCtx, d)
			}
		})
	}
	c.feed(runCtx, domains, work)
	close(work)
	wg.Wait()
	c.sum.Left = int(c.due.Load()) - c.sum.Crawled
	return c.runErr
}

// feed reads names on a goroutine of their own (a read from a pipe may
// block for as long as the writer likes), takes whatever has arrived, up
// to a batch, enqueues it in one transaction and hands the due domains to
// the workers. A batch does not wait to fill: a name that arrives alone is
// crawled at once.
func (c *crawler) feed(ctx context.Context, domains iter.Seq2[string, error], work chan<- string) {
	lines := make(chan string, enqueueBatch)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		for d, err := range domains {
			if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- d:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		var batch []string
		select {
		case d, ok := <-lines:
			if !ok {
				select {
				case err := <-readErr:
					// What was read is crawled; nothing more is taken on.
					c.setErr(fmt.Errorf("%w: %w", ErrInput, err))
				default:
				}
				return
			}
			batch = append(batch, d)
		case <-ctx.Done():
			return
		}
	more:
		for len(batch) < enqueueBatch {
			select {
			case d, ok := <-lines:
				if !ok {
					break more
				}
				batch = append(batch, d)
			default:
				break more
			}
		}
		due, err := c.enqueue(ctx, batch)
		if err != nil {
			if ctx.Err() == nil {
				c.fail(err)
			}
			return
		}
		for _, d := range due {
			select {
			case work <- d:
			case <-ctx.Done():
				return
			}
		}
	}
}

// enqueue normalises one batch of input and takes it on in the store.
func (c *crawler) enqueue(ctx context.Context, batch []string) ([]string, error) {
	names := make([]string, 0, len(batch))
	c.mu.Lock()
	for _, d := range batch {
		c.sum.Requested++
		n, err := NormalizeDomain(d)
		if err != nil {
			// Counted in the summary; a domains file with some junk lines
			// is data, not a failed run.
			c.sum.InvalidCount++
			if len(c.sum.Invalid) < maxInvalidExamples {
				c.sum.Invalid = append(c.sum.Invalid, d)
			}
			c.opts.Logger.Debug("skipping input that is not a domain", "input", d, "err", err)
			continue
		}
		names = append(names, n)
	}
	c.mu.Unlock()
	if len(names) == 0 {
		return nil, nil
	}
	enq, err := c.opts.Store.Enqueue(ctx, names, store.EnqueueOptions{RunID: c.runID, Force: c.opts.Force})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.sum.Fresh += enq.Fresh
	c.sum.Duplicates += enq.Duplicates
	c.mu.Unlock()
	c.due.Add(int64(len(enq.Due)))
	return enq.Due, nil
}

// domain crawls one domain, saves its result, and decides and probes its
// remotes, all within the per-domain time limit. runCtx is the run's
// context: only its cancellation (Ctrl-C) means "interrupted"; the
// domain's own deadline is an ordinary bound, recorded as such.
func (c *crawler) domain(runCtx context.Context, domain string) {
	if runCtx.Err() != nil {
		return // the queue drains after Ctrl-C: what is left stays pending
	}
	ctx, cancel := context.WithTimeout(runCtx, c.opts.DomainTimeout)
	defer cancel()
	dc := c.crawlDomain(runCtx, ctx, domain)
	if runCtx.Err() != nil {
		// Cancelled mid-domain: leave it pending for the next run, rather
		// than recording a half-read domain as done; what it fetched is
		// kept.
		dc.flushFetches(runCtx)
		return
	}
	b := c.newBudget(runCtx, ctx, domain)
	b.batch = true
	early := c.decidesWithResult()
	if early {
		b.decideAll(dc.remotes)
		dc.result.Decisions = b.take()
	}
	// The domain is complete: let its one transaction finish even if
	// Ctrl-C arrives now, so a clean stop never reads as a database
	// failure.
	err := c.opts.Store.SaveDomain(context.WithoutCancel(runCtx), dc.result)
	if !b.written(dc.result.Decisions, len(dc.result.Decisions), err) {
		return
	}
	c.mu.Lock()
	c.sum.Crawled++
	c.sum.Outcomes[dc.result.Outcome]++
	if dc.result.Class != "" {
		c.sum.Classes[dc.result.Class]++
	}
	c.mu.Unlock()

	if !early {
		b.decideAll(dc.remotes)
	}
	b.finish(dc.result.Capped)

	if c.opts.Progress != nil {
		// Serialised, so a progress line is never drawn over another.
		c.mu.Lock()
		defer c.mu.Unlock()
		c.finished++
		c.opts.Progress(Progress{Done: c.finished, Total: int(c.due.Load()), Domain: domain,
			Outcome: dc.result.Outcome, Class: dc.result.Class})
	}
}

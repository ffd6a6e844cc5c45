package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"iter"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "worker", summary: "crawl the shared frontier until stopped (run one per machine, or several)", run: runWorker})
}

// workerFlags are worker's own flags; it takes every crawl flag too.
type workerFlags struct {
	lease          time.Duration
	batch          int
	grace          time.Duration
	idle           time.Duration
	registryEvery  time.Duration
	registryURL    string
	recomputeEvery time.Duration
	asJSON         bool
}

// The leader's schedules, by their names in the schedules table. The
// leadership itself is keyed by registrySchedule, as it was before the
// recomputation had a schedule, so workers of either build elect one.
const (
	registrySchedule  = "registry-sync"
	recomputeSchedule = "recompute"
)

func runWorker(ctx context.Context, e *env, args []string) (err error) {
	fs := newFlags(e, "worker", "[flags]", joinLines(
		"Crawl the frontier in the database until stopped: lease due domains in batches, crawl them",
		"(every crawl flag applies), save them, and lease more; finished domains come back when their",
		"freshness runs out (Cache-Control max-age, backoff after failures). Many workers, on one machine",
		"or many, may share one PostgreSQL database (--db postgres://…): each domain is leased to one",
		"worker at a time, a worker that dies loses its leases when they expire, and requests to any one",
		"host are one at a time across all workers, Retry-After honoured by all. Exactly one worker at a",
		"time (the leader) keeps diff, namespaces and the categories current: every --recompute-every, if",
		"anything changed, it reconciles cards with the Registry entries, lists the namespaces and",
		"recategorises (what crawl does at its end); with --registry-every it also syncs the MCP Registry.",
		"Seed the frontier with 'cardcrawl domains add'; watch it with 'cardcrawl status'.",
		"SIGTERM or Ctrl-C: stop leasing, finish in-flight domains within --grace, release the rest, exit 0."))
	var (
		db dbFlags
		nf netFlags
		cf crawlFlags
		lf logFlags
		wf workerFlags
	)
	db.register(fs)
	nf.register(fs)
	cf.register(fs)
	lf.register(fs)
	fs.DurationVar(&wf.lease, "lease", 5*time.Minute, "how long a domain lease lasts without a heartbeat (heartbeats every third of it); a killed worker's domains come back after this")
	fs.IntVar(&wf.batch, "lease-batch", 0, "domains leased per query (default: --concurrency); at most twice --concurrency are held at once")
	fs.DurationVar(&wf.grace, "grace", 30*time.Second, "on SIGTERM, time to finish in-flight domains before they are released unfinished")
	fs.DurationVar(&wf.idle, "idle", 10*time.Second, "when nothing is due, look again after this long (or when the next domain is due, if sooner)")
	fs.DurationVar(&wf.registryEvery, "registry-every", 0, "sync the MCP Registry this often (leader only; 0: never)")
	fs.StringVar(&wf.registryURL, "registry-url", registry.DefaultBaseURL, "registry base `URL` for --registry-every")
	fs.DurationVar(&wf.recomputeEvery, "recompute-every", 10*time.Minute, "reconcile, list namespaces and recategorise this often when anything changed (leader only; 0: never)")
	fs.BoolVar(&wf.asJSON, "json", false, "print the summary at exit as JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := cf.validate(); err != nil {
		return err
	}
	switch {
	case wf.lease < time.Second:
		return usagef("--lease must be at least 1s")
	case wf.grace < 0, wf.idle <= 0, wf.registryEvery < 0, wf.recomputeEvery < 0:
		return usagef("--grace, --idle, --registry-every and --recompute-every must not be negative (--idle positive)")
	case wf.batch < 0:
		return usagef("--lease-batch must not be negative")
	}
	if nf.concurrency <= 0 {
		return usagef("--concurrency must be positive")
	}
	if wf.batch == 0 {
		wf.batch = nf.concurrency
	}
	log := lf.logger(e)
	if _, err := nf.client(log); err != nil { // flag errors before the database is touched
		return err
	}
	crawlGC(nf.concurrency)
	st, err := openStore(ctx, db.path, store.Options{Logger: log, MaxConns: workerConns(nf.concurrency)})
	if err != nil {
		return err
	}
	defer st.Close()
	lock, err := lockCrawl(ctx, st, store.CrawlShared, "worker")
	if err != nil {
		return err
	}
	defer lock.Release()
	// A lost lock (a crawl took the database) stops the worker as SIGTERM does.
	ctx, lost := guardCrawl(ctx, lock, lockCheckEvery, log)
	defer reportLost(&err, lost)

	host, _ := os.Hostname()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	w := &worker{st: st, log: log, flags: wf, id: fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(rnd[:])),
		target: 2 * nf.concurrency, done: make(chan struct{}, 1), validator: sync.OnceValues(registry.NewValidator)}
	// The host gate is what keeps workers polite to each other; on SQLite
	// (one worker) it still shares each host's Retry-After among all the
	// domains in flight.
	nf.gate = st.NewHostGate(w.id, hostLeaseTTL(nf.timeout))
	client, err := nf.client(log)
	if err != nil {
		return err
	}
	opts, err := crawlOptions(crawlSetup{store: st, client: client, log: log, net: nf, flags: cf})
	if err != nil {
		return err
	}
	opts.Progress = func(discover.Progress) {
		w.crawled.Add(1)
		select {
		case w.done <- struct{}{}:
		default:
		}
	}
	if err := st.RegisterWorker(ctx, store.Worker{ID: w.id, Host: host, PID: os.Getpid(), Lease: wf.lease}); err != nil {
		return err
	}
	log.Info("worker started", "id", w.id, "db", st.Dialect())

	// ctx ends on SIGTERM or Ctrl-C: stop leasing at once; in-flight
	// domains get the grace period, then their context ends too.
	hard, stopHard := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHard()
	go func() {
		select {
		case <-ctx.Done():
			t := time.AfterFunc(wf.grace, stopHard)
			<-hard.Done()
			t.Stop()
		case <-hard.Done():
		}
	}()
	var bg sync.WaitGroup
	bg.Go(func() { w.heartbeat(hard) })
	if wf.registryEvery > 0 || wf.recomputeEvery > 0 {
		bg.Go(func() { w.lead(ctx, client) })
	}

	sum, runErr := discover.Crawl(hard, opts, w.domains(ctx))
	stopHard()
	bg.Wait()
	released, err := st.StopWorker(context.Background(), w.id, int(w.crawled.Load()))
	if err != nil && runErr == nil {
		runErr = err
	}
	log.Info("worker stopped", "id", w.id, "released", released)
	if wf.asJSON {
		if err := writeJSON(e.stdout, sum); err != nil {
			return err
		}
	} else if err := printSummary(e.stdout, sum); err != nil {
		return err
	}
	// Stopping is how a worker ends: not an interruption, exit 0.
	return runErr
}

// workerConns is a worker's PostgreSQL connection cap: enough for the
// domains in flight to save and take hosts without queueing much, plus the
// heartbeat's and the leader lock's own, and small enough that tens of
// workers fit in a server's default max_connections of 100 only when
// raised: 20 each.
func workerConns(concurrency int) int { return min(concurrency, 16) + 4 }

// hostLeaseTTL bounds how long a dead worker keeps a host from the others.
// A request holds its host for at most the request timeout (the guard
// times the whole exchange once the host is ours); twice that leaves room
// for clocks that disagree a little.
func hostLeaseTTL(timeout time.Duration) time.Duration { return 2 * timeout }

// worker is one worker process's loop state.
type worker struct {
	st     *store.DB
	log    *slog.Logger
	flags  workerFlags
	id     string
	target int // leases held at most: in flight plus one batch waiting
	// done hears that a domain finished, so the lease loop can take more.
	done    chan struct{}
	crawled atomic.Int64
	leader  atomic.Bool
	// validator compiles the Registry's schemas once, at the first sync.
	validator func() (*registry.Validator, error)
	// recomputedAt is the store's feed version after the leader's last
	// recomputation (its own writes included): while it has not moved,
	// nothing needs recomputing.
	recomputedAt string
	// recomputeTook is how long the last recomputation took: the next
	// waits at least ten times that, so a large database's full passes
	// take at most a tenth of the leader's time.
	recomputeTook time.Duration
}

// domains yields leased domains until ctx ends: whenever fewer than target
// leases are held, it leases up to a batch more; when nothing is due it
// waits for the next domain to come due (or --idle, or a finished domain).
// The crawl saves each domain, which ends its lease.
func (w *worker) domains(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for ctx.Err() == nil {
			got, err := w.lease(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// A database hiccup is not the end of a long-running worker.
				w.log.Warn("leasing domains failed; trying again", "err", err)
			}
			for _, d := range got {
				if !yield(d, nil) {
					return
				}
			}
			if len(got) > 0 {
				continue
			}
			w.wait(ctx, err)
		}
	}
}

func (w *worker) lease(ctx context.Context) ([]string, error) {
	held, err := w.st.LeasesHeld(ctx, w.id)
	if err != nil {
		return nil, err
	}
	want := min(w.target-held, w.flags.batch)
	if want <= 0 {
		return nil, nil
	}
	return w.st.LeaseDomains(ctx, w.id, want)
}

// wait pauses the lease loop until a domain finishes, the next domain
// comes due, --idle passes, or ctx ends.
func (w *worker) wait(ctx context.Context, leaseErr error) {
	pause := w.flags.idle
	if leaseErr == nil {
		if next, ok, err := w.st.NextDue(ctx); err == nil && ok {
			pause = min(pause, max(time.Until(next), 10*time.Millisecond))
		}
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-w.done:
	case <-t.C:
	}
}

// heartbeat keeps the worker's leases and its row alive until ctx ends.
func (w *worker) heartbeat(ctx context.Context) {
	tick := time.NewTicker(w.flags.lease / 3)
	defer tick.Stop()
	hb := w.st.NewHeartbeater(w.id)
	defer hb.Close()
	for {
		if err := hb.Beat(ctx, int(w.crawled.Load()), w.leader.Load(), w.flags.lease); err != nil && ctx.Err() == nil {
			w.log.Warn("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// lead competes for the leadership and, while it holds it, runs the
// Registry sync and the recomputation on their schedules, until ctx ends.
func (w *worker) lead(ctx context.Context, client *fetch.Client) {
	check := 10 * time.Second
	for _, every := range []time.Duration{w.flags.registryEvery, w.flags.recomputeEvery} {
		if every > 0 {
			check = min(check, every/4)
		}
	}
	tick := time.NewTicker(max(check, 50*time.Millisecond))
	defer tick.Stop()
	var l *store.Leadership
	defer func() {
		if l != nil {
			l.Release()
		}
	}()
	for {
		switch {
		case l != nil && !l.Held(ctx):
			w.log.Warn("lost the leadership")
			l.Release()
			l = nil
			w.leader.Store(false)
		case l == nil:
			got, ok, err := w.st.TryLead(ctx, registrySchedule)
			if err != nil && ctx.Err() == nil {
				w.log.Warn("leader election failed", "err", err)
			}
			if ok {
				l = got
				w.leader.Store(true)
				w.log.Info("leading: the Registry sync and the recomputation are this worker's")
			}
		}
		if l != nil && w.flags.registryEvery > 0 {
			w.scheduled(ctx, client, w.flags.registryEvery)
		}
		if l != nil && w.flags.recomputeEvery > 0 {
			w.recompute(ctx, w.flags.recomputeEvery)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scheduled runs the Registry sync and reconciliation if one is due.
func (w *worker) scheduled(ctx context.Context, client *fetch.Client, every time.Duration) {
	claimed, err := w.st.ClaimSchedule(ctx, registrySchedule, w.id, every)
	if err != nil || !claimed {
		if err != nil && ctx.Err() == nil {
			w.log.Warn("registry schedule", "err", err)
		}
		return
	}
	before := w.feedVersion(ctx)
	runErr := w.syncRegistry(ctx, client)
	if runErr != nil {
		w.log.Warn("scheduled registry sync failed", "err", runErr)
	} else if before == w.recomputedAt {
		// The sync recomputed: unless a crawl wrote meanwhile, the
		// recomputation's next turn has nothing to do.
		w.recomputedAt = w.feedVersion(ctx)
	}
	if err := w.st.FinishSchedule(context.WithoutCancel(ctx), registrySchedule, runErr); err != nil {
		w.log.Warn("registry schedule", "err", err)
	}
	if _, err := w.st.SweepHostLeases(ctx); err != nil && ctx.Err() == nil {
		w.log.Warn("sweeping host leases", "err", err)
	}
}

// recompute runs what crawl runs at its end (the reconciliation, the
// namespace list, the categories) when one is due and the feed changed
// since the last: a worker never ends, so without it diff, namespaces
// and the site's category and namespace filters would wait for a
// Registry sync or a hand-run command.
func (w *worker) recompute(ctx context.Context, every time.Duration) {
	v := w.feedVersion(ctx)
	if v == "" || v == w.recomputedAt {
		return
	}
	claimed, err := w.st.ClaimSchedule(ctx, recomputeSchedule, w.id, max(every, 10*w.recomputeTook))
	if err != nil || !claimed {
		if err != nil && ctx.Err() == nil {
			w.log.Warn("recompute schedule", "err", err)
		}
		return
	}
	began := time.Now()
	rec, runErr := pipeline.Recompute(ctx, w.st, pipeline.Options{Logger: w.log})
	w.recomputeTook = time.Since(began)
	switch {
	case runErr != nil && ctx.Err() != nil:
		// Stopping: the next leader's first turn runs it again.
		runErr = errors.New("interrupted: the worker stopped")
		w.log.Info("recomputation interrupted: the worker is stopping")
	case runErr != nil:
		w.log.Warn("scheduled recomputation failed", "err", runErr)
	default:
		w.recomputedAt = w.feedVersion(ctx)
		if !rec.Skipped {
			w.log.Info("recomputed", "pairs", rec.Reconcile.Pairs, "namespaces", rec.Namespaces.Namespaces, "took", w.recomputeTook)
		}
	}
	if err := w.st.FinishSchedule(context.WithoutCancel(ctx), recomputeSchedule, runErr); err != nil {
		w.log.Warn("recompute schedule", "err", err)
	}
}

// feedVersion is the store's feed version, "" when it cannot be read.
func (w *worker) feedVersion(ctx context.Context) string {
	v, err := w.st.FeedVersion(ctx)
	if err != nil && ctx.Err() == nil {
		w.log.Warn("reading the feed version", "err", err)
	}
	return v
}

func (w *worker) syncRegistry(ctx context.Context, client *fetch.Client) error {
	val, err := w.validator()
	if err != nil {
		return err
	}
	rc, err := registry.NewClient(registry.ClientOptions{BaseURL: w.flags.registryURL, HTTPClient: client.HTTPClient(), Logger: w.log})
	if err != nil {
		return err
	}
	// The pipeline runs the sync, then the reconciliation, namespaces and
	// categories, as `registry sync` does.
	out, err := pipeline.Sync(ctx, w.st, registry.SyncOptions{Client: rc, Validator: val, Logger: w.log},
		pipeline.Options{Logger: w.log})
	w.log.Info("registry sync", "pages", out.Result.Pages, "entries", out.Result.Entries, "err", out.SyncErr)
	return errors.Join(out.SyncErr, err)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/site"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "serve", summary: "serve the feed: Registry v0.1 read API, feed files, an HTML page", run: runServe})
}

// Limits of the HTTP server. Requests are small GETs, so reading one is
// quick; a response may be a large feed, so its write deadline moves on as
// long as the client keeps reading (feed.ServerOptions.StallTimeout).
const (
	serveReadHeaderTimeout = 10 * time.Second
	serveReadTimeout       = 30 * time.Second
	serveWriteTimeout      = 60 * time.Second // per write of a feed file; whole response otherwise
	serveIdleTimeout       = 60 * time.Second // then an idle keep-alive connection is closed
	serveMaxHeaderBytes    = 64 << 10
	serveDrainTimeout      = 5 * time.Second // Ctrl-C: requests in flight get this long to finish
	defaultMaxConns        = 256
	serveReadConns         = 8 // database connections reading at once
	// searchRefreshEvery is how often the site's search index catches up
	// with the database. Searches also read the feed records written since,
	// so this bounds how many they read (and how late a Registry sync's
	// changes are seen), not how late a crawl's are.
	searchRefreshEvery = 2 * time.Second
)

// serveMemoryLimit bounds the Go heap of serve (see streamingGC): many
// requests each hold a page, and the process stays under 100 MB with
// SQLite's own memory.
const serveMemoryLimit = 64 << 20

func runServe(ctx context.Context, e *env, args []string) error {
	files := make([]string, 0, len(feed.Formats))
	for _, f := range feed.Formats {
		files = append(files, f.Path)
	}
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [flags]", joinLines(
		"Serve what the database holds, read-only, answered from the database as asked (a crawl",
		"may write it meanwhile); every feed document has an ETag and answers If-None-Match with 304:",
		"  /                              the servers, with search (q) and filters (category, source,",
		"                                 outcome, grade, ns); /servers/{key} one server; /summary counts;",
		"                                 /raw/{sha256} a stored document as text",
		"  /v0.1/servers                  Registry v0.1 list API (limit, cursor, search, updated_since, grade,",
		"                                 outcome, source)",
		"  /v0.1/servers/{name}/versions  and /versions/{version} (latest or an exact version; source,",
		"                                 include_deleted); a name only the Registry declares has all its versions",
		"  "+strings.Join(files, " "),
		"                                 the feed files (grade, outcome, source; source=registry or all",
		"                                 adds the servers only the Registry declares)",
		"  /healthz                       ok",
		"At most --max-conns connections are open at once (more wait to be accepted); an idle",
		"keep-alive connection is closed after 60 s, and a client that stops reading for 60 s is",
		"cut off. Ctrl-C stops it, letting requests in flight finish (up to 5 s)."))
	var rf readFlags
	var addr string
	var maxConns int
	rf.register(fs, "")
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen `address`")
	fs.IntVar(&maxConns, "max-conns", defaultMaxConns, "most connections open at once (each takes a file descriptor)")
	var publisher, source string
	fs.StringVar(&publisher, "publisher-domain", "", publisherDomainHelp)
	fs.StringVar(&source, "source", store.FeedSourceCard, "what a request without ?source= gets: `card`, registry or all")
	var indexPath string
	fs.StringVar(&indexPath, "search-index", "", "keep the site's search index in `file` from one start to the next (it is "+
		"caught up at start rather than built anew: 10 to 16 s of CPU at 100,000 servers, during which searches read "+
		"every server); default a temporary file, built at each start")
	var pf profileFlags
	pf.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if !slices.Contains(store.FeedSources, source) {
		return usagef("--source must be one of %s, not %q", strings.Join(store.FeedSources, ", "), source)
	}
	if maxConns < 1 {
		return usagef("--max-conns must be at least 1")
	}
	if err := checkPublisherDomain(publisher); err != nil {
		return err
	}
	log := rf.lf.logger(e)
	// A pool of read-only connections: requests are answered side by side,
	// and a crawl writing the file meanwhile (WAL) holds none of them up.
	st, err := openExistingWith(ctx, rf.db, store.Options{Logger: log, ReadOnly: true, ReadConns: serveReadConns})
	if err != nil {
		return err
	}
	defer st.Close()
	stopIndex, err := keepSearchIndex(ctx, st, store.SearchIndexOptions{Path: indexPath, Keep: indexPath != ""}, log)
	if err != nil {
		return err
	}
	defer stopIndex()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	h := feed.Handler(feed.ServerOptions{Site: site.Handler(site.Options{Store: st, Logger: log}),
		Catalog: feed.CatalogOptions{PublisherDomain: publisher}, Logger: log, StallTimeout: serveWriteTimeout, Store: st,
		Source: source})
	fmt.Fprintf(e.stderr, "serving %s on http://%s/\n", st.Name(), ln.Addr())
	streamingGC(serveMemoryLimit)
	stopProfile, err := pf.start()
	if err != nil {
		return err
	}
	err = serveHTTP(ctx, ln, h, serveOptions{MaxConns: maxConns})
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	return err
}

// keepSearchIndex attaches a search index to st and keeps it current in
// the background until the returned stop is called. Until its first
// refresh completes, searches read every server, as without one, unless
// the index was taken up from its file (opts.Keep), which answers at once.
func keepSearchIndex(ctx context.Context, st *store.DB, opts store.SearchIndexOptions, log *slog.Logger) (stop func(), err error) {
	ix, err := st.OpenSearchIndex(ctx, opts)
	if err != nil {
		return nil, err
	}
	if ix.Ready() {
		log.Info("search index taken up from its file; catching up", "file", opts.Path)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(searchRefreshEvery)
		defer t.Stop()
		first := true
		for {
			start := time.Now()
			n, err := ix.Refresh(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				log.Warn("search index refresh failed; searches read every server until one succeeds", "err", err)
			case first:
				log.Info("search index ready", "records", n, "took", time.Since(start).Round(time.Millisecond))
				first = false
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		ix.Close()
	}, nil
}

// serveOptions are the server's limits; zero values take the defaults
// above (tests shorten them).
type serveOptions struct {
	MaxConns     int
	IdleTimeout  time.Duration
	ReadTimeout  time.Duration
	DrainTimeout time.Duration
	// onShutdown, if set, runs when shutdown begins (tests wait on it).
	onShutdown func()
}

// serveHTTP serves h on ln until ctx is done, then stops accepting and lets
// requests in flight finish for up to DrainTimeout.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, o serveOptions) error {
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = serveIdleTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = serveReadTimeout
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = serveDrainTimeout
	}
	// Requests still running when the drain time is up are cancelled, and
	// serveHTTP returns only once every handler has returned: the caller
	// closes the database after it, never under a request.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	var g gate
	defer g.closeAndWait()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !g.enter() {
				http.Error(w, "shutting down", http.StatusServiceUnavailable)
				return
			}
			defer g.leave()
			h.ServeHTTP(w, r)
		}),
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: serveReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      serveWriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    serveMaxHeaderBytes,
	}
	if o.onShutdown != nil {
		srv.RegisterOnShutdown(o.onShutdown)
	}
	// Without a cap, every idle keep-alive socket holds a file descriptor
	// until the process has none left and even /healthz cannot be accepted.
	ln = netutil.LimitListener(ln, o.MaxConns)
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.DrainTimeout)
		defer cancel()
		stopped <- srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	// Serve returns as soon as shutdown begins; the drain is not over until
	// Shutdown returns.
	if err := <-stopped; err != nil {
		cancelRequests()
		return fmt.Errorf("serve: requests still running after %s: %w", o.DrainTimeout, err)
	}
	return nil
}

// gate counts handlers running; once closed it admits none, and
// closeAndWait returns when the last one has left.
type gate struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   *sync.Cond
}

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.n == 0 && g.idle != nil {
		g.idle.Broadcast()
	}
}

func (g *gate) closeAndWait() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.idle = sync.NewCond(&g.mu)
	for g.n > 0 {
		g.idle.Wait()
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/site"
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
)

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [flags]", joinLines(
		"Serve what the database holds, read-only (reread at most every 5 seconds):",
		"  /                              the servers, with search (q) and filters (category, source,",
		"                                 outcome, grade, ns); /servers/{key} one server; /summary counts;",
		"                                 /raw/{sha256} a stored document as text",
		"  /v0.1/servers                  Registry v0.1 list API (limit, cursor)",
		"  /v0.1/servers/{name}/versions/latest",
		"  /feed.jsonl /feed.csv /feed.json /.well-known/ai-catalog.json",
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
	var publisher string
	fs.StringVar(&publisher, "publisher-domain", "", publisherDomainHelp)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if maxConns < 1 {
		return usagef("--max-conns must be at least 1")
	}
	log := rf.lf.logger(e)
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := checkPublisherDomain(publisher); err != nil {
		return err
	}
	h := feed.Handler(feed.ServerOptions{Site: site.Handler(site.Options{Store: st, Logger: log}), Catalog: feed.CatalogOptions{PublisherDomain: publisher}, Logger: log, StallTimeout: serveWriteTimeout, Source: func(ctx context.Context) ([]feed.Record, error) {
		servers, err := st.Servers(ctx)
		if err != nil {
			return nil, err
		}
		return feed.Records(servers), nil
	}})
	fmt.Fprintf(e.stderr, "serving %s on http://%s/\n", st.Name(), ln.Addr())
	return serveHTTP(ctx, ln, h, serveOptions{MaxConns: maxConns})
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
	srv := &http.Server{
		Handler:           h,
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
		return fmt.Errorf("serve: requests still running after %s: %w", o.DrainTimeout, err)
	}
	return nil
}

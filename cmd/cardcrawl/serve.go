package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/feed"
)

func init() {
	register(&command{name: "serve", summary: "serve the feed: Registry v0.1 read API, feed files, an HTML page", run: runServe})
}

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [flags]", joinLines(
		"Serve what the database holds, read-only (reread at most every 5 seconds):",
		"  /                              an HTML table of the discovered servers",
		"  /v0.1/servers                  Registry v0.1 list API (limit, cursor)",
		"  /v0.1/servers/{name}/versions/latest",
		"  /feed.jsonl /feed.csv /feed.json /.well-known/ai-catalog.json",
		"Ctrl-C stops it."))
	var rf readFlags
	var addr string
	rf.register(fs, "")
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen `address`")
	if err := parseNoArgs(fs, args); err != nil {
		return err
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
	srv := &http.Server{
		Handler: feed.Handler(feed.ServerOptions{Logger: log, Source: func(ctx context.Context) ([]feed.Record, error) {
			servers, err := st.Servers(ctx)
			if err != nil {
				return nil, err
			}
			return feed.Records(servers), nil
		}}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(e.stderr, "serving %s on http://%s/\n", rf.db.path, ln.Addr())
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

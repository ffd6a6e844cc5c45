package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/store"
)

var errHelp = flag.ErrHelp

// newFlags makes a command's flag set. Help goes to stdout (it was asked
// for); errors go to stderr as one line.
func newFlags(e *env, name, usage, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		w := e.stdout
		fmt.Fprintf(w, "Usage: cardcrawl %s %s\n\n%s\n\nFlags:\n", name, usage, strings.TrimSpace(description))
		printFlags(w, fs)
	}
	return fs
}

// hiddenFlags are accepted but left out of --help: tools for whoever
// measures cardcrawl (see BENCHMARKS.md), not part of the interface.
var hiddenFlags = map[string]bool{"cpuprofile": true, "memprofile": true}

// printFlags prints fs's flags as PrintDefaults does, without the hidden ones.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !hiddenFlags[f.Name] {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.SetOutput(w)
	shown.PrintDefaults()
}

// parse parses flags and positional arguments in any order (Go's flag
// package stops at the first positional one; users expect
// `cardcrawl crawl example.com --probe never` to work).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	// The flag package prints the usage on every error; only --help should
	// (a mistyped flag gets one line on stderr, and no help text lands in a
	// file stdout is redirected to).
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, errHelp
			}
			return nil, usagef("%s: %v (see 'cardcrawl %s --help')", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// dbFlags is --db, on every command that reads or writes the database.
type dbFlags struct{ path string }

func (d *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.path, "db", defaultDB(), "SQLite database `path` (created if missing), or a postgres:// URL; default $CARDCRAWL_DB, else cardcrawl.db")
}

// defaultDB is --db's default: $CARDCRAWL_DB, so a fleet of workers and
// the commands that watch them need not repeat a URL, else cardcrawl.db.
func defaultDB() string {
	if v := os.Getenv("CARDCRAWL_DB"); v != "" {
		return v
	}
	return "cardcrawl.db"
}

func (d *dbFlags) open(ctx context.Context, log *slog.Logger) (*store.DB, error) {
	return openWrite(ctx, d.path, log)
}

// netFlags are the flags of every command that touches the network.
type netFlags struct {
	connectTo   stringList
	caCerts     stringList
	dnsServer   string
	timeout     time.Duration
	userAgent   string
	concurrency int
	// gate, set by worker on a shared database, keeps requests one per
	// host across processes.
	gate fetch.HostGate
}

func (n *netFlags) register(fs *flag.FlagSet) {
	fs.Var(&n.connectTo, "connect-to", "connect to HOST2:PORT2 when a URL names HOST1:PORT1; the `rule` is HOST1:PORT1:HOST2:PORT2 (curl's meaning; an empty HOST1 or PORT1 matches any; repeatable; the address you name is trusted)")
	fs.Var(&n.caCerts, "ca-cert", "PEM `file` of extra trusted root certificates (repeatable)")
	fs.StringVar(&n.dnsServer, "dns-server", "", "resolve names through this DNS server (`host:port`) only; with --connect-to, names are still looked up first, so a simulated web can say a name does not exist")
	fs.DurationVar(&n.timeout, "timeout", 15*time.Second, "per-request timeout, body included")
	fs.StringVar(&n.userAgent, "user-agent", userAgent(), "User-Agent sent with every request (keep a contact URL in it)")
	// 512: on the internet's shape (round trips of ~100 ms, one host in
	// twenty hanging to the timeout) a crawl waits, not computes, well past
	// 256 domains in flight, and the crawl's memory limit grows with this
	// number (crawlGC); BENCHMARKS.md has the figures.
	fs.IntVar(&n.concurrency, "concurrency", 512, "hosts in flight (requests to one host are always one at a time)")
}

// client builds the program's one HTTP client from the flags.
func (n *netFlags) client(log *slog.Logger) (*fetch.Client, error) {
	opts := fetch.Options{UserAgent: n.userAgent, Timeout: n.timeout, Logger: log, DNSServer: n.dnsServer, HostGate: n.gate,
		HostsInFlight: n.concurrency}
	if n.timeout <= 0 {
		return nil, usagef("--timeout must be positive")
	}
	if n.concurrency <= 0 {
		return nil, usagef("--concurrency must be positive")
	}
	for _, s := range n.connectTo {
		ct, err := fetch.ParseConnectTo(s)
		if err != nil {
			return nil, usagef("--connect-to %q: %v", s, err)
		}
		opts.ConnectTo = append(opts.ConnectTo, ct)
	}
	if len(n.caCerts) > 0 {
		pool, err := fetch.LoadCertPool(n.caCerts...)
		if err != nil {
			return nil, usagef("--ca-cert: %v", err)
		}
		opts.RootCAs = pool
	}
	c, err := fetch.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// logFlags control diagnostics on stderr.
type logFlags struct{ verbose bool }

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&l.verbose, "v", false, "verbose: log each step to stderr")
}

func (l *logFlags) logger(e *env) *slog.Logger {
	level := slog.LevelWarn
	if l.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

// readFlags are the flags every command that reads the database shares.
type readFlags struct {
	db     dbFlags
	lf     logFlags
	asJSON bool
}

// register adds --db and -v, and --json when jsonHelp says what it prints.
func (r *readFlags) register(fs *flag.FlagSet, jsonHelp string) {
	fs.StringVar(&r.db.path, "db", defaultDB(), "SQLite database `path` (must exist), or a postgres:// URL; default $CARDCRAWL_DB, else cardcrawl.db")
	r.lf.register(fs)
	if jsonHelp != "" {
		fs.BoolVar(&r.asJSON, "json", false, jsonHelp)
	}
}

// open opens the database, which must exist, read-only.
func (r *readFlags) open(ctx context.Context, e *env) (*store.DB, error) {
	return openExisting(ctx, e, r.db, r.lf, true)
}

// parseNoArgs parses flags for a command that takes no positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), pos[0])
	}
	return nil
}

// userAgent names this build's version, so servers' logs say which cardcrawl
// called; the contact URL is how their operators reach us.
func userAgent() string {
	return "cardcrawl/" + version + " (+https://github.com/cardcrawl/cardcrawl)"
}

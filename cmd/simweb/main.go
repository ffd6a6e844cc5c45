// Command simweb serves a simulated web: many HTTPS host names on one
// loopback port, with a CA generated at start. Point cardcrawl (or curl) at
// it with --connect-to and a CA file, and every host name resolves to it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: simweb [flags]

Serves many HTTPS host names from one loopback port, for trying cardcrawl
offline. Every name gets a certificate from a CA generated at start and
written to --ca-out. Tell clients to send every host to this port and to
trust that CA:

  cardcrawl crawl --connect-to ::127.0.0.1:PORT --ca-cert ca.pem example.com
  curl --connect-to ::127.0.0.1:PORT --cacert ca.pem https://example.com/...

Hosts come from --demo (the built-in story of 15 domains), --fixtures (a
directory of .txtar fixture files) and --generate (a synthetic web). Runs
until interrupted (Ctrl-C).

flags:
`

// run is main without the process: it returns the exit code (0 done, 1 the
// web failed, 2 usage) once ctx is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	var (
		addr       = fs.String("addr", "127.0.0.1:8443", "loopback `address` to listen on (port 0 picks a free one)")
		caOut      = fs.String("ca-out", "ca.pem", "where to write the CA certificate (PEM) clients must trust")
		demo       = fs.Bool("demo", false, "serve the demo web (the domains cardcrawl demo crawls)")
		fixtures   = fs.String("fixtures", "", "serve every *.txtar fixture file in `dir`")
		generate   = fs.Int("generate", 0, "also serve a synthetic web of `N` domains")
		seed       = fs.Int64("seed", 1, "seed of the synthetic web (same seed, same web)")
		catShare   = fs.Float64("catalog-share", 0.3, "fraction of generated domains that publish a catalog")
		cards      = fs.Int("cards", 2, "card entries per generated catalog")
		mcpShare   = fs.Float64("mcp-share", 0.5, "fraction of generated remotes backed by a real MCP server")
		domainsOut = fs.String("domains-out", "", "write the domains to crawl, one per line, to `file`")
		verbose    = fs.Bool("v", false, "log every warning and serving error")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "simweb: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if !*demo && *fixtures == "" && *generate == 0 {
		fmt.Fprintln(stderr, "simweb: nothing to serve: give --demo, --fixtures DIR or --generate N")
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts := simweb.Options{Logger: log, Addr: *addr}

	var (
		w       *simweb.Web
		domains []string
		err     error
	)
	if *demo {
		w, domains, err = simweb.Demo(opts)
	} else {
		w, err = simweb.New(opts)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *fixtures != "" {
		if err := w.AddFixtureDir(*fixtures); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if *generate > 0 {
		share := *mcpShare
		names, err := w.Generate(simweb.GenerateOptions{
			Domains: *generate, CatalogShare: *catShare, CardsPerCatalog: *cards, MCPShare: share, Seed: *seed,
		})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		domains = append(domains, names...)
	}
	if err := w.WriteCA(*caOut); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *domainsOut != "" {
		if err := os.WriteFile(*domainsOut, []byte(strings.Join(domains, "\n")+"\n"), 0o644); err != nil {
			fmt.Fprintf(stderr, "simweb: %v\n", err)
			return 1
		}
	}
	if err := w.Start(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer w.Close()

	ca, err := filepath.Abs(*caOut)
	if err != nil {
		ca = *caOut
	}
	fmt.Fprintf(stdout, "simweb listening on %s\n", w.Addr())
	fmt.Fprintf(stdout, "  --connect-to %s\n", w.ConnectTo())
	fmt.Fprintf(stdout, "  --ca-cert %s\n", ca)
	if len(domains) > 0 {
		fmt.Fprintf(stdout, "try:\n  cardcrawl crawl --connect-to %s --ca-cert %s", w.ConnectTo(), ca)
		if *domainsOut != "" {
			fmt.Fprintf(stdout, " --domains %s\n", *domainsOut)
		} else {
			fmt.Fprintf(stdout, " %s\n", strings.Join(domains[:min(len(domains), 15)], " "))
		}
		fmt.Fprintf(stdout, "  curl --connect-to %s --cacert %s https://%s/.well-known/ai-catalog.json\n", w.ConnectTo(), ca, domains[0])
	}
	fmt.Fprintln(stdout, "Ctrl-C to stop.")
	<-ctx.Done()
	return 0
}

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
	"time"

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

Hosts come from --demo (the built-in story of 16 domains), --hostile (a
hostile publisher's tricks, one domain each), --fixtures (a directory of
.txtar fixture files) and --generate (a synthetic web). Runs until
interrupted (Ctrl-C).

The synthetic web can have the internet's shape, deterministic per seed:
a latency per response (--latency, --jitter) and shares of domains that do
not resolve, refuse connections, accept and never answer, or answer their
TLS handshake slowly. Names that do not resolve need a DNS server: simweb
then also answers DNS on --dns-addr, and prints the --dns-server flag a
crawl needs (with --connect-to, cardcrawl still looks names up there).
It also prints the network limit of that web: the wall time below which no
client at a given concurrency can crawl it.

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
		hostile    = fs.Bool("hostile", false, "serve the hostile web: one *.hostile.example domain per trick a hostile publisher plays, and a Registry double at "+simweb.HostileRegistryURL)
		fixtures   = fs.String("fixtures", "", "serve every *.txtar fixture file in `dir`")
		generate   = fs.Int("generate", 0, "also serve a synthetic web of `N` domains")
		seed       = fs.Int64("seed", 1, "seed of the synthetic web (same seed, same web)")
		catShare   = fs.Float64("catalog-share", 0.3, "fraction of generated domains that publish a catalog")
		cards      = fs.Int("cards", 2, "card entries per generated catalog")
		mcpShare   = fs.Float64("mcp-share", 0.5, "fraction of generated remotes backed by a real MCP server")
		latency    = fs.Duration("latency", 0, "delay every generated response by this much (a stand-in for round trips)")
		jitter     = fs.Duration("jitter", 0, "vary --latency by up to plus or minus this much, fixed per host and path")
		unresolv   = fs.Float64("unresolvable-share", 0, "fraction of generated domains whose names do not resolve (starts the DNS server)")
		refuse     = fs.Float64("refuse-share", 0, "fraction of generated domains that refuse connections (reset at the TLS ClientHello)")
		hang       = fs.Float64("hang-share", 0, "fraction of generated domains that accept connections and never answer")
		slowTLS    = fs.Float64("slow-tls-share", 0, "fraction of generated domains with a slow TLS handshake")
		slowDelay  = fs.Duration("slow-tls-delay", time.Second, "how slow a slow TLS handshake is")
		dnsAddr    = fs.String("dns-addr", "", "also answer DNS on this loopback UDP `address` (default 127.0.0.1:0 when --unresolvable-share is set)")
		limitTO    = fs.Duration("limit-timeout", 15*time.Second, "the client timeout the printed network limit assumes (what a hanging domain costs)")
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
	if !*demo && !*hostile && *fixtures == "" && *generate == 0 {
		fmt.Fprintln(stderr, "simweb: nothing to serve: give --demo, --hostile, --fixtures DIR or --generate N")
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// Nobody reads the request log of a standalone web; recording it would
	// grow with every request of a long benchmark.
	opts := simweb.Options{Logger: log, Addr: *addr, DiscardRequests: true}

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
	if *hostile {
		names, err := w.AddHostile(simweb.HostileOptions{})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		domains = append(domains, names...)
	}
	if *fixtures != "" {
		if err := w.AddFixtureDir(*fixtures); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	var limit *simweb.Limit
	if *generate > 0 {
		gopts := simweb.GenerateOptions{
			Domains: *generate, CatalogShare: *catShare, CardsPerCatalog: *cards, MCPShare: *mcpShare, Seed: *seed,
			Latency: *latency, Jitter: *jitter, UnresolvableShare: *unresolv, RefuseShare: *refuse, HangShare: *hang,
			SlowTLSShare: *slowTLS, SlowTLSDelay: *slowDelay,
		}
		names, err := w.Generate(gopts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		domains = append(domains, names...)
		if *latency > 0 || *unresolv+*refuse+*hang+*slowTLS > 0 {
			l, err := simweb.NetworkLimit(gopts, *limitTO)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 2
			}
			limit = &l
		}
		if *unresolv > 0 && *dnsAddr == "" {
			*dnsAddr = "127.0.0.1:0"
		}
	}
	if *dnsAddr != "" {
		if _, err := w.ServeDNS(*dnsAddr); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
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
	netFlags := fmt.Sprintf("--connect-to %s --ca-cert %s", w.ConnectTo(), ca)
	fmt.Fprintf(stdout, "simweb listening on %s\n", w.Addr())
	fmt.Fprintf(stdout, "  --connect-to %s\n", w.ConnectTo())
	fmt.Fprintf(stdout, "  --ca-cert %s\n", ca)
	if dns := w.DNSAddr(); dns != "" {
		fmt.Fprintf(stdout, "  --dns-server %s\n", dns)
		netFlags += " --dns-server " + dns
	}
	if *hostile {
		fmt.Fprintf(stdout, "hostile Registry double: %s (cardcrawl registry sync --url %s)\n", simweb.HostileRegistryURL, simweb.HostileRegistryURL)
	}
	if limit != nil {
		fmt.Fprintf(stdout, "network limit (catalogs and cards, no probes; a hanging domain costs %s): %s\n", *limitTO, limit)
		fmt.Fprintf(stdout, "  at concurrency 32: %s, 64: %s, 256: %s\n", limit.At(32).Round(time.Millisecond),
			limit.At(64).Round(time.Millisecond), limit.At(256).Round(time.Millisecond))
	}
	if len(domains) > 0 {
		fmt.Fprintf(stdout, "try:\n  cardcrawl crawl %s", netFlags)
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

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/termsafe"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "crawl", summary: "crawl domains: AI Catalog → Server Cards → database", run: runCrawl})
}

// crawlFlags are the crawl's own flags, shared with demo.
type crawlFlags struct {
	force         bool
	followLinks   bool
	legacyPaths   bool
	maxDepth      int
	maxEntries    int
	probeMode     string
	probeMaxAge   time.Duration
	domainTimeout time.Duration
}

func (c *crawlFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.BoolVar(&c.force, "force", false, "refetch even when the last result is still fresh (conditional requests are still sent)")
	fs.BoolVar(&c.followLinks, "follow-links", false, "when the well-known catalog is missing, read the home page's rel=\"ai-catalog\" links (HTML and Link header)")
	fs.BoolVar(&c.legacyPaths, "legacy-paths", false, "also try /.well-known/mcp/server-card.json, /.well-known/mcp.json and /.well-known/mcp/catalog.json (recorded as non-standard)")
	fs.IntVar(&c.maxDepth, "max-depth", 4, "maximum nesting depth of catalogs (0: do not follow nested catalogs)")
	fs.DurationVar(&c.domainTimeout, "domain-timeout", 10*time.Minute, "time limit for one domain, all its fetches together (what is not read keeps its earlier listings)")
	fs.IntVar(&c.maxEntries, "max-entries", 1000, "entries read from one catalog document (the rest are recorded as truncated)")
	fs.StringVar(&c.probeMode, "probe", "auto", "MCP probe: auto (when a card warrants it), always, or never")
	fs.DurationVar(&c.probeMaxAge, "probe-max-age", 24*time.Hour, "an endpoint probed more recently than this is not probed again unless its card changed")
}

// validate checks the crawl flags before anything is opened or created.
func (c *crawlFlags) validate() error {
	switch c.probeMode {
	case discover.ProbeAuto, discover.ProbeAlways, discover.ProbeNever:
	default:
		return usagef("--probe must be auto, always or never, not %q", c.probeMode)
	}
	switch {
	case c.maxDepth < 0:
		return usagef("--max-depth must be 0 (no nested catalogs) or more")
	case c.maxEntries < 1:
		return usagef("--max-entries must be at least 1")
	case c.domainTimeout <= 0:
		return usagef("--domain-timeout must be positive")
	case c.probeMaxAge < 0:
		return usagef("--probe-max-age must not be negative")
	}
	return nil
}

func runCrawl(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "crawl", "[--domains FILE|-] [DOMAIN...]", joinLines(
		"Crawl each domain: fetch https://DOMAIN/.well-known/ai-catalog.json, follow its MCP Server Card",
		"entries (any host, inline data, nested catalogs), validate the cards, store everything with its",
		"history, and probe the endpoints a card warrants. Failed domains are recorded, not fatal.",
		"Re-running is cheap: fresh results are skipped and the rest are revalidated with ETag/Last-Modified.",
		"Ctrl-C stops cleanly; domains not finished stay pending and the next run picks them up."))
	var (
		db     dbFlags
		nf     netFlags
		cf     crawlFlags
		lf     logFlags
		file   string
		asJSON bool
	)
	db.register(fs)
	nf.register(fs)
	cf.register(fs)
	lf.register(fs)
	fs.StringVar(&file, "domains", "", "read domains from `FILE`, one per line ('-' for stdin; '#' comments allowed)")
	fs.BoolVar(&asJSON, "json", false, "print the run summary as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	domains := pos
	if file != "" {
		list, err := readDomainsFile(e, file)
		if err != nil {
			return err
		}
		domains = append(domains, list...)
	}
	if len(domains) == 0 {
		return usagef("crawl: no domains given (name some, or use --domains FILE)")
	}
	if err := cf.validate(); err != nil {
		return err
	}
	for _, d := range pos {
		// Names typed on the command line are the user's to fix; bad lines
		// in a domains file are data, skipped and listed in the summary.
		if _, err := discover.NormalizeDomain(d); err != nil {
			return usagef("crawl: %v", err)
		}
	}
	log := lf.logger(e)
	client, err := nf.client(log)
	if err != nil {
		return err
	}
	st, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	sum, err := crawl(ctx, e, crawlSetup{store: st, client: client, log: log, net: nf, flags: cf}, domains)
	if err != nil && sum.RunID == 0 {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, sum); err != nil {
			return err
		}
	} else if err := printSummary(e.stdout, sum); err != nil {
		return err
	}
	if err == nil && sum.Interrupted {
		return errInterrupted
	}
	return err
}

func readDomainsFile(e *env, file string) ([]string, error) {
	var r io.Reader = e.stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, usagef("--domains: %v", err)
		}
		defer f.Close()
		r = f
	}
	list, err := discover.ReadDomains(r)
	if err != nil {
		return nil, usagef("--domains %s: %v", file, err)
	}
	return list, nil
}

type crawlSetup struct {
	store  *store.DB
	client *fetch.Client
	log    *slog.Logger
	net    netFlags
	flags  crawlFlags
}

// crawl wires the parts together and runs the crawl, drawing progress on a
// terminal.
func crawl(ctx context.Context, e *env, s crawlSetup, domains []string) (discover.Summary, error) {
	v, err := servercard.NewValidator()
	if err != nil {
		return discover.Summary{}, fmt.Errorf("load server card schema: %w", err)
	}
	opts := discover.Options{
		Fetch: s.client, Store: s.store, Validator: v, Logger: s.log, Concurrency: s.net.concurrency,
		Force: s.flags.force, FollowLinks: s.flags.followLinks, LegacyPaths: s.flags.legacyPaths,
		MaxDepth: depthOption(s.flags.maxDepth), MaxEntries: s.flags.maxEntries, DomainTimeout: s.flags.domainTimeout,
		Probe: discover.ProbeOptions{Mode: s.flags.probeMode, MaxAge: s.flags.probeMaxAge},
	}
	if s.flags.probeMode != discover.ProbeNever {
		opts.Probe.Prober = probe.New(probe.Options{Fetch: s.client,
			ClientVersion: version, Logger: s.log})
	}
	if e.stderrTTY {
		var mu sync.Mutex
		opts.Progress = func(p discover.Progress) {
			mu.Lock()
			defer mu.Unlock()
			what := p.Outcome
			if p.Class != "" {
				what += " (" + p.Class + ")"
			}
			fmt.Fprintf(e.stderr, "\r\033[K[%d/%d] %s: %s", p.Done, p.Total, termsafe.String(p.Domain), what)
			if p.Done == p.Total {
				fmt.Fprintln(e.stderr)
			}
		}
	}
	sum, err := discover.Crawl(ctx, opts, domains)
	if e.stderrTTY && sum.Interrupted {
		fmt.Fprintln(e.stderr)
	}
	if err != nil || sum.Interrupted {
		return sum, err
	}
	// Cards changed: the card ↔ Registry comparison and the namespace list
	// follow, so `diff` and `namespaces` never show a stale picture.
	if _, err := recomputeAfterSync(ctx, s.store, s.log); err != nil {
		return sum, fmt.Errorf("reconcile after the crawl: %w", err)
	}
	return sum, nil
}

func printSummary(w io.Writer, s discover.Summary) error {
	out := newTextOut(w)
	out.printf("run %d: %d domain(s) crawled, %d fresh (skipped), %d invalid input(s)\n",
		s.RunID, s.Crawled, s.Fresh, len(s.Invalid))
	out.printf("  outcomes: %s\n", counts(s.Outcomes))
	if len(s.Classes) > 0 {
		out.printf("  failure classes: %s\n", counts(s.Classes))
	}
	out.printf("  server cards: %d, remote endpoints: %d\n", s.Cards, s.Remotes)
	if len(s.Probes) > 0 || len(s.ProbeSkips) > 0 {
		out.printf("  probes: %s; not probed: %s\n", counts(s.Probes), counts(s.ProbeSkips))
	}
	if s.Interrupted {
		out.printf("  interrupted: %d domain(s) left pending; run the same command again to continue\n", s.Left)
	}
	if len(s.Invalid) > 0 {
		out.printf("  not domains: %s\n", strings.Join(s.Invalid, ", "))
	}
	return out.flush()
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// depthOption maps --max-depth to discover's MaxDepth, where 0 means the
// default and a negative value means no nested catalogs.
func depthOption(flag int) int {
	if flag == 0 {
		return -1
	}
	return flag
}

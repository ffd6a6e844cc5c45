package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/internal/revalidate"
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
	robots        bool
	maxDepth      int
	maxEntries    int
	maxCards      int
	maxCatalogs   int
	maxRemotes    int
	maxProbes     int
	probeMode     string
	probeMaxAge   time.Duration
	domainTimeout time.Duration
	probeRegistry bool
}

func (c *crawlFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	StringVar(*string, string, string, string)
	DurationVar(*time.Duration, string, time.Duration, string)
}) {
	fs.BoolVar(&c.force, "force", false, "refetch even when the last result is still fresh (conditional requests are still sent)")
	fs.BoolVar(&c.followLinks, "follow-links", false, "when the well-known catalog is missing, read the home page's rel=\"ai-catalog\" links (HTML and Link header)")
	fs.BoolVar(&c.robots, "robots", false, "read each host's robots.txt (RFC 9309, for the User-Agent's first word, \"cardcrawl\" by default) and fetch no document it disallows; an unreachable one disallows the host. An answer is used for a day, from the database in later runs")
	fs.BoolVar(&c.legacyPaths, "legacy-paths", false, "also try /.well-known/mcp/server-card.json, /.well-known/mcp.json and /.well-known/mcp/catalog.json (recorded as non-standard)")
	fs.IntVar(&c.maxDepth, "max-depth", 4, "maximum nesting depth of catalogs (0: do not follow nested catalogs)")
	fs.DurationVar(&c.domainTimeout, "domain-timeout", 2*time.Minute, "time limit for one domain, its fetches and its probes together (what is not read keeps its earlier listings)")
	fs.IntVar(&c.maxEntries, "max-entries", 1000, "entries read from one catalog document (the rest are recorded as truncated)")
	fs.IntVar(&c.maxCards, "max-cards", 200, "cards read for one domain, inline and fetched (the rest: a cards_truncated finding)")
	fs.IntVar(&c.maxCatalogs, "max-catalogs", 50, "catalogs read for one domain, the root and nested ones, inline or fetched (the rest: a catalogs_truncated finding)")
	fs.IntVar(&c.maxRemotes, "max-remotes", 32, "remotes kept from one card (the rest are not stored: a remotes_truncated finding)")
	fs.IntVar(&c.maxProbes, "max-probes", 16, "MCP probes one domain may cause per run (the rest are skipped as probe_cap, and probed on a later crawl)")
	fs.StringVar(&c.probeMode, "probe", "auto", "MCP probe: auto (when a card warrants it), always, or never")
	fs.DurationVar(&c.probeMaxAge, "probe-max-age", 24*time.Hour, "an endpoint probed more recently than this is not probed again unless its card changed")
	fs.BoolVar(&c.probeRegistry, "probe-registry", false, "after the domains, also probe the remotes of latest, active Registry entries (same rules; one probe per endpoint)")
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
	case c.maxCards < 1, c.maxCatalogs < 1, c.maxRemotes < 1, c.maxProbes < 1:
		return usagef("--max-cards, --max-catalogs, --max-remotes and --max-probes must be at least 1")
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
		"Ctrl-C stops cleanly; domains not finished stay pending and the next run picks them up.",
		"--revalidate first re-judges stored cards and catalogs that older validation rules judged, from",
		"their stored bodies (no fetch); with no domains named, that is all it does."))
	var (
		db      dbFlags
		nf      netFlags
		cf      crawlFlags
		lf      logFlags
		pf      profileFlags
		file    string
		asJSON  bool
		rejudge bool
		wait    time.Duration
	)
	db.register(fs)
	nf.register(fs)
	cf.register(fs)
	lf.register(fs)
	pf.register(fs)
	fs.StringVar(&file, "domains", "", "read domains from `FILE`, one per line ('-' for stdin; '#' comments allowed)")
	fs.BoolVar(&asJSON, "json", false, "print the run summary as JSON")
	fs.BoolVar(&rejudge, "revalidate", false, "re-judge stored documents judged by older validation rules, without fetching them")
	fs.DurationVar(&wait, "wait", 0, "when another crawl holds the database, wait up to this long for it to end (0: exit 3 at once)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := cf.validate(); err != nil {
		return err
	}
	// --revalidate alone re-judges what is stored and crawls nothing.
	domains, closeList := discover.Names(), func() {}
	if len(pos) > 0 || file != "" || !rejudge {
		if domains, closeList, err = domainInput(e, "crawl", pos, file); err != nil {
			return err
		}
	}
	defer closeList()
	log := lf.logger(e)
	client, err := nf.client(log)
	if err != nil {
		return err
	}
	crawlGC(nf.concurrency)
	st, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	stopProfile, err := pf.start()
	if err != nil {
		return err
	}
	out, err := crawl(ctx, e, crawlSetup{store: st, client: client, log: log, net: nf, flags: cf, revalidate: rejudge,
		wait: wait, stderr: e.stderr}, domains)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	sum := out.Summary
	if err != nil && sum.RunID == 0 {
		return err
	}
	if errors.Is(err, discover.ErrInput) {
		// A list that cannot be read is the user's to fix; what was read
		// is crawled, and the summary says what was done.
		err = usagef("--domains %s: %v", file, err)
	}
	report := crawlReport{Summary: sum}
	if rejudge {
		report.Revalidated = &out.Revalidated
	}
	if asJSON {
		if err := writeJSON(e.stdout, report); err != nil {
			return err
		}
	} else if err := printSummary(e.stdout, sum); err != nil {
		return err
	} else if r := report.Revalidated; r != nil {
		fmt.Fprintf(e.stdout, "  re-judged with the current rules: %d card(s), %d catalog(s); %d inline, re-judged when next fetched\n",
			r.Cards, r.Catalogs, r.NoBody)
		if r.Listings > 0 {
			fmt.Fprintf(e.stdout, "  named the catalog entry of %d listing(s) stored before listings named theirs\n", r.Listings)
		}
	}
	if err == nil && sum.Interrupted {
		return errInterrupted
	}
	return err
}

// openDomainsFile opens the list of domains ('-' is stdin) for reading
// line by line while the crawl runs: a list of a million names is never
// held whole, and names written to a pipe are crawled as they come.
func openDomainsFile(e *env, file string) (list iter.Seq2[string, error], closeFile func(), err error) {
	if file == "-" {
		return discover.ReadDomains(e.stdin), func() {}, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, usagef("--domains: %v", err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, nil, usagef("--domains: %s is a directory", file)
	}
	return discover.ReadDomains(f), func() { f.Close() }, nil
}

// concat yields a's values, then b's.
func concat(a, b iter.Seq2[string, error]) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for v, err := range a {
			if !yield(v, err) {
				return
			}
		}
		for v, err := range b {
			if !yield(v, err) {
				return
			}
		}
	}
}

type crawlSetup struct {
	store      *store.DB
	client     *fetch.Client
	log        *slog.Logger
	net        netFlags
	flags      crawlFlags
	revalidate bool
	// wait is how long a crawl waits for another to end (--wait).
	wait time.Duration
	// stderr hears that it waits.
	stderr io.Writer
}

// crawlReport is the crawl's --json output: the run summary's fields, and
// with --revalidate what was re-judged.
type crawlReport struct {
	discover.Summary
	Revalidated *revalidate.Summary `json:"revalidated,omitempty"`
}

// crawlOptions turns the flags into discover's options (crawl and worker).
func crawlOptions(s crawlSetup) (discover.Options, error) {
	v, err := servercard.NewValidator()
	if err != nil {
		return discover.Options{}, fmt.Errorf("load server card schema: %w", err)
	}
	opts := discover.Options{
		Store: s.store, Fetch: s.client, Validator: v, Logger: s.log, Concurrency: s.net.concurrency,
		Force: s.flags.force, FollowLinks: s.flags.followLinks, LegacyPaths: s.flags.legacyPaths, Robots: s.flags.robots,
		MaxDepth: depthOption(s.flags.maxDepth), MaxEntries: s.flags.maxEntries, DomainTimeout: s.flags.domainTimeout,
		MaxCards: s.flags.maxCards, MaxCatalogs: s.flags.maxCatalogs, MaxRemotes: s.flags.maxRemotes,
		Probe:         discover.ProbeOptions{Mode: s.flags.probeMode, MaxAge: s.flags.probeMaxAge, MaxPerDomain: s.flags.maxProbes},
		ProbeRegistry: s.flags.probeRegistry,
	}
	if s.flags.probeMode != discover.ProbeNever {
		opts.Probe.Prober = probe.New(probe.Options{Fetch: s.client,
			ClientVersion: version, Logger: s.log})
	}
	return opts, nil
}

// crawl wires the parts together and runs the crawl, drawing progress on a
// terminal.
func crawl(ctx context.Context, e *env, s crawlSetup, domains iter.Seq2[string, error]) (out pipeline.Crawled, err error) {
	opts, err := crawlOptions(s)
	if err != nil {
		return pipeline.Crawled{}, err
	}
	lock, err := waitCrawl(ctx, s.store, "crawl", s.wait, s.stderr)
	if err != nil {
		return pipeline.Crawled{}, err
	}
	defer lock.Release()
	drawn := false
	if e.stderrTTY {
		// Calls are serialised by discover. Total counts the domains taken
		// on so far: the list is still being read.
		opts.Progress = func(p discover.Progress) {
			what := p.Outcome
			if p.Class != "" {
				what += " (" + p.Class + ")"
			}
			fmt.Fprintf(e.stderr, "\r\033[K[%d/%d] %s: %s", p.Done, p.Total, termsafe.String(p.Domain), what)
			drawn = true
		}
	}
	ctx, lost := guardCrawl(ctx, lock, lockCheckEvery, s.log)
	defer reportLost(&err, lost)
	out, err = pipeline.Crawl(ctx, s.store, opts, domains, pipeline.Options{Logger: s.log, Revalidate: s.revalidate})
	if drawn {
		fmt.Fprintln(e.stderr)
	}
	return out, err
}

func printSummary(w io.Writer, s discover.Summary) error {
	out := newTextOut(w)
	dups := ""
	if s.Duplicates > 0 {
		dups = fmt.Sprintf(", %d duplicate(s)", s.Duplicates)
	}
	out.printf("run %d: %d domain(s) crawled, %d fresh (skipped), %d invalid input(s)%s\n",
		s.RunID, s.Crawled, s.Fresh, s.InvalidCount, dups)
	out.printf("  outcomes: %s\n", counts(s.Outcomes))
	if len(s.Classes) > 0 {
		out.printf("  failure classes: %s\n", counts(s.Classes))
	}
	out.printf("  server cards: %d, remote endpoints: %d\n", s.Cards, s.Remotes)
	if len(s.Probes) > 0 || len(s.ProbeSkips) > 0 {
		out.printf("  probes: %s; not probed: %s\n", counts(s.Probes), counts(s.ProbeSkips))
	}
	if len(s.Capped) > 0 {
		out.printf("  domains capped: %s (see 'cardcrawl domains')\n", counts(s.Capped))
	}
	if s.Interrupted {
		out.printf("  interrupted: %d domain(s) left pending; run the same command again to continue\n", s.Left)
	}
	if len(s.Invalid) > 0 {
		more := ""
		if n := s.InvalidCount - len(s.Invalid); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		out.printf("  not domains: %s%s\n", strings.Join(s.Invalid, ", "), more)
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

// Command barefetch is the floor a crawl is measured against: it makes the
// HTTPS GETs a crawl with --probe never makes (each domain's well-known
// AI Catalog, then each card URL the catalog lists) and nothing else — no
// validation, no storage, no parsing beyond finding the card URLs — with
// the same concurrency, per-request timeout, one request at a time per
// host, and the same --connect-to, --ca-cert and --dns-server flags. It
// prints one JSON line: requests, failures by class, wall time and the
// process's user and system CPU.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Exit codes, as cardcrawl's.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

const usage = `usage: barefetch [flags] [--domains FILE|-] [DOMAIN...]

Makes the HTTPS GETs a crawl with --probe never makes — each domain's
/.well-known/ai-catalog.json, then each card URL it lists (up to 1,000
entries read and 500 cards fetched per domain, as the crawl's defaults;
nested catalogs are not followed) — and nothing else, then prints one JSON
line: requests, ok, failures by class, wall time, user and system CPU, peak
RSS. It is the floor a crawl's wall time and CPU are compared with, on the
same simulated web, at the same concurrency.

--client fetch (the default) uses cardcrawl's own HTTP client, with all its
rules; --client net is a plain net/http client with the same transport
settings, the cheapest honest floor. --client net refuses to run unless a
--connect-to rule sends every host and port to an address you name, so it
can only reach a simulated web, never the open one.

flags:
`

type options struct {
	client      string
	concurrency int
	timeout     time.Duration
	userAgent   string
	connectTo   []fetch.ConnectTo
	caCerts     []string
	dnsServer   string
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("barefetch", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	var (
		o                  options
		file               string
		connectTo, caCerts stringList
	)
	fs.StringVar(&file, "domains", "", "read domains from `FILE`, one per line ('-' for stdin; '#' comments allowed)")
	fs.StringVar(&o.client, "client", "fetch", "`fetch` (cardcrawl's client) or net (plain net/http; simulated webs only)")
	fs.IntVar(&o.concurrency, "concurrency", 32, "domains in flight (requests to one host are always one at a time)")
	fs.DurationVar(&o.timeout, "timeout", fetch.DefaultTimeout, "per-request timeout, body included")
	fs.StringVar(&o.userAgent, "user-agent", fetch.DefaultUserAgent, "User-Agent sent with every request")
	fs.Var(&connectTo, "connect-to", "connect to HOST2:PORT2 when a URL names HOST1:PORT1; the `rule` is HOST1:PORT1:HOST2:PORT2 (curl's meaning; repeatable)")
	fs.Var(&caCerts, "ca-cert", "PEM `file` of extra trusted root certificates (repeatable)")
	fs.StringVar(&o.dnsServer, "dns-server", "", "resolve names through this DNS server (`host:port`) only; with --connect-to, names are still looked up first")

	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "barefetch: "+format+"\n", a...)
		return exitUsage
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return exitOK
			}
			return usageErr("%v (see 'barefetch --help')", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	for _, s := range connectTo {
		ct, err := fetch.ParseConnectTo(s)
		if err != nil {
			return usageErr("--connect-to: %v", err)
		}
		o.connectTo = append(o.connectTo, ct)
	}
	o.caCerts = caCerts
	if len(pos) == 0 && file == "" {
		return usageErr("no domains given (name some, or use --domains FILE)")
	}
	g, err := newGetter(o)
	if err != nil {
		return usageErr("%v", err)
	}

	var in io.Reader = strings.NewReader(strings.Join(pos, "\n"))
	if file != "" {
		r := stdin
		if file != "-" {
			f, err := os.Open(file)
			if err != nil {
				return usageErr("--domains: %v", err)
			}
			defer f.Close()
			r = f
		}
		in = io.MultiReader(in, strings.NewReader("\n"), r)
	}
	rep, err := fetchAll(ctx, g, o.concurrency, in)
	rep.Client, rep.Concurrency, rep.Timeout = o.client, o.concurrency, o.timeout.String()
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		fmt.Fprintf(stderr, "barefetch: %v\n", jerr)
		return exitFailed
	}
	fmt.Fprintln(stdout, string(b))
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "barefetch: %v\n", err)
		return exitFailed
	case rep.Interrupted:
		return exitInterrupted
	}
	return exitOK
}

// report is the one JSON line barefetch prints.
type report struct {
	Client      string `json:"client"`
	Concurrency int    `json:"concurrency"`
	Timeout     string `json:"timeout"`
	Domains     int    `json:"domains"`
	// Requests counts the GETs asked for: catalogs and cards. A URL
	// refused before any connection (blocked scheme, placeholder) counts
	// too, as a failure; the fetch client's one retry after a dropped
	// connection does not count again.
	Requests int            `json:"requests"`
	OK       int            `json:"ok"`
	Failures map[string]int `json:"failures"`
	// CardURLs is how many card URLs the catalogs listed (and were
	// fetched).
	CardURLs    int     `json:"cardUrls"`
	WallSeconds float64 `json:"wallSeconds"`
	UserSeconds float64 `json:"userSeconds"`
	SysSeconds  float64 `json:"sysSeconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	MaxRSSKiB   int64   `json:"maxRssKiB"`
	Interrupted bool    `json:"interrupted,omitempty"`
}

// tally is one worker's counts, merged at the end so workers never
// contend.
type tally struct {
	domains, requests, ok, cardURLs int
	failures                        map[string]int
}

func (t *tally) count(class string) {
	t.requests++
	if class == "" {
		t.ok++
		return
	}
	t.failures[class]++
}

// fetchAll reads domains from in as they come (a list of any length, or a
// pipe, is never read whole) and fetches them with concurrency workers.
func fetchAll(ctx context.Context, g getter, concurrency int, in io.Reader) (report, error) {
	start := time.Now()
	work := make(chan string)
	tallies := make([]*tally, concurrency)
	var wg sync.WaitGroup
	for i := range tallies {
		t := &tally{failures: map[string]int{}}
		tallies[i] = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				fetchDomain(ctx, g, d, t)
			}
		}()
	}
	sc := bufio.NewScanner(in)
	var readErr error
feed:
	for sc.Scan() {
		d := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(sc.Text()), "."))
		if d == "" || strings.HasPrefix(d, "#") {
			continue
		}
		select {
		case work <- d:
		case <-ctx.Done():
			break feed
		}
	}
	if err := sc.Err(); err != nil {
		readErr = fmt.Errorf("reading domains: %w", err)
	}
	close(work)
	wg.Wait()
	g.close()

	rep := report{Failures: map[string]int{}, Interrupted: ctx.Err() != nil}
	for _, t := range tallies {
		rep.Domains += t.domains
		rep.Requests += t.requests
		rep.OK += t.ok
		rep.CardURLs += t.cardURLs
		for k, v := range t.failures {
			rep.Failures[k] += v
		}
	}
	rep.WallSeconds = time.Since(start).Seconds()
	ru := resourceUsage()
	rep.UserSeconds, rep.SysSeconds, rep.MaxRSSKiB = ru.user.Seconds(), ru.sys.Seconds(), ru.maxRSSKiB
	rep.CPUSeconds = rep.UserSeconds + rep.SysSeconds
	return rep, readErr
}

// Accept headers, as the crawl sends them.
const (
	acceptCatalog = "application/ai-catalog+json, application/json;q=0.9"
	acceptCard    = "application/mcp-server-card+json, application/json;q=0.9"
)

// fetchDomain makes one domain's GETs, one after the other.
func fetchDomain(ctx context.Context, g getter, domain string, t *tally) {
	if ctx.Err() != nil {
		return
	}
	t.domains++
	body, final, class := g.get(ctx, "https://"+domain+"/.well-known/ai-catalog.json", acceptCatalog)
	t.count(class)
	if class != "" {
		return
	}
	for _, u := range cardURLs(body, final) {
		if ctx.Err() != nil {
			return
		}
		t.cardURLs++
		_, _, class := g.get(ctx, u, acceptCard)
		t.count(class)
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

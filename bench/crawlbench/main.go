// Command crawlbench measures a crawl the way BENCHMARKS.md reports it: it
// serves a generated web (internal/simweb, in this process), then runs the
// cardcrawl binary (`crawl --probe never`, a fresh database each time) and
// the bare fetcher (cmd/barefetch) against it one after the other (or, with
// --together, at the same time), at each concurrency asked for, and reports
// for each process its wall time, user and system CPU and peak RSS (the
// figures `/usr/bin/time -v` prints, read from the same wait4 resource
// usage by a small launcher process: see launcherArg) next to the web's
// network limit.
//
//	go run ./bench/crawlbench --domains 10000 --concurrency 64
//	go run ./bench/crawlbench --domains 5000 --latency 100ms --concurrency 32,64,256
//	go run ./bench/crawlbench --domains 10000 --latency 100ms --jitter 50ms \
//	    --hang-share 0.05 --unresolvable-share 0.1 --concurrency 64,256
//
// Without --cardcrawl and --barefetch it builds both from this checkout
// first. Exit codes: 0 done, 1 a run failed, 2 usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == launcherArg {
		os.Exit(launch(ctx, os.Args[2:]))
	}
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// launcherArg makes this program the launcher of one measured process.
//
// Linux reports, as a child's peak RSS, the larger of its own and that of
// the process it was forked from at the moment it called exec: Go starts
// children with vfork, which shares the parent's memory until exec, and
// exec keeps the old memory's high-water mark. This program holds the
// whole simulated web (a million domains' names, their connections), so a
// crawl started from it directly was reported with this program's peak,
// not its own (121 MB for a crawl whose own peak was 72 MB). The measured
// process is started from a fresh, small launcher instead, which reports
// what wait4 says of it on file descriptor 3.
const launcherArg = "__launch-measured"

func launch(ctx context.Context, args []string) int {
	if len(args) == 0 {
		return 2
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "crawlbench:", err)
		return 1
	}
	report := os.NewFile(3, "measure")
	if err := json.NewEncoder(report).Encode(usage(cmd.ProcessState, wall)); err != nil {
		fmt.Fprintln(os.Stderr, "crawlbench: report the measure:", err)
		return 1
	}
	return cmd.ProcessState.ExitCode()
}

// config is what one invocation measures.
type config struct {
	web         simweb.GenerateOptions
	concurrency []int
	repeat      int
	cardcrawl   string
	barefetch   string
	noBare      bool
	together    bool
	timeout     time.Duration
	dir         string
	crawlArgs   []string
}

// Measure is one process run: the figures /usr/bin/time -v reports.
type Measure struct {
	WallSeconds float64 `json:"wallSeconds"`
	UserSeconds float64 `json:"userSeconds"`
	SysSeconds  float64 `json:"sysSeconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	MaxRSSKiB   int64   `json:"maxRssKiB"`
}

// Result is one paired run at one concurrency.
type Result struct {
	Domains     int `json:"domains"`
	Concurrency int `json:"concurrency"`
	// Together says the crawl and the bare fetcher ran at the same time.
	Together     bool     `json:"together,omitempty"`
	LimitSeconds float64  `json:"limitSeconds,omitempty"` // the network limit at this concurrency
	Crawl        Measure  `json:"crawl"`
	Crawled      int      `json:"crawled"`
	Cards        int      `json:"cards"`
	Bare         *Measure `json:"bare,omitempty"`
	BareRequests int      `json:"bareRequests,omitempty"`
	// CPURatio and WallRatio compare the crawl with the bare fetcher.
	CPURatio  float64 `json:"cpuRatio,omitempty"`
	WallRatio float64 `json:"wallRatio,omitempty"`
	// LimitRatio is the crawl's wall time over the network limit.
	LimitRatio     float64 `json:"limitRatio,omitempty"`
	BareLimitRatio float64 `json:"bareLimitRatio,omitempty"`
	DomainsPerSec  float64 `json:"domainsPerSecond"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, asJSON, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "crawlbench: %v\n", err)
		return 2
	}
	results, err := measure(ctx, cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "crawlbench: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return 1
			}
		}
		return 0
	}
	printTable(stdout, results)
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, bool, error) {
	fs := flag.NewFlagSet("crawlbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg    config
		conc   string
		asJSON bool
		extra  string
	)
	fs.IntVar(&cfg.web.Domains, "domains", 10000, "generated domains")
	fs.Float64Var(&cfg.web.CatalogShare, "catalog-share", 0.3, "share of domains with a catalog")
	fs.IntVar(&cfg.web.CardsPerCatalog, "cards", 2, "card entries per catalog")
	fs.Float64Var(&cfg.web.MCPShare, "mcp-share", 0.5, "share of remotes backed by a real MCP server")
	fs.Int64Var(&cfg.web.Seed, "seed", 1, "seed of the generated web")
	fs.DurationVar(&cfg.web.Latency, "latency", 0, "delay of every response")
	fs.DurationVar(&cfg.web.Jitter, "jitter", 0, "± variation of --latency")
	fs.Float64Var(&cfg.web.HangShare, "hang-share", 0, "share of domains that never answer")
	fs.Float64Var(&cfg.web.UnresolvableShare, "unresolvable-share", 0, "share of domains that do not resolve")
	fs.Float64Var(&cfg.web.RefuseShare, "refuse-share", 0, "share of domains that refuse connections")
	fs.Float64Var(&cfg.web.SlowTLSShare, "slow-tls-share", 0, "share of domains with a slow TLS handshake")
	fs.DurationVar(&cfg.web.SlowTLSDelay, "slow-tls-delay", time.Second, "how slow a slow handshake is")
	fs.StringVar(&conc, "concurrency", "64", "comma-separated concurrencies to measure")
	fs.IntVar(&cfg.repeat, "repeat", 1, "paired runs per concurrency")
	fs.StringVar(&cfg.cardcrawl, "cardcrawl", "", "cardcrawl binary (default: build ./cmd/cardcrawl)")
	fs.StringVar(&cfg.barefetch, "barefetch", "", "barefetch binary (default: build ./cmd/barefetch)")
	fs.BoolVar(&cfg.noBare, "no-barefetch", false, "measure the crawl only")
	fs.BoolVar(&cfg.together, "together", false, "run the crawl and the bare fetcher at the same time (a steadier CPU ratio; wall times are each other's load)")
	fs.DurationVar(&cfg.timeout, "timeout", 15*time.Second, "per-request timeout of both clients")
	fs.StringVar(&cfg.dir, "dir", "", "work directory for the CA, domain list and databases (default: a temporary one, removed)")
	fs.StringVar(&extra, "crawl-args", "", "extra space-separated arguments for the crawl (e.g. --cpuprofile FILE)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per run instead of a table")
	if err := fs.Parse(args); err != nil {
		return cfg, false, err
	}
	if fs.NArg() > 0 {
		return cfg, false, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return cfg, false, fmt.Errorf("--concurrency: %q is not a positive number", s)
		}
		cfg.concurrency = append(cfg.concurrency, n)
	}
	if cfg.web.Domains < 1 || cfg.repeat < 1 {
		return cfg, false, errors.New("--domains and --repeat must be at least 1")
	}
	cfg.crawlArgs = strings.Fields(extra)
	return cfg, asJSON, nil
}

// measure serves the web and runs every paired measurement.
func measure(ctx context.Context, cfg config, log io.Writer) ([]Result, error) {
	dir := cfg.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "crawlbench")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if err := build(ctx, dir, &cfg, log); err != nil {
		return nil, err
	}
	w, err := simweb.New(simweb.Options{Logger: slog.New(slog.DiscardHandler), DiscardRequests: true})
	if err != nil {
		return nil, err
	}
	names, err := w.Generate(cfg.web)
	if err != nil {
		return nil, err
	}
	var limit *simweb.Limit
	if cfg.web.Latency > 0 || cfg.web.HangShare+cfg.web.SlowTLSShare > 0 {
		l, err := simweb.NetworkLimit(cfg.web, cfg.timeout)
		if err != nil {
			return nil, err
		}
		limit = &l
	}
	if cfg.web.UnresolvableShare > 0 {
		if _, err := w.ServeDNS("127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	ca, list := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "domains.txt")
	if err := w.WriteCA(ca); err != nil {
		return nil, err
	}
	if err := os.WriteFile(list, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	names = nil
	if err := w.Start(); err != nil {
		return nil, err
	}
	defer w.Close()
	netArgs := []string{"--connect-to", w.ConnectTo(), "--ca-cert", ca, "--timeout", cfg.timeout.String(), "--domains", list}
	if dns := w.DNSAddr(); dns != "" {
		netArgs = append(netArgs, "--dns-server", dns)
	}

	var out []Result
	for _, c := range cfg.concurrency {
		for i := range cfg.repeat {
			r := Result{Domains: cfg.web.Domains, Concurrency: c}
			if limit != nil {
				r.LimitSeconds = limit.At(c).Seconds()
			}
			db := filepath.Join(dir, fmt.Sprintf("crawl-%d-%d.db", c, i))
			crawlArgs := append([]string{"crawl", "--db", db, "--probe", "never", "--json",
				"--concurrency", strconv.Itoa(c)}, netArgs...)
			crawlArgs = append(crawlArgs, cfg.crawlArgs...)
			crawl := func() error {
				var sum struct {
					Crawled int `json:"crawled"`
					Cards   int `json:"cards"`
				}
				m, err := runMeasured(ctx, cfg.cardcrawl, crawlArgs, &sum)
				for _, suffix := range []string{"", "-wal", "-shm"} {
					os.Remove(db + suffix)
				}
				if err != nil {
					return fmt.Errorf("crawl: %w", err)
				}
				r.Crawl, r.Crawled, r.Cards = m, sum.Crawled, sum.Cards
				return nil
			}
			var bm Measure
			bare := func() error {
				var sum struct {
					Requests int `json:"requests"`
				}
				m, err := runMeasured(ctx, cfg.barefetch, append([]string{"--concurrency", strconv.Itoa(c)}, netArgs...), &sum)
				if err != nil {
					return fmt.Errorf("barefetch: %w", err)
				}
				bm, r.BareRequests = m, sum.Requests
				return nil
			}
			var err error
			fmt.Fprintf(log, "crawl: %d domains, concurrency %d (%s)\n", cfg.web.Domains, c, loadAverage())
			switch {
			case cfg.noBare:
				err = crawl()
			case cfg.together:
				fmt.Fprintf(log, "barefetch at the same time\n")
				r.Together = true
				done := make(chan error, 1)
				go func() { done <- bare() }()
				err = errors.Join(crawl(), <-done)
			default:
				if err = crawl(); err == nil {
					fmt.Fprintf(log, "barefetch: concurrency %d (%s)\n", c, loadAverage())
					err = bare()
				}
			}
			if err != nil {
				return out, err
			}
			r.DomainsPerSec = float64(r.Crawled) / r.Crawl.WallSeconds
			if limit != nil {
				r.LimitRatio = r.Crawl.WallSeconds / r.LimitSeconds
			}
			if !cfg.noBare {
				r.Bare = &bm
				r.CPURatio = r.Crawl.CPUSeconds / bm.CPUSeconds
				r.WallRatio = r.Crawl.WallSeconds / bm.WallSeconds
				if limit != nil {
					r.BareLimitRatio = bm.WallSeconds / r.LimitSeconds
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// build compiles the binaries not given, from the module this runs in.
func build(ctx context.Context, dir string, cfg *config, log io.Writer) error {
	for _, b := range []struct {
		bin *string
		pkg string
	}{{&cfg.cardcrawl, "./cmd/cardcrawl"}, {&cfg.barefetch, "./cmd/barefetch"}} {
		if *b.bin != "" || (b.pkg == "./cmd/barefetch" && cfg.noBare) {
			continue
		}
		out := filepath.Join(dir, filepath.Base(b.pkg))
		fmt.Fprintf(log, "building %s\n", b.pkg)
		cmd := exec.CommandContext(ctx, goTool(), "build", "-o", out, "github.com/cardcrawl/cardcrawl/"+strings.TrimPrefix(b.pkg, "./"))
		cmd.Stderr = log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", b.pkg, err)
		}
		*b.bin = out
	}
	return nil
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// runMeasured runs one process, decodes its JSON output into v, and reads
// its resource usage as wait4 reports it.
func runMeasured(ctx context.Context, bin string, args []string, v any) (Measure, error) {
	self, err := os.Executable()
	if err != nil {
		return Measure{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Measure{}, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{launcherArg, bin}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		w.Close()
		return Measure{}, err
	}
	w.Close()
	report, readErr := io.ReadAll(r)
	err = cmd.Wait()
	if err != nil {
		return Measure{}, fmt.Errorf("%s: %w: %s", filepath.Base(bin), err, lastLine(stderr.String()))
	}
	var m Measure
	if readErr != nil || json.Unmarshal(report, &m) != nil {
		return Measure{}, fmt.Errorf("%s: no measure from the launcher: %s", filepath.Base(bin), lastLine(stderr.String()))
	}
	if err := json.Unmarshal([]byte(lastLine(stdout.String())), v); err != nil {
		// The crawl prints indented JSON; take the whole output.
		if err := json.Unmarshal([]byte(stdout.String()), v); err != nil {
			return Measure{}, fmt.Errorf("%s output: %w", filepath.Base(bin), err)
		}
	}
	return m, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// loadAverage is the 1-minute load, for the log next to each figure.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load unknown"
	}
	return "load " + strings.Join(f[:3], " ")
}

func printTable(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "domains\tconc\tcrawl wall s\tcrawl cpu s\tcrawl RSS MB\tdomains/s\tbare wall s\tbare cpu s\tcpu ×\twall ×\tlimit s\tcrawl/limit\tbare/limit\t")
	for _, r := range rs {
		bw, bc := "-", "-"
		if r.Bare != nil {
			bw, bc = f1(r.Bare.WallSeconds), f1(r.Bare.CPUSeconds)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Domains, r.Concurrency,
			f1(r.Crawl.WallSeconds), f1(r.Crawl.CPUSeconds), f1(float64(r.Crawl.MaxRSSKiB)/1024), r.DomainsPerSec,
			bw, bc, f2(r.CPURatio), f2(r.WallRatio), f1(r.LimitSeconds), f2(r.LimitRatio), f2(r.BareLimitRatio))
	}
	tw.Flush()
}

func f1(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func f2(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

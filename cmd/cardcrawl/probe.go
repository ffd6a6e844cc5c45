package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cardcrawl/cardcrawl/internal/jsonstream"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "probe", summary: "probe MCP endpoints once (a handshake, never a tool call)", run: runProbe})
	register(&command{name: "probes", summary: "the latest probe outcome per endpoint", run: runProbes})
}

func runProbe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probe", "[flags] URL... | --registry", joinLines(
		"Probe each URL as an MCP endpoint: initialize, list tools (never call one), close the session;",
		"fall back to server/discover or legacy SSE where the server asks for it; on 401/403 read the",
		"OAuth metadata it points to. No credentials or cookies are ever sent. The URL must be https and",
		"public; --connect-to and --ca-cert work as everywhere else.",
		"With --registry, probe the remotes of the latest, active Registry entries in --db instead, under",
		"the crawl's rules (warranted, not fresh, one probe per endpoint) and record every decision."))
	var (
		nf        netFlags
		lf        logFlags
		db        dbFlags
		asJSON    bool
		save      bool
		transport string
		reg       bool
		maxAge    time.Duration
	)
	nf.register(fs)
	lf.register(fs)
	db.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON (one object per URL, in an array)")
	fs.BoolVar(&save, "save", false, "also record the results in the database (--db)")
	fs.StringVar(&transport, "transport", "", "declared transport: streamable-http (default) or sse")
	fs.BoolVar(&reg, "registry", false, "probe the remotes of latest, active Registry entries (see 'registry sync') and record the results")
	fs.DurationVar(&maxAge, "probe-max-age", 24*time.Hour, "with --registry: an endpoint probed more recently than this is not probed again unless its declaration changed")
	urls, err := parse(fs, args)
	if err != nil {
		return err
	}
	if reg {
		if len(urls) > 0 || transport != "" {
			return usagef("probe --registry takes no URL and no --transport")
		}
		return runProbeRegistry(ctx, e, probeRegistrySetup{net: nf, log: lf, db: db, asJSON: asJSON, maxAge: maxAge})
	}
	if len(urls) == 0 {
		return usagef("probe: name at least one URL")
	}
	if transport != "" && transport != servercard.TransportStreamableHTTP && transport != servercard.TransportSSE {
		return usagef("--transport must be streamable-http or sse, not %q", transport)
	}
	log := lf.logger(e)
	client, err := nf.client(log)
	if err != nil {
		return err
	}
	p := probe.New(probe.Options{Fetch: client, ClientVersion: version, Logger: log})
	var results []probe.Result
	for _, u := range urls {
		if ctx.Err() != nil {
			break
		}
		r := p.Probe(ctx, probe.Target{URL: u, Transport: transport})
		if r.Outcome == probe.OutcomeCanceled {
			break // Ctrl-C: an unfinished probe is not a result
		}
		results = append(results, r)
	}
	if save {
		st, err := db.open(ctx, log)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range results {
			norm, err := servercard.NormalizeURL(r.URL)
			if err != nil {
				norm = r.URL
			}
			if err := st.AddProbe(ctx, 0, discover.ProbeRow(norm, "", "", r, nil)); err != nil {
				return err
			}
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, nonNilSlice(results)); err != nil {
			return err
		}
	} else {
		out := newTextOut(e.stdout)
		for _, r := range results {
			printProbe(out, r)
		}
		if err := out.flush(); err != nil {
			return err
		}
	}
	if len(results) < len(urls) {
		fmt.Fprintf(e.stderr, "interrupted: %d of %d URL(s) not probed\n", len(urls)-len(results), len(urls))
		return errInterrupted
	}
	return nil
}

type probeRegistrySetup struct {
	net    netFlags
	log    logFlags
	db     dbFlags
	asJSON bool
	maxAge time.Duration
}

func runProbeRegistry(ctx context.Context, e *env, s probeRegistrySetup) (err error) {
	log := s.log.logger(e)
	client, err := s.net.client(log)
	if err != nil {
		return err
	}
	st, err := s.db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	lock, err := lockCrawl(ctx, st, store.CrawlAlone, "probe --registry")
	if err != nil {
		return err
	}
	defer lock.Release()
	ctx, lost := guardCrawl(ctx, lock, lockCheckEvery, log)
	defer reportLost(&err, lost)
	sum, err := discover.ProbeRegistry(ctx, discover.Options{
		Fetch: client, Store: st, Logger: log, Concurrency: s.net.concurrency,
		Probe: discover.ProbeOptions{Mode: discover.ProbeAuto, MaxAge: s.maxAge,
			Prober: probe.New(probe.Options{Fetch: client, ClientVersion: version, Logger: log})},
	})
	if err != nil {
		return err
	}
	if !sum.Interrupted {
		if err := recomputeCategories(ctx, st, log); err != nil {
			return err
		}
	}
	if s.asJSON {
		err = writeJSON(e.stdout, sum)
	} else {
		out := newTextOut(e.stdout)
		out.printf("run %d: Registry remotes\n  probes: %s; not probed: %s\n", sum.RunID, counts(sum.Probes), counts(sum.ProbeSkips))
		err = out.flush()
	}
	if err == nil && sum.Interrupted {
		return errInterrupted
	}
	return err
}

func printProbe(out *textOut, r probe.Result) {
	out.printf("%s\n  outcome: %s", r.URL, r.Outcome)
	if r.Partial {
		out.printf(" (partial)")
	}
	out.printf("\n  reason: %s\n", r.Reason)
	if r.ServerName != "" {
		out.printf("  server: %s %s\n", r.ServerName, r.ServerVersion)
	}
	if r.Transport != "" {
		out.printf("  transport: %s, protocol %s (%s)\n", r.Transport, dash(r.ProtocolVersion), dash(r.Era))
	}
	if r.ToolCount != nil {
		out.printf("  tools: %d %v\n", *r.ToolCount, r.ToolNames)
	}
	if r.Auth != nil {
		b, _ := json.Marshal(r.Auth)
		out.printf("  auth: %s\n", b)
	}
	out.printf("  round trips: %d, %d ms\n", r.RoundTrips, r.LatencyMs)
}

// outcomeSummary is one row of probes --summary.
type outcomeSummary struct {
	Outcome string `json:"outcome"`
	Words   string `json:"words"`
	Count   int    `json:"count"`
}

func runProbes(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probes", "[flags]", joinLines(
		"List the latest probe of every endpoint: outcome, transport, protocol, server and tools.",
		"--summary prints the breakdown instead: how many endpoints ended on each outcome, in plain words."))
	var rf readFlags
	var summary bool
	var source string
	rf.register(fs, "print JSON (an array of the stored probe records; with --summary, the counts)")
	fs.BoolVar(&summary, "summary", false, "count endpoints per outcome of their latest probe (the failure breakdown)")
	fs.StringVar(&source, "source", store.SourceAll, "endpoints declared now by a card, by a Registry entry, or all probed ones: card, registry or all")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	switch source {
	case store.SourceAll, store.SourceCard, store.SourceRegistry:
	default:
		return usagef("--source must be card, registry or all, not %q", source)
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	if summary {
		return printOutcomeSummary(ctx, e, st, source, rf.asJSON)
	}
	var arr *jsonstream.Array
	var out *textOut
	if rf.asJSON {
		arr = newJSONArray(e.stdout)
	} else {
		out = newTextOut(e.stdout)
		out.table("ENDPOINT", "OUTCOME", "TRANSPORT", "PROTOCOL", "SERVER", "TOOLS", "PROBED AT")
	}
	err = st.ProbesFrom(ctx, source, func(r store.ProbeRow) error {
		if arr != nil {
			return arr.Add(json.RawMessage(r.Result))
		}
		outcome := r.Outcome
		if r.Partial {
			outcome += " (partial)"
		}
		tools := "-"
		if r.ToolCount != nil {
			tools = strconv.Itoa(*r.ToolCount)
		}
		out.row(r.URL, outcome, dash(r.Transport), dash(r.Protocol),
			dash(strings.TrimSpace(r.ServerName+" "+r.ServerVersion)), tools, shortTime(r.ProbedAt))
		return nil
	})
	if err != nil {
		return err
	}
	if arr != nil {
		return closeJSONArray(arr, e.stdout)
	}
	return out.flush()
}

// printOutcomeSummary prints the failure breakdown, most frequent first,
// each outcome in the directory's words (internal/failure's table).
func printOutcomeSummary(ctx context.Context, e *env, st *store.DB, source string, asJSON bool) error {
	counts, err := st.ProbeOutcomeCounts(ctx, source)
	if err != nil {
		return err
	}
	rows := make([]outcomeSummary, 0, len(counts))
	total := 0
	for _, c := range counts {
		words := failure.Outcome(c.Outcome).Words()
		if words == "" {
			words = c.Outcome // a stored outcome this version does not know
		}
		rows = append(rows, outcomeSummary{Outcome: c.Outcome, Words: words, Count: c.Count})
		total += c.Count
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Count > rows[j].Count })
	if asJSON {
		return writeJSON(e.stdout, struct {
			Source   string           `json:"source"`
			Total    int              `json:"total"`
			Outcomes []outcomeSummary `json:"outcomes"`
		}{source, total, rows})
	}
	out := newTextOut(e.stdout)
	out.table("OUTCOME", "ENDPOINTS", "CLASS")
	for _, r := range rows {
		out.row(r.Words, strconv.Itoa(r.Count), r.Outcome)
	}
	out.row("total", strconv.Itoa(total), "")
	return out.flush()
}

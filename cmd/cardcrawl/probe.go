package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/discover/probe"
	"github.com/cardcrawl/cardcrawl/servercard"
)

func init() {
	register(&command{name: "probe", summary: "probe MCP endpoints once (a handshake, never a tool call)", run: runProbe})
	register(&command{name: "probes", summary: "the latest probe outcome per endpoint", run: runProbes})
}

func runProbe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probe", "[flags] URL...", joinLines(
		"Probe each URL as an MCP endpoint: initialize, list tools (never call one), close the session;",
		"fall back to server/discover or legacy SSE where the server asks for it; on 401/403 read the",
		"OAuth metadata it points to. No credentials or cookies are ever sent. The URL must be https and",
		"public; --connect-to and --ca-cert work as everywhere else."))
	var (
		nf        netFlags
		lf        logFlags
		db        dbFlags
		asJSON    bool
		save      bool
		transport string
	)
	nf.register(fs)
	lf.register(fs)
	db.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON (one object per URL, in an array)")
	fs.BoolVar(&save, "save", false, "also record the results in the database (--db)")
	fs.StringVar(&transport, "transport", "", "declared transport: streamable-http (default) or sse")
	urls, err := parse(fs, args)
	if err != nil {
		return err
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

func runProbes(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "probes", "[flags]", "List the latest probe of every endpoint: outcome, transport, protocol, server and tools.")
	var rf readFlags
	rf.register(fs, "print JSON (an array of the stored probe records)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := st.Probes(ctx)
	if err != nil {
		return err
	}
	if rf.asJSON {
		out := make([]json.RawMessage, 0, len(rows))
		for _, r := range rows {
			out = append(out, json.RawMessage(r.Result))
		}
		return writeJSON(e.stdout, out)
	}
	out := newTextOut(e.stdout)
	out.table("ENDPOINT", "OUTCOME", "TRANSPORT", "PROTOCOL", "SERVER", "TOOLS", "PROBED AT")
	for _, r := range rows {
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
	}
	return out.flush()
}

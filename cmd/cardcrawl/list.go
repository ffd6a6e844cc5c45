package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/cardcrawl/cardcrawl/internal/jsonstream"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/internal/termsafe"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "domains", summary: "each domain's last outcome, and why", run: runDomains})
	register(&command{name: "servers", summary: "the servers found (one row per endpoint)", run: runServers})
	register(&command{name: "export", summary: "write the discovered-servers feed (" + strings.Join(feed.FormatNames(), ", ") + ")", run: runExport})
}

func runDomains(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "add" {
		return runDomainsAdd(ctx, e, args[1:])
	}
	fs := newFlags(e, "domains", "[flags]   (or: domains add --domains FILE, see domains add --help)", "List every domain the database knows, with its last outcome: a catalog, none,\nor the failure class and reason, and the per-domain limits its last crawl hit.")
	var rf readFlags
	rf.register(fs, "print JSON (an array of objects)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	// Rows stream from the database to the output: a list of a million
	// domains is never held whole.
	if rf.asJSON {
		return streamJSON(e.stdout, func(add func(store.DomainRow) error) error { return st.EachDomain(ctx, add) })
	}
	out := newTextOut(e.stdout)
	out.table("DOMAIN", "OUTCOME", "CLASS", "CARDS", "REMOTES", "CAPPED", "CATALOG FINDINGS", "REASON")
	err = st.EachDomain(ctx, func(d store.DomainRow) error {
		outcome := d.Outcome
		if d.State == "pending" {
			outcome = "pending"
		}
		out.row(d.Domain, outcome, dash(d.Class), d.Cards, d.Remotes, dash(strings.Join(d.Capped, ",")),
			dash(truncate(strings.Join(d.CatalogFindings, ","), 40)), truncate(d.Reason, 80))
		return nil
	})
	if err != nil {
		return err
	}
	return out.flush()
}

// newJSONArray starts a top-level JSON array on stdout, terminal-safe as
// writeJSON is; closeJSONArray ends it with writeJSON's newline.
func newJSONArray(stdout io.Writer) *jsonstream.Array {
	return jsonstream.New(termsafe.NewJSONWriter(stdout), "")
}

// streamJSON writes what each yields as one JSON array on stdout, value by
// value as the rows come (a list of any length in constant memory).
func streamJSON[T any](stdout io.Writer, each func(add func(T) error) error) error {
	arr := newJSONArray(stdout)
	if err := each(func(v T) error { return arr.Add(v) }); err != nil {
		return err
	}
	return closeJSONArray(arr, stdout)
}

func closeJSONArray(a *jsonstream.Array, stdout io.Writer) error {
	if err := a.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, "\n")
	return err
}

func runServers(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "servers", "[flags]", "List the servers found: one row per remote endpoint (merged on its normalised URL across\ncards and domains), then cards that declare no remote.")
	var rf readFlags
	rf.register(fs, "print JSON (an array of feed records, as in the README)")
	var ff filterFlags
	ff.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	filter, err := ff.filter()
	if err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	// Records stream from the database to the output, a page at a time.
	q := store.FeedQuery{FeedFilter: filter}
	if rf.asJSON {
		return streamJSON(e.stdout, func(add func(feed.Record) error) error {
			return st.EachFeedServer(ctx, q, func(s *store.FeedServer) error { return add(feed.NewRecord(s)) })
		})
	}
	out := newTextOut(e.stdout)
	out.table("ENDPOINT", "TRANSPORT", "NAME", "VERSION", "GRADE", "CATEGORY", "SOURCES", "LISTED BY", "PROBE")
	err = st.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
		r := feed.NewRecord(s)
		probe := "-"
		if d := r.ProbeDecision; d != nil && d.Decision == "skip" && r.Probe == nil {
			probe = "skipped: " + d.Reason
		}
		if r.Probe != nil {
			probe = r.Probe.Outcome
			if r.Probe.Partial {
				probe += " (partial)"
			}
			if r.Probe.ToolCount != nil {
				probe += " (" + strconv.Itoa(*r.Probe.ToolCount) + " tools)"
			}
		}
		endpoint := r.Endpoint
		if endpoint == "" {
			endpoint = "(no remote)"
		}
		out.row(endpoint, dash(r.Transport), dash(r.Name), dash(truncate(r.Version, 24)),
			dash(r.Grade), categoryCell(r), strings.Join(r.Sources, "+"), dash(strings.Join(r.Domains(), " ")), probe)
		return nil
	})
	if err != nil {
		return err
	}
	return out.flush()
}

func runExport(ctx context.Context, e *env, args []string) error {
	var help strings.Builder
	help.WriteString("Write the discovered-servers feed to stdout (or --out FILE), streamed from the database.\nFormats:\n")
	for _, f := range feed.Formats {
		fmt.Fprintf(&help, "  %-11s %s\n", f.Name, f.Help)
	}
	help.WriteString("--since T (RFC 3339) writes the delta feed: records whose meaning changed after T, with\n" +
		"updatedAt, and tombstones of records that went away (jsonl only; see README, The feed).")
	names := strings.Join(feed.FormatNames(), "|")
	fs := newFlags(e, "export", "--format "+names+" [--since T] [flags]", help.String())
	var rf readFlags
	var format, out, since, publisher string
	rf.register(fs, "")
	fs.StringVar(&publisher, "publisher-domain", "", publisherDomainHelp)
	fs.StringVar(&format, "format", "jsonl", strings.Join(feed.FormatNames(), ", "))
	fs.StringVar(&out, "out", "", "write to `FILE` instead of stdout")
	fs.StringVar(&since, "since", "", "only what changed after this RFC 3339 `time`, tombstones included (jsonl)")
	var ff filterFlags
	ff.register(fs)
	var pf profileFlags
	pf.register(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	f, ok := feed.FormatNamed(format)
	if !ok {
		return usagef("--format must be one of %s, not %q", strings.Join(feed.FormatNames(), ", "), format)
	}
	var opts feed.WriteOptions
	var err error
	if opts.Filter, err = ff.filter(); err != nil {
		return err
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			return usagef("--since must be an RFC 3339 time such as 2026-11-01T00:00:00Z, not %q", since)
		}
		if !f.Delta {
			return usagef("--since needs a format with a delta form (jsonl), not %s", format)
		}
		opts.Since = store.FormatTime(t)
	}
	if err := checkPublisherDomain(publisher); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	streamingGC(exportMemoryLimit)
	stopProfile, err := pf.start()
	if err != nil {
		return err
	}
	defer stopProfile()
	opts.Catalog = feed.CatalogOptions{PublisherDomain: publisher}
	skipped := 0
	opts.Skipped = &skipped
	// Said once the catalog is written: how many entries it left out.
	defer func() {
		if skipped > 0 {
			fmt.Fprintf(e.stderr, "%d catalog entries without a publisher identifier (cards, or servers only the Registry declares) left out; --publisher-domain mints identifiers for them\n", skipped)
		}
	}()
	if out == "" {
		// Buffered: rows arrive one at a time and stdout is unbuffered.
		bw := bufio.NewWriterSize(e.stdout, 64<<10)
		if err := f.Write(ctx, bw, st, opts); err != nil {
			return err
		}
		return bw.Flush()
	}
	file, err := os.Create(out)
	if err != nil {
		return usagef("--out: %v", err)
	}
	bw := bufio.NewWriterSize(file, 64<<10)
	err = f.Write(ctx, bw, st, opts)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		file.Close()
		return err
	}
	// A full disk shows up at Close; the export is not done until then.
	if err := file.Close(); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// exportMemoryLimit bounds the Go heap of an export (see streamingGC): the
// process stays under 60 MB with SQLite's own memory, that of the two
// connections a whole walk reads on (52 MB peak at 100,000 servers; 60 MB
// with 32 MB here).
const exportMemoryLimit = 24 << 20

const publisherDomainHelp = "your own `domain`, named as the AI Catalog's host; identifiers for cards whose publisher gave none are minted under it (urn:air:DOMAIN:mcp-server-card:HASH)"

// checkPublisherDomain refuses a --publisher-domain that is no host name.
func checkPublisherDomain(d string) error {
	if d == "" {
		return nil
	}
	norm, err := discover.NormalizeDomain(d)
	if err != nil || norm != strings.ToLower(d) {
		return usagef("--publisher-domain must be a domain name such as directory.example, not %q", d)
	}
	return nil
}

// filterFlags are --grade and --outcome, shared by the commands that read
// the feed.
type filterFlags struct{ grade, outcome, source, category, listingFinding string }

func (f *filterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.grade, "grade", "", "only servers of this `grade` ("+feed.Grades()+")")
	fs.StringVar(&f.outcome, "outcome", "", "only servers whose latest probe had this `outcome` (see README, The MCP probe; '"+feed.NotProbed+"' for never probed)")
	fs.StringVar(&f.category, "category", "", "only servers of this category `ID` (travel, food_delivery, real_estate, health, maps_transport, finance, shopping, media; 'none' for those without)")
	fs.StringVar(&f.listingFinding, feed.ListingFindingParam, "", "only servers a listing of which carries this finding `code`: what its catalog found of the entry or of its own signature (signature_verified, entry_digest_mismatch, …; the feed's listedBy[].findings)")
	fs.StringVar(&f.source, "source", store.FeedSourceCard, "which servers: `card` (a listed card declares them), registry (a latest, undeleted Registry entry declares them), all (see README, The feed)")
}

// filter checks the flags' values: a bad one is a usage error.
func (f *filterFlags) filter() (store.FeedFilter, error) {
	filter, err := feed.ParseFilter(feed.FilterParams{Grade: f.grade, Outcome: f.outcome, Source: f.source, Category: f.category,
		ListingFinding: f.listingFinding})
	if err != nil {
		return filter, usagef("--%v", err)
	}
	return filter, nil
}

// categoryCell shows a category and where it came from: "travel (tools)".
func categoryCell(r feed.Record) string {
	if r.Category == "" {
		return "-"
	}
	return r.Category + " (" + r.CategorySource + ")"
}

// writeJSON prints --json output. The values are exact; characters a
// terminal would act on are written as \u escapes (see termsafe), so printing
// it to a terminal is as safe as printing a table.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(termsafe.NewJSONWriter(w))
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

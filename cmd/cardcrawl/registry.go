package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "registry", summary: "mirror the MCP Registry (registry sync) and list what is stored (registry entries)", run: runRegistry})
}

// registrySyncReport is the --json output of `registry sync`.
type registrySyncReport struct {
	Sync  registry.SyncResult `json:"sync"`
	Error string              `json:"error,omitempty"`
	// Revalidated counts stored entries an older validator had judged,
	// re-validated after the sync without fetching them.
	Revalidated int              `json:"revalidated,omitempty"`
	Reconcile   *reconcileCounts `json:"reconcile,omitempty"`
}

type reconcileCounts struct {
	Pairs        int `json:"pairs"`
	CardOnly     int `json:"cardOnly"`
	RegistryOnly int `json:"registryOnly"`
}

func runRegistry(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(e.stdout, joinLines(
			"Usage: cardcrawl registry <sync|entries> [flags]",
			"",
			"Subcommands:",
			"  sync      mirror every server version of the MCP Registry (or a subregistry) into the database",
			"  entries   list stored Registry entries and their findings (what the Registry would reject today)",
			"",
			"Run 'cardcrawl registry <subcommand> --help' for its flags.",
			""))
		if len(args) == 0 {
			return usagef("registry: name a subcommand (sync, entries)")
		}
		return errHelp
	}
	switch args[0] {
	case "sync":
		return runRegistrySync(ctx, e, args[1:])
	case "entries":
		return runRegistryEntries(ctx, e, args[1:])
	}
	return usagef("registry: unknown subcommand %q (want sync or entries)", args[0])
}

func runRegistrySync(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "registry sync", "[--url U] [--from-file F] [--full] [flags]", joinLines(
		"Mirror the MCP Registry's v0.1 API into the database: every version with its status and",
		"timestamps, and the raw server.json validated against the dated schema it names. The first",
		"sync sweeps everything; later ones ask only for what changed since the last sweep",
		"(updated_since), and an interrupted sync resumes where it stopped. At most 2 requests/s,",
		"Retry-After honoured. --from-file imports an offline dump instead (a v0.1 list response or a",
		"JSON array of server.json; '-' reads stdin) under the registry named by --url.",
		"Afterwards cards and Registry entries are reconciled again (see 'cardcrawl diff')."))
	var (
		db       dbFlags
		lf       logFlags
		nf       netFlags
		baseURL  string
		fromFile string
		full     bool
		asJSON   bool
	)
	db.register(fs)
	lf.register(fs)
	nf.register(fs)
	fs.StringVar(&baseURL, "url", registry.DefaultBaseURL, "registry base `URL`, https (a subregistry implementing the v0.1 API works too)")
	fs.StringVar(&fromFile, "from-file", "", "import an offline dump `FILE` instead of syncing over the network")
	fs.BoolVar(&full, "full", false, "sweep everything even when an incremental sync is possible")
	fs.BoolVar(&asJSON, "json", false, "print the outcome as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("registry sync: unexpected argument %q", pos[0])
	}
	log := lf.logger(e)
	var body []byte
	if fromFile != "" {
		if body, err = readInput(e, fromFile); err != nil {
			return usagef("--from-file: %v", err)
		}
	}
	// Usage problems (bad flags, a dump that is not JSON) are found before
	// the database is created or touched.
	val, err := registry.NewValidator()
	if err != nil {
		return err
	}
	var client *registry.Client
	if fromFile == "" {
		fc, err := nf.client(log)
		if err != nil {
			return err
		}
		client, err = registry.NewClient(registry.ClientOptions{BaseURL: baseURL, HTTPClient: fc.HTTPClient(), Logger: log})
		if err != nil {
			return usagef("--url: %v", err)
		}
	} else if _, _, perr := registry.ParseDump(body); perr != nil {
		return usagef("--from-file %s: %v", fromFile, perr)
	}
	st, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()

	po := pipeline.Options{Logger: log}
	var out pipeline.Synced
	var recErr error
	if client != nil {
		so := registry.SyncOptions{Client: client, Validator: val, Full: full, Logger: log}
		if e.stderrTTY {
			so.Progress = func(pages, entries int) {
				fmt.Fprintf(e.stderr, "\r\033[K%s: %d page(s), %d entries stored", baseURL, pages, entries)
			}
		}
		out, recErr = pipeline.Sync(ctx, st, so, po)
		if e.stderrTTY && out.Result.Pages > 0 {
			fmt.Fprintln(e.stderr)
		}
	} else {
		out, recErr = pipeline.Import(ctx, st, registry.ImportOptions{Source: dumpSource(fs, baseURL, fromFile), Validator: val, Logger: log}, body, po)
	}
	res, syncErr := out.Result, out.SyncErr
	report := registrySyncReport{Sync: res, Revalidated: out.Revalidated, Reconcile: reconcileCountsOf(out.Recomputed)}
	if syncErr != nil {
		report.Error = syncErr.Error()
	}
	// Whatever was stored is reconciled, even after a partial sync.
	if recErr != nil {
		return errors.Join(syncErr, recErr)
	}
	if asJSON {
		if err := writeJSON(e.stdout, report); err != nil {
			return err
		}
	} else if err := printSyncReport(e.stdout, report); err != nil {
		return err
	}
	if syncErr != nil && ctx.Err() != nil && errors.Is(syncErr, ctx.Err()) {
		fmt.Fprintf(e.stderr, "cardcrawl: interrupted after %d pages (%d entries stored); run the same command again to resume\n",
			res.Pages, res.Entries)
		return errInterrupted
	}
	if syncErr != nil && !asJSON {
		return reported{syncErr} // the report above already said why it stopped
	}
	return syncErr
}

// reconcileCountsOf reports what the reconciliation after a sync found;
// nil when it did not run.
func reconcileCountsOf(r *pipeline.Recomputed) *reconcileCounts {
	if r == nil {
		return nil
	}
	return &reconcileCounts{Pairs: r.Reconcile.Pairs, CardOnly: r.Reconcile.CardOnly, RegistryOnly: r.Reconcile.RegistryOnly}
}

// recomputeCategories brings the Registry remotes and every server's
// category up to date after a saved probe.
func recomputeCategories(ctx context.Context, st *store.DB, log *slog.Logger) error {
	_, err := pipeline.Categories(ctx, st, pipeline.Options{Logger: log})
	return err
}

func readInput(e *env, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(path)
}

func printSyncReport(w io.Writer, r registrySyncReport) error {
	out := newTextOut(w)
	s := r.Sync
	state := "complete"
	if !s.Complete {
		state = "incomplete"
	}
	how := fmt.Sprintf("%s sweep, %d pages", s.Kind, s.Pages)
	switch {
	case s.Kind == "file":
		how = "dump import, 1 file"
	case s.Kind == "delta":
		how = fmt.Sprintf("incremental sync since %s, %d pages", s.Since, s.Pages)
	}
	if s.Resumed {
		how += " (resumed)"
	}
	out.printf("%s: %s, %d entries stored (%d with errors the Registry would reject), %s\n",
		s.Source, how, s.Entries, s.Invalid, state)
	if s.Watermark != "" {
		out.printf("next incremental sync from %s\n", s.Watermark)
	}
	for _, f := range s.Findings {
		out.printf("  skipped: %s %s\n", f.Code, truncate(f.Message, 120))
	}
	if s.FindingsMore > 0 {
		out.printf("  skipped: %d more (not kept)\n", s.FindingsMore)
	}
	if len(s.InvalidNames) > 0 {
		more := ""
		if n := s.Invalid - len(s.InvalidNames); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		out.printf("with errors: %s%s (see 'cardcrawl registry entries --invalid')\n", strings.Join(s.InvalidNames, ", "), more)
	}
	if r.Error != "" {
		out.printf("stopped: %s\n", r.Error)
	}
	if r.Revalidated > 0 {
		out.printf("re-validated %d stored entries with the current rules\n", r.Revalidated)
	}
	if c := r.Reconcile; c != nil {
		out.printf("reconciled: %d matched pairs, %d card-only, %d registry-only (see 'cardcrawl diff')\n",
			c.Pairs, c.CardOnly, c.RegistryOnly)
	}
	return out.flush()
}

// registryEntryRecord is one --json row of 'registry entries'.
type registryEntryRecord struct {
	Source         string            `json:"source"`
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	Status         string            `json:"status"`
	IsLatest       bool              `json:"isLatest"`       // elected here across stored versions
	ReportedLatest bool              `json:"reportedLatest"` // as the Registry last said
	Schema         string            `json:"schema,omitempty"`
	SchemaVersion  string            `json:"schemaVersion,omitempty"`
	Invalid        bool              `json:"invalid"` // at least one error finding
	Findings       []finding.Finding `json:"findings"`
}

// maxNamed is how many servers a summary line under a listing names
// before it counts the rest.
const maxNamed = 20

func runRegistryEntries(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "registry entries", "[--invalid] [--name N] [--json] [flags]", joinLines(
		"List the Registry entries stored by 'registry sync': every version with its status, whether it",
		"is the latest, the dated $schema it names, and the codes of its validation findings. An entry",
		"with an error finding is one the Registry would reject if it were published today (for",
		"example a description over 100 characters, or a missing or unknown $schema); --invalid lists",
		"only those. --json prints the full findings (severity, code, path, message)."))
	var (
		rf      readFlags
		invalid bool
		name    string
	)
	rf.register(fs, "print JSON: an array of entries with their full findings")
	fs.BoolVar(&invalid, "invalid", false, "only entries with at least one error finding")
	fs.StringVar(&name, "name", "", "only the versions of the server `NAME` (e.g. io.github.owner/server)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	filter := store.RegistryFilter{Name: name}
	each := func(fn func(registryEntryRecord) error) error {
		return st.EachRegistryEntry(ctx, filter, func(en store.RegistryEntry) error {
			r := registryEntryRecord{Source: en.Source, Name: en.Name, Version: en.Version, Status: en.Status, IsLatest: en.IsLatest,
				ReportedLatest: en.ReportedLatest, Schema: en.Schema, SchemaVersion: registry.SchemaVersionOf(en.Schema),
				Findings: en.Findings, Invalid: en.Findings.HasError()}
			if r.Findings == nil {
				r.Findings = finding.List{}
			}
			if invalid && !r.Invalid {
				return nil
			}
			return fn(r)
		})
	}
	if rf.asJSON {
		return streamJSON(e.stdout, each)
	}
	// The source column only when there is more than one registry to tell
	// apart (the official one, a subregistry, an imported dump).
	sources, err := st.CountRegistrySources(ctx, filter)
	if err != nil {
		return err
	}
	many := sources > 1
	header := []string{"NAME", "VERSION", "STATUS", "LATEST", "SCHEMA", "FINDINGS"}
	if many {
		header = append([]string{"REGISTRY"}, header...)
	}
	out := newTextOut(e.stdout)
	out.table(header...)
	n, bad, deleted := 0, 0, 0
	var deletedLatest []string
	err = each(func(r registryEntryRecord) error {
		n++
		if r.Invalid {
			bad++
		}
		latest := "no"
		if r.IsLatest {
			latest = "yes"
			if r.Status == "deleted" {
				latest = "yes, deleted"
				if deleted++; len(deletedLatest) < maxNamed {
					deletedLatest = append(deletedLatest, r.Name)
				}
			}
		}
		codes := make([]string, 0, len(r.Findings))
		for _, f := range r.Findings {
			codes = append(codes, f.Code+" ("+string(f.Severity)+")")
		}
		cells := []any{r.Name, r.Version, dash(r.Status), latest, dash(r.SchemaVersion), dash(truncate(strings.Join(codes, ", "), 100))}
		if many {
			cells = append([]any{r.Source}, cells...)
		}
		out.row(cells...)
		return nil
	})
	if err != nil {
		return err
	}
	out.printf("\n%d entries, %d with errors the Registry would reject today ('--json' has every finding's message)\n", n, bad)
	if deleted > 0 {
		names := strings.Join(deletedLatest, ", ")
		if more := deleted - len(deletedLatest); more > 0 {
			names += fmt.Sprintf(" and %d more", more)
		}
		out.printf("latest version deleted: %s (the Registry keeps a deleted version latest until a higher one is published; its .../versions/latest answers 404)\n",
			names)
	}
	return out.flush()
}

// dumpSource names where imported entries came from: the registry named by
// an explicit --url, otherwise the file itself, so a dump of unknown origin
// is not filed under the official Registry's name.
func dumpSource(fs *flag.FlagSet, baseURL, file string) string {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "url" })
	if explicit {
		return baseURL
	}
	if file == "-" {
		return "file:stdin"
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return "file:" + file
}

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/pipeline"
	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
)

func init() {
	register(&command{name: "demo", summary: "run the whole pipeline offline, on a simulated web", run: runDemo})
}

// defaultDemoTimeout keeps the demo quick: its deliberately stalling hosts would
// otherwise hold it for the full 15 s production timeout.
const defaultDemoTimeout = 3 * time.Second

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[flags]", joinLines(
		"Start a simulated web in-process (many HTTPS hosts on one loopback port, with its own CA),",
		"crawl its demo domains into a database, probe the MCP servers behind its cards, and print",
		"what was found and where the files are. Needs no network. The simulated web reaches the",
		"crawler exactly as a user's own setup would: through --connect-to and --ca-cert."))
	var (
		db dbFlags
		lf logFlags
		cf crawlFlags
		nf netFlags
	)
	fs.StringVar(&db.path, "db", "", "database `path` (default: demo.db in a new temporary directory)")
	lf.register(fs)
	cf.register(fs)
	fs.IntVar(&nf.concurrency, "concurrency", 8, "hosts in flight")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := cf.validate(); err != nil {
		return err
	}
	log := lf.logger(e)

	dir, err := os.MkdirTemp("", "cardcrawl-demo-")
	if err != nil {
		return fmt.Errorf("make demo directory: %w", err)
	}
	// The CA is only good while this process serves the simulated web; the
	// directory stays only when it holds the database the user will open.
	if db.path == "" {
		db.path = filepath.Join(dir, "demo.db")
		defer os.Remove(filepath.Join(dir, "simweb-ca.pem"))
	} else {
		defer os.RemoveAll(dir)
	}
	web, domains, err := simweb.Demo(simweb.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("build the simulated web: %w", err)
	}
	if err := web.Start(); err != nil {
		return fmt.Errorf("start the simulated web: %w", err)
	}
	defer web.Close()
	caFile := filepath.Join(dir, "simweb-ca.pem")
	if err := web.WriteCA(caFile); err != nil {
		return fmt.Errorf("write the simulated web's CA: %w", err)
	}

	nf.connectTo = stringList{web.ConnectTo()}
	nf.caCerts = stringList{caFile}
	nf.timeout = defaultDemoTimeout
	nf.userAgent = userAgent()
	client, err := nf.client(log)
	if err != nil {
		return err
	}
	st, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()

	fmt.Fprintf(e.stdout, "Simulated web: %d domains on https://%s (reached with --connect-to %s)\n\n", len(domains), web.Addr(), web.ConnectTo())
	cf.force = true // a demo always shows a full crawl, even into a reused database
	crawled, err := crawl(ctx, e, crawlSetup{store: st, client: client, log: log, net: nf, flags: cf}, discover.Names(domains...))
	if err != nil {
		return err
	}
	sum := crawled.Summary
	if err := printSummary(e.stdout, sum); err != nil {
		return err
	}
	if sum.Interrupted {
		return errInterrupted
	}

	fmt.Fprintf(e.stdout, "\nRegistry (a v0.1 double at %s):\n", simweb.DemoRegistryURL)
	val, err := registry.NewValidator()
	if err != nil {
		return err
	}
	rc, err := registry.NewClient(registry.ClientOptions{BaseURL: simweb.DemoRegistryURL, HTTPClient: client.HTTPClient(), Logger: log})
	if err != nil {
		return err
	}
	// The demo checks namespaces over HTTP only: the simulated web has no DNS.
	checker := namespace.NewChecker(namespace.Options{HTTP: client, Logger: log})
	out, err := pipeline.Sync(ctx, st, registry.SyncOptions{Client: rc, Validator: val, Full: true, Logger: log},
		pipeline.Options{Logger: log, Namespaces: namespace.RunOptions{Checker: checker}})
	if err != nil {
		return err
	}
	report := registrySyncReport{Sync: out.Result, Revalidated: out.Revalidated, Reconcile: reconcileCountsOf(out.Recomputed)}
	if out.SyncErr != nil {
		report.Error = out.SyncErr.Error()
	}
	if err := printSyncReport(e.stdout, report); err != nil {
		return err
	}

	fmt.Fprintln(e.stdout, "\nDomains:")
	if err := runDomains(ctx, e, []string{"--db", db.path}); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nServers:")
	if err := runServers(ctx, e, []string{"--db", db.path}); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nCards ↔ Registry:")
	if err := runDiff(ctx, e, []string{"--db", db.path}); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\nNamespaces (checked over HTTP; the simulated web has no DNS):")
	if err := runNamespaces(ctx, e, []string{"--db", db.path}); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, `
Database: %s

Try next:
  go run ./cmd/cardcrawl servers --db %s --json
  go run ./cmd/cardcrawl export --db %s --format jsonl --source all   # and the servers only the Registry declares
  go run ./cmd/cardcrawl probes --db %s
  go run ./cmd/cardcrawl diff --db %s --json
  go run ./cmd/cardcrawl catalogs --db %s --domain signed.example   # what its digests and signatures establish
  go run ./cmd/cardcrawl serve --db %s                                # the feed and a page on http://127.0.0.1:8080/
  go run ./cmd/simweb --demo --ca-out /tmp/simweb-ca.pem   # keep a simulated web running, to crawl it yourself
`, db.path, db.path, db.path, db.path, db.path, db.path, db.path)
	return nil
}

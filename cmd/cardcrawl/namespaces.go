package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "namespaces", summary: "how each namespace can be verified, and what was found", run: runNamespaces})
}

// namespaceRecord is one --json row: the check result plus when it ran.
type namespaceRecord struct {
	namespace.Result
	CheckedAt string `json:"checkedAt,omitempty"`
}

func runNamespaces(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "namespaces", "[--check] [flags]", joinLines(
		"List every namespace among crawled cards and Registry entries, how it could have been",
		"proven to the Registry, and what was found: an HTTP key at /.well-known/mcp-registry-auth",
		"(that domain only), a DNS TXT key at the domain or a parent (covers subdomains), or a GitHub",
		"login (io.github.<account>; not re-checkable from outside, so the repository owner is",
		"compared instead). Domain namespaces stay unchecked until --check runs the HTTP and DNS lookups",
		"(8 namespaces at a time; TXT at the domain and at most 4 parents, never a public suffix);",
		"without --check the last results are shown. A re-check that fails transiently (timeout, 5xx,",
		"DNS error) keeps the earlier outcome and says so. A key found shows the domain opted in, not",
		"that its holder published a given entry."))
	var (
		db     dbFlags
		lf     logFlags
		nf     netFlags
		asJSON bool
		check  bool
	)
	db.register(fs)
	lf.register(fs)
	nf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON (an array of results)")
	fs.BoolVar(&check, "check", false, "run the network checks now (HTTP and DNS)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("namespaces: unexpected argument %q", pos[0])
	}
	log := lf.logger(e)
	opts := namespace.RunOptions{}
	if check {
		fc, err := nf.client(log)
		if err != nil {
			return err
		}
		nopts := namespace.Options{HTTP: fc, Resolver: net.DefaultResolver, Logger: log}
		if len(nf.connectTo) > 0 {
			// --connect-to reroutes HTTP to a test setup, but DNS queries
			// would still reach the real resolver: skip them and say so.
			nopts.Resolver = nil
			fmt.Fprintln(e.stderr, "namespaces: DNS proofs not checked: --connect-to reroutes HTTP only, and DNS lookups would leave it")
		}
		opts.Checker = namespace.NewChecker(nopts)
	}
	// Without --check nothing is written: crawl and registry sync keep the
	// stored list current, so it is shown from a read-only handle.
	st, err := openExisting(ctx, e, db, lf, !check)
	if err != nil {
		return err
	}
	defer st.Close()
	var runErr error
	if check {
		lock, err := lockCrawl(ctx, st, store.CrawlAlone, "namespaces --check")
		if err != nil {
			return err
		}
		defer lock.Release()
		guarded, lost := guardCrawl(ctx, lock, lockCheckEvery, log)
		_, runErr = namespace.Run(guarded, st, opts)
		if why := lost(); why != nil {
			return why
		}
		if runErr == nil {
			runErr = markComplete(ctx, st)
		}
	}
	interrupted := runErr != nil && ctx.Err() != nil && errors.Is(runErr, ctx.Err())
	if runErr != nil && !interrupted {
		return runErr
	}
	// After Ctrl-C, what was checked is stored: show it, then say so.
	each := func(fn func(namespaceRecord) error) error {
		return st.EachNamespace(context.WithoutCancel(ctx), func(r store.NamespaceRow) error {
			rec := namespaceRecord{CheckedAt: r.CheckedAt}
			if err := json.Unmarshal([]byte(r.Result), &rec.Result); err != nil {
				return fmt.Errorf("stored namespace %s: %w", r.Namespace, err)
			}
			rec.Namespace = namespace.Classify(r.Namespace)
			return fn(rec)
		})
	}
	if asJSON {
		if err := streamJSON(e.stdout, each); err != nil {
			return err
		}
	} else if err := printNamespaces(e, each); err != nil {
		return err
	}
	if interrupted {
		fmt.Fprintf(e.stderr, "cardcrawl: %v; run the same command again to check the rest\n", runErr)
		return errInterrupted
	}
	return nil
}

func printNamespaces(e *env, each func(func(namespaceRecord) error) error) error {
	out := newTextOut(e.stdout)
	out.table("NAMESPACE", "KIND", "METHOD", "CHECKED", "FOUND")
	unchecked := 0
	err := each(func(r namespaceRecord) error {
		method := r.Method
		if r.Kind == namespace.KindDomain && r.CheckedAt == "" {
			method = "unchecked"
			unchecked++
		}
		out.row(r.Namespace.Name, r.Kind, method, dash(shortTime(r.CheckedAt)), truncate(namespaceSummary(r.Result), 110))
		return nil
	})
	if err != nil {
		return err
	}
	if unchecked > 0 {
		out.printf("\n%d domain namespaces are unchecked: no HTTP or DNS lookup has run for them yet. Run 'cardcrawl namespaces --check'.\n", unchecked)
	}
	return out.flush()
}

// namespaceSummary says in one line what a check saw.
func namespaceSummary(r namespace.Result) string {
	var parts []string
	if g := r.GitHub; g != nil {
		s := fmt.Sprintf("GitHub login (not checkable from outside); %d of %d repositories under %s", g.SameAccount, g.Repositories, g.Account)
		parts = append(parts, s)
	}
	if h := r.HTTP; h != nil {
		switch {
		case h.Found && h.KeptFrom != "":
			parts = append(parts, "HTTP key "+h.Proofs[0].Algorithm+" (seen "+h.KeptFrom+"; re-check failed: "+h.RecheckError+")")
		case h.Found:
			parts = append(parts, "HTTP key "+h.Proofs[0].Algorithm)
		case h.Class != "":
			parts = append(parts, "HTTP "+h.Class)
		case h.Error != "":
			parts = append(parts, "HTTP "+h.Error)
		}
	}
	for _, d := range r.DNS {
		kept := ""
		if d.KeptFrom != "" {
			kept = " (seen " + d.KeptFrom + "; re-check failed: " + d.RecheckError + ")"
		}
		switch {
		case d.Misplaced:
			parts = append(parts, "TXT record at "+d.Name+", where the Registry does not look (it reads "+r.Domain+")")
		case d.Found && d.CoversSubdomains:
			parts = append(parts, "TXT key at parent "+d.Name+kept)
		case d.Found:
			parts = append(parts, "TXT key at "+d.Name+kept)
		case len(d.Proofs) > 0:
			parts = append(parts, "unusable TXT record at "+d.Name+": "+d.Proofs[0].Problem)
		case d.Error != "":
			parts = append(parts, "DNS error at "+d.Name)
		}
	}
	if len(parts) == 0 {
		if r.Note != "" {
			return r.Note
		}
		if r.Kind == namespace.KindDomain && r.Method == "" {
			return "not checked yet (run with --check)"
		}
		return "nothing found"
	}
	return strings.Join(parts, "; ")
}

// shortTime shows a stored RFC 3339 time to the second, for tables.
func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(time.RFC3339)
}

// markComplete renews the marks a change number holds for the site's
// ns=unknown and category=none (MarkNamespacesComplete,
// MarkCategoriesComplete): the checks just saved moved the number, and
// they add no server, so what the marks say still holds.
func markComplete(ctx context.Context, st *store.DB) error {
	if _, err := st.MarkNamespacesComplete(ctx); err != nil {
		return err
	}
	_, err := st.MarkCategoriesComplete(ctx)
	return err
}

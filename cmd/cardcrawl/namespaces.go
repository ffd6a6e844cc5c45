package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"text/tabwriter"

	"github.com/cardcrawl/cardcrawl/registry/namespace"
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
		"compared instead). --check runs the HTTP and DNS lookups; without it the last results are shown.",
		"A key found shows the domain opted in, not that its holder published a given entry."))
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
		opts.Checker = namespace.NewChecker(namespace.Options{HTTP: fc, Resolver: net.DefaultResolver, Logger: log})
	}
	st, err := openExisting(ctx, e, db, lf)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := namespace.Run(ctx, st, opts); err != nil {
		return err
	}
	rows, err := st.Namespaces(ctx)
	if err != nil {
		return err
	}
	recs := make([]namespaceRecord, 0, len(rows))
	for _, r := range rows {
		rec := namespaceRecord{CheckedAt: r.CheckedAt}
		if err := json.Unmarshal([]byte(r.Result), &rec.Result); err != nil {
			return fmt.Errorf("stored namespace %s: %w", r.Namespace, err)
		}
		rec.Namespace = namespace.Classify(r.Namespace)
		recs = append(recs, rec)
	}
	if asJSON {
		return writeJSON(e.stdout, recs)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tKIND\tMETHOD\tFOUND")
	for _, r := range recs {
		method := r.Method
		if method == "" {
			method = "unchecked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Namespace.Name, r.Kind, method, truncate(namespaceSummary(r.Result), 110))
	}
	return tw.Flush()
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
		case h.Found:
			parts = append(parts, "HTTP key "+h.Proofs[0].Algorithm)
		case h.Class != "":
			parts = append(parts, "HTTP "+h.Class)
		case h.Error != "":
			parts = append(parts, "HTTP "+h.Error)
		}
	}
	for _, d := range r.DNS {
		switch {
		case d.Found && d.CoversSubdomains:
			parts = append(parts, "TXT key at parent "+d.Name)
		case d.Found:
			parts = append(parts, "TXT key at "+d.Name)
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
			return "run with --check"
		}
		return "nothing found"
	}
	return strings.Join(parts, "; ")
}

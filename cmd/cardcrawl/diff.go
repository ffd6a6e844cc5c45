package main

import (
	"context"
	"strings"

	"github.com/cardcrawl/cardcrawl/registry/reconcile"
)

func init() {
	register(&command{name: "diff", summary: "card ↔ Registry: matched pairs and their differences, card-only, registry-only", run: runDiff})
}

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", "[flags]", joinLines(
		"Reconcile crawled Server Cards with the latest Registry entries and print the result:",
		"matched pairs (by remote URL, else server name, else namespace ↔ listing domain) with the",
		"fields that differ, then cards the Registry lacks, then Registry servers no card matched.",
		"Run 'cardcrawl registry sync' first to have Registry entries to compare with."))
	var (
		rf  readFlags
		all bool
	)
	rf.register(fs, "print JSON: {pairs, cardOnly, registryOnly}")
	fs.BoolVar(&all, "all", false, "also list matched pairs whose fields all agree")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	log := rf.lf.logger(e)
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	// Recomputing is cheap (well under a second for tens of thousands of
	// servers) and guarantees the answer reflects the latest crawl and sync;
	// it only reads, so diff works on a read-only database.
	res, err := reconcile.Compute(ctx, st, reconcile.Options{Logger: log})
	if err != nil {
		return err
	}
	if rf.asJSON {
		return writeJSON(e.stdout, res)
	}
	out := newTextOut(e.stdout)
	same := 0
	out.printf("MATCHED (%d)\n", len(res.Pairs))
	out.table("CARD", "REGISTRY", "BASIS", "DIFFERENT FIELDS")
	for _, p := range res.Pairs {
		if len(p.Diffs) == 0 {
			same++
			if !all {
				continue
			}
		}
		fields := make([]string, 0, len(p.Diffs))
		for _, d := range p.Diffs {
			fields = append(fields, d.Field)
		}
		reg := p.Name + "@" + p.Version
		if p.Status != "" && p.Status != "active" {
			reg += " (" + p.Status + ")"
		}
		out.row(p.CardKey, reg, p.Basis, dash(truncate(strings.Join(fields, ", "), 100)))
	}
	if same > 0 && !all {
		out.printf("(%d pairs agree on every field; --all lists them)\n", same)
	}
	out.printf("\nCARD ONLY (%d)\n", len(res.CardOnly))
	out.table("CARD", "NAME", "LISTED BY")
	for _, c := range res.CardOnly {
		out.row(c.CardKey, dash(c.CardName), dash(strings.Join(c.Domains, " ")))
	}
	out.printf("\nREGISTRY ONLY (%d)\n", len(res.RegistryOnly))
	out.table("NAME", "VERSION", "STATUS", "REGISTRY")
	for _, r := range res.RegistryOnly {
		out.row(r.Name, dash(r.Version), dash(r.Status), r.Source)
	}
	return out.flush()
}

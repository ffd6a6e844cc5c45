package main

import (
	"context"

	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "catalogs", summary: "each catalog found, with everything found in it (digests and signatures too)", run: runCatalogs})
}

func runCatalogs(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "catalogs", "[--domain D] [flags]", joinLines(
		"List the stored AI Catalogs (or those --domain reaches, root and nested), each with its findings in",
		"full: severity, code, JSON pointer and message. Besides the parser's, the crawl's own: the bounds",
		"it hit, entry digests that did not match what was served, and what each signature establishes",
		"(signature_verified: whose snapshot or release it endorses; signature_not_endorsement,",
		"signature_invalid, signature_unverifiable: why not)."))
	var (
		rf     readFlags
		domain string
	)
	rf.register(fs, "print JSON (an array of objects, findings with their messages)")
	fs.StringVar(&domain, "domain", "", "only the catalogs this `domain` reaches")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	if rf.asJSON {
		return streamJSON(e.stdout, func(add func(store.CatalogRow) error) error { return st.EachCatalog(ctx, domain, add) })
	}
	out := newTextOut(e.stdout)
	n := 0
	err = st.EachCatalog(ctx, domain, func(c store.CatalogRow) error {
		if n > 0 {
			out.printf("\n")
		}
		n++
		out.printf("%s  (depth %d, spec %s, %d entries)\n", c.URL, c.Depth, dash(c.SpecVersion), c.EntryCount)
		if len(c.Findings) == 0 {
			out.printf("  no findings\n")
		}
		for _, f := range c.Findings {
			out.printf("  %-7s %s %s: %s\n", f.Severity, f.Code, dash(f.Path), f.Message)
		}
		return out.flush()
	})
	if err != nil {
		return err
	}
	if n == 0 {
		if domain != "" {
			out.printf("no catalogs reached from %s\n", domain)
		} else {
			out.printf("no catalogs\n")
		}
	}
	return out.flush()
}

package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/cardcrawl/cardcrawl/store"
)

// Subject is one namespace found among cards and Registry entries, with the
// repository URLs its servers name.
type Subject struct {
	Namespace Namespace
	Servers   []string // distinct server names, sorted
	RepoURLs  []string
}

// Collect gathers every namespace named by a stored card or a latest
// Registry entry.
func Collect(ctx context.Context, db *store.DB) ([]Subject, error) {
	cards, err := db.ReconcileCards(ctx)
	if err != nil {
		return nil, fmt.Errorf("collect namespaces: %w", err)
	}
	entries, err := db.RegistryEntries(ctx, store.RegistryFilter{LatestOnly: true})
	if err != nil {
		return nil, fmt.Errorf("collect namespaces: %w", err)
	}
	type acc struct {
		servers, repos map[string]bool
	}
	by := map[string]*acc{}
	add := func(doc string) {
		var d struct {
			Name       string `json:"name"`
			Repository *struct {
				URL string `json:"url"`
			} `json:"repository"`
		}
		// An unreadable document simply names no namespace.
		if json.Unmarshal([]byte(doc), &d) != nil {
			return
		}
		ns := Of(d.Name)
		if ns == "" {
			return
		}
		a := by[ns]
		if a == nil {
			a = &acc{servers: map[string]bool{}, repos: map[string]bool{}}
			by[ns] = a
		}
		a.servers[d.Name] = true
		if d.Repository != nil && d.Repository.URL != "" {
			a.repos[d.Repository.URL] = true
		}
	}
	for _, c := range cards {
		add(c.JSON)
	}
	for _, e := range entries {
		add(e.ServerJSON)
	}
	out := make([]Subject, 0, len(by))
	for ns, a := range by {
		out = append(out, Subject{Namespace: Classify(ns), Servers: keys(a.servers), RepoURLs: keys(a.repos)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace.Name < out[j].Namespace.Name })
	return out, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RunOptions configure Run.
type RunOptions struct {
	// Checker runs network checks; nil records only what is known offline
	// and keeps the outcome of earlier network checks.
	Checker *Checker
	// Now stamps checks; the store's clock is the usual source.
	Now func() string
}

// Run collects namespaces, checks them (network checks only with a
// Checker) and stores the outcomes, returning them in namespace order.
func Run(ctx context.Context, db *store.DB, opts RunOptions) ([]Result, error) {
	if opts.Now == nil {
		opts.Now = db.Now
	}
	subjects, err := Collect(ctx, db)
	if err != nil {
		return nil, err
	}
	results := make([]Result, 0, len(subjects))
	rows := make([]store.NamespaceRow, 0, len(subjects))
	for _, s := range subjects {
		var r Result
		checked := ""
		switch {
		case opts.Checker != nil:
			r = opts.Checker.Check(ctx, s.Namespace, s.RepoURLs)
			checked = opts.Now()
		default:
			r = Offline(s.Namespace, s.RepoURLs)
			if s.Namespace.Kind != KindDomain {
				checked = opts.Now() // nothing more to learn from the network
			}
		}
		body, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", s.Namespace.Name, err)
		}
		results = append(results, r)
		rows = append(rows, store.NamespaceRow{Namespace: s.Namespace.Name, Kind: s.Namespace.Kind, Domain: s.Namespace.Domain,
			Method: r.Method, Result: string(body), CheckedAt: checked})
	}
	if err := db.SaveNamespaces(ctx, rows); err != nil {
		return nil, err
	}
	return results, nil
}

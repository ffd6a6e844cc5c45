package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

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
// Registry entry. Cards and entries stream from the store a page at a
// time; what is kept is one small record per namespace.
func Collect(ctx context.Context, db *store.DB) ([]Subject, error) {
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
	if err := db.EachListedCard(ctx, func(c store.ReconcileCard) error {
		add(c.JSON)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("collect namespaces: %w", err)
	}
	if err := db.EachLatestRegistryEntry(ctx, func(e store.RegistryEntry) error {
		add(e.ServerJSON)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("collect namespaces: %w", err)
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
	// Concurrency is how many namespaces are checked at once (default 8).
	// Each check is a handful of requests to different hosts, so a few in
	// flight keep a slow DNS server or host from holding up the rest.
	Concurrency int
	// Now stamps checks; the store's clock is the usual source.
	Now func() string
}

// Run collects namespaces, checks them (network checks only with a
// Checker) and stores the outcomes, returning them in namespace order.
// Namespaces no longer named by a listed card or a latest Registry entry
// are removed. A method whose re-check failed transiently keeps its earlier
// outcome (see Merge). If ctx ends mid-way, the checks that finished are
// stored, the rest keep their earlier outcome, and the error wraps
// ctx.Err().
func Run(ctx context.Context, db *store.DB, opts RunOptions) ([]Result, error) {
	if opts.Now == nil {
		opts.Now = db.Now
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	subjects, err := Collect(ctx, db)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(subjects))
	checkedAt := make([]string, len(subjects))
	for i, s := range subjects {
		results[i] = Offline(s.Namespace, s.RepoURLs)
		if s.Namespace.Kind != KindDomain {
			checkedAt[i] = opts.Now() // nothing more to learn from the network
		}
	}
	checked, total := 0, 0
	if opts.Checker != nil {
		stored, err := db.Namespaces(ctx)
		if err != nil {
			return nil, fmt.Errorf("namespaces: %w", err)
		}
		prev := make(map[string]store.NamespaceRow, len(stored))
		for _, r := range stored {
			prev[r.Namespace] = r
		}
		var todo []int
		for i, s := range subjects {
			if s.Namespace.Kind == KindDomain {
				todo = append(todo, i)
			}
		}
		total = len(todo)
		checked = checkAll(ctx, opts, subjects, todo, func(i int, r Result) {
			if p, ok := prev[subjects[i].Namespace.Name]; ok && p.CheckedAt != "" {
				var pr Result
				if json.Unmarshal([]byte(p.Result), &pr) == nil {
					r = Merge(pr, p.CheckedAt, r)
				}
			}
			results[i], checkedAt[i] = r, opts.Now()
		})
	}
	rows := make([]store.NamespaceRow, 0, len(subjects))
	for i, s := range subjects {
		body, err := json.Marshal(results[i])
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", s.Namespace.Name, err)
		}
		rows = append(rows, store.NamespaceRow{Namespace: s.Namespace.Name, Kind: s.Namespace.Kind, Domain: s.Namespace.Domain,
			Method: results[i].Method, Result: string(body), CheckedAt: checkedAt[i]})
	}
	// What finished is kept even after Ctrl-C: the write is one short
	// transaction.
	if err := db.ReplaceNamespaces(context.WithoutCancel(ctx), rows); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return results, fmt.Errorf("namespace checks interrupted after %d of %d domains (the rest keep their earlier outcome): %w", checked, total, err)
	}
	return results, nil
}

// checkAll checks subjects[i] for each i in todo, opts.Concurrency at a
// time, calling done (serialised) with each finished result. A check that
// ctx ended mid-way is discarded: its failures are the interruption's, not
// the namespace's. It returns how many checks finished.
func checkAll(ctx context.Context, opts RunOptions, subjects []Subject, todo []int, done func(i int, r Result)) int {
	var (
		mu       sync.Mutex
		finished int
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(opts.Concurrency, len(todo)) {
		wg.Go(func() {
			for i := range next {
				r := opts.Checker.Check(ctx, subjects[i].Namespace, subjects[i].RepoURLs)
				if ctx.Err() != nil {
					continue
				}
				mu.Lock()
				done(i, r)
				finished++
				mu.Unlock()
			}
		})
	}
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return finished
}

package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cardcrawl/cardcrawl/store"
)

// Docs is where namespaces come from: the names of listed cards and latest
// Registry entries, in byte order. *store.DB implements it.
type Docs interface {
	EachNamedDoc(ctx context.Context, withJSON func(name string) bool, fn func(store.NamedDoc) error) error
}

// Store is what Run needs: the names, each namespace's earlier outcome (a
// transient failure keeps it), and a sweep that replaces the stored list.
type Store interface {
	Docs
	Namespace(ctx context.Context, name string) (store.NamespaceRow, bool, error)
	StartNamespaceSweep() store.NamespaceSweep
	// Now is the store's clock, in its timestamp format.
	Now() string
}

// Subject is one namespace found among cards and Registry entries, with the
// repository URLs its servers name (for an io.github namespace, the only
// kind they verify).
type Subject struct {
	Namespace Namespace
	Names     int // distinct server names
	RepoURLs  []string
}

// Collect gathers every namespace named by a stored card or a latest
// Registry entry, in the order Each yields them. Tests and small tools use
// it; Run streams.
func Collect(ctx context.Context, db Docs) ([]Subject, error) {
	var out []Subject
	err := Each(ctx, db, func(s Subject) error {
		out = append(out, s)
		return nil
	})
	return out, err
}

// Each calls fn for every namespace named by a card some domain lists now
// or by a latest Registry entry, with its server names and repository
// URLs. Names stream from the store in byte order, where a namespace's
// names ("ns/…") are adjacent, so one namespace is held at a time.
func Each(ctx context.Context, db Docs, fn func(Subject) error) error {
	var (
		cur   Namespace
		names int
		last  string
		repos map[string]bool
	)
	flush := func() error {
		if cur.Name == "" {
			return nil
		}
		err := fn(Subject{Namespace: cur, Names: names, RepoURLs: keys(repos)})
		cur = Namespace{}
		return err
	}
	// Only an io.github namespace is verified by its servers'
	// repositories: reading every document for them was most of the
	// namespace pass. A name merely under the prefix costs a read, no more.
	mayBeGitHub := func(name string) bool { return strings.HasPrefix(name, gitHubPrefix) }
	err := db.EachNamedDoc(ctx, mayBeGitHub, func(d store.NamedDoc) error {
		ns := Of(d.Name)
		if ns == "" {
			return nil
		}
		if ns != cur.Name {
			if err := flush(); err != nil {
				return err
			}
			cur, names, last, repos = Classify(ns), 0, "", map[string]bool{}
		}
		// Names arrive in byte order, a name's cards and entries together.
		if d.Name != last {
			names++
			last = d.Name
		}
		if cur.Kind != KindGitHub {
			return nil
		}
		var doc struct {
			Repository *struct {
				URL string `json:"url"`
			} `json:"repository"`
		}
		// An unreadable document names its namespace, but no repository.
		if json.Unmarshal([]byte(d.JSON), &doc) == nil && doc.Repository != nil && doc.Repository.URL != "" {
			repos[doc.Repository.URL] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("collect namespaces: %w", err)
	}
	return flush()
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

// Summary is what Run did.
type Summary struct {
	Namespaces int // stored
	Checked    int // domain namespaces checked over the network
}

// runChunk is how many namespaces Run classifies, checks and stores at a
// time: enough to keep Concurrency checks busy, few enough to hold.
const runChunk = 256

// Run collects namespaces, checks them (network checks only with a
// Checker) and stores the outcomes, a chunk at a time as they stream from
// the store. Namespaces no longer named by a listed card or a latest
// Registry entry are removed once the pass is complete. A method whose
// re-check failed transiently keeps its earlier outcome (see Merge). If
// ctx ends mid-way, the checks that finished are stored, the rest keep
// their earlier outcome, nothing is removed, and the error wraps
// ctx.Err().
func Run(ctx context.Context, db Store, opts RunOptions) (Summary, error) {
	if opts.Now == nil {
		opts.Now = db.Now
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	var sum Summary
	sweep := db.StartNamespaceSweep()
	chunk := make([]Subject, 0, runChunk)
	save := func() error {
		n, err := runSubjects(ctx, db, opts, sweep, chunk)
		sum.Checked += n
		sum.Namespaces += len(chunk)
		chunk = chunk[:0]
		return err
	}
	err := Each(ctx, db, func(s Subject) error {
		chunk = append(chunk, s)
		if len(chunk) == runChunk {
			return save()
		}
		return nil
	})
	if err == nil {
		err = save()
	}
	if ctx.Err() != nil {
		return sum, fmt.Errorf("namespace checks interrupted after %d domain(s) checked (the rest keep their earlier outcome): %w",
			sum.Checked, ctx.Err())
	}
	if err != nil {
		return sum, err
	}
	return sum, sweep.Finish(ctx)
}

// runSubjects classifies one chunk, checks its domain namespaces when
// there is a Checker, and saves it; it returns how many checks finished.
// What finished is saved even after Ctrl-C: the write is one short
// transaction.
func runSubjects(ctx context.Context, db Store, opts RunOptions, sweep store.NamespaceSweep, subjects []Subject) (int, error) {
	results := make([]Result, len(subjects))
	checkedAt := make([]string, len(subjects))
	var todo []int
	for i, s := range subjects {
		results[i] = Offline(s.Namespace, s.RepoURLs)
		if s.Namespace.Kind != KindDomain {
			checkedAt[i] = opts.Now() // nothing more to learn from the network
		} else if opts.Checker != nil {
			todo = append(todo, i)
		}
	}
	checked := 0
	if len(todo) > 0 && ctx.Err() == nil {
		prev := make(map[int]store.NamespaceRow, len(todo))
		for _, i := range todo {
			r, ok, err := db.Namespace(ctx, subjects[i].Namespace.Name)
			if err != nil {
				return 0, fmt.Errorf("namespaces: %w", err)
			}
			if ok {
				prev[i] = r
			}
		}
		checked = checkAll(ctx, opts, subjects, todo, func(i int, r Result) {
			if p, ok := prev[i]; ok && p.CheckedAt != "" {
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
			return checked, fmt.Errorf("namespace %s: %w", s.Namespace.Name, err)
		}
		rows = append(rows, store.NamespaceRow{Namespace: s.Namespace.Name, Kind: s.Namespace.Kind, Domain: s.Namespace.Domain,
			Method: results[i].Method, Result: string(body), CheckedAt: checkedAt[i]})
	}
	return checked, sweep.Save(context.WithoutCancel(ctx), rows)
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

// Package pipeline runs cardcrawl's steps in their one order: a crawl or a
// Registry sync (or dump import) changes what is stored, then the card ↔
// Registry reconciliation is recomputed, then the namespace list, so `diff`
// and `namespaces` never show a picture older than the data. The CLI and the
// demo call this package rather than repeating the order.
package pipeline

import (
	"context"
	"fmt"
	"iter"
	"log/slog"

	"github.com/cardcrawl/cardcrawl/discover"
	"github.com/cardcrawl/cardcrawl/internal/category/recompute"
	"github.com/cardcrawl/cardcrawl/internal/revalidate"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
	"github.com/cardcrawl/cardcrawl/servercard"
)

// Store is everything the steps use, each declared by the package that
// uses it; *store.DB implements it.
type Store interface {
	discover.Store
	registry.Store
	reconcile.Store
	namespace.Store
	revalidate.Documents
	revalidate.Entries
	recompute.Store
	MarkNamespacesComplete(ctx context.Context) (bool, error)
}

// Options configure the steps that follow a change.
type Options struct {
	Logger *slog.Logger
	// Namespaces configures the namespace step. Without a Checker it is
	// offline and keeps the outcome of earlier network checks.
	Namespaces namespace.RunOptions
	// Revalidate re-judges, before a crawl, the stored cards and catalogs
	// that older rules judged (crawl --revalidate); the crawl itself then
	// judges what it fetches.
	Revalidate bool
}

// Recomputed is what the steps after a change produced.
type Recomputed struct {
	Reconcile  reconcile.Counts
	Namespaces namespace.Summary
	Categories recompute.Result
}

// Crawled is what a crawl did, what was re-judged before it (with
// Options.Revalidate), and what the steps after it produced (nil when they
// did not run).
type Crawled struct {
	Summary     discover.Summary
	Revalidated revalidate.Summary
	Recomputed  *Recomputed
}

// Crawl runs a crawl of domains into st (crawl.Store is set to st), then
// the steps that follow. An interrupted or failed crawl stops there: what
// it stored is reconciled by the next run.
func Crawl(ctx context.Context, st Store, crawl discover.Options, domains iter.Seq2[string, error], opts Options) (Crawled, error) {
	var out Crawled
	crawl.Store = st
	if opts.Revalidate {
		v := crawl.Validator
		if v == nil {
			var err error
			if v, err = servercard.NewValidator(); err != nil {
				return out, err
			}
		}
		var err error
		if out.Revalidated, err = revalidate.Crawled(ctx, st, v); err != nil {
			return out, err
		}
	}
	sum, err := discover.Crawl(ctx, crawl, domains)
	out.Summary = sum
	if err != nil || sum.Interrupted {
		return out, err
	}
	if out.Recomputed, err = Recompute(ctx, st, opts); err != nil {
		return out, fmt.Errorf("reconcile after the crawl: %w", err)
	}
	return out, nil
}

// Synced is what a Registry sync or import did: its result, the error that
// stopped it (entries stored before it are kept), how many stored entries an
// older validator had judged and were re-validated, and what the steps
// after it produced (nil when they did not run).
type Synced struct {
	Result      registry.SyncResult
	SyncErr     error
	Revalidated int
	Recomputed  *Recomputed
}

// Sync mirrors a registry into st (sync.Store is set to st), then runs the
// steps that follow, even after a partial sync, unless ctx ended. The
// error is theirs; the sync's own is in Synced.SyncErr.
func Sync(ctx context.Context, st Store, sync registry.SyncOptions, opts Options) (Synced, error) {
	sync.Store = st
	var err error
	if sync.Validator, err = validator(sync.Validator); err != nil {
		return Synced{}, err
	}
	res, err := registry.Sync(ctx, sync)
	return after(ctx, st, opts, sync.Validator, Synced{Result: res, SyncErr: err})
}

// Import stores an offline Registry dump (imp.Store is set to st), then
// runs the steps that follow, as Sync does.
func Import(ctx context.Context, st Store, imp registry.ImportOptions, body []byte, opts Options) (Synced, error) {
	imp.Store = st
	var err error
	if imp.Validator, err = validator(imp.Validator); err != nil {
		return Synced{}, err
	}
	res, err := registry.ImportDump(ctx, imp, body)
	return after(ctx, st, opts, imp.Validator, Synced{Result: res, SyncErr: err})
}

// validator is v, or a new one: the re-validation after a sync uses the
// sync's validator.
func validator(v *registry.Validator) (*registry.Validator, error) {
	if v != nil {
		return v, nil
	}
	return registry.NewValidator()
}

// after re-validates the stored entries an older validator judged (a
// delta sync fetches only what changed), then recomputes.
func after(ctx context.Context, st Store, opts Options, v *registry.Validator, s Synced) (Synced, error) {
	if ctx.Err() != nil {
		return s, nil
	}
	n, err := revalidate.Registry(ctx, st, v)
	s.Revalidated = n
	if err != nil {
		return s, err
	}
	rec, err := Recompute(ctx, st, opts)
	s.Recomputed = rec
	return s, err
}

// Recompute runs the steps that follow any change: the reconciliation,
// the namespace list, then the Registry entries' remotes and every
// server's category (Categories).
func Recompute(ctx context.Context, st Store, opts Options) (*Recomputed, error) {
	rec, err := reconcile.Run(ctx, st, reconcile.Options{Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	ns, err := namespace.Run(ctx, st, opts.Namespaces)
	if err != nil {
		return nil, err
	}
	cats, err := Categories(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	return &Recomputed{Reconcile: rec, Namespaces: ns, Categories: cats}, nil
}

// CategoryStore is what Categories needs.
type CategoryStore interface {
	discover.RegistryRemotes
	recompute.Store
	MarkNamespacesComplete(ctx context.Context) (bool, error)
}

// Categories brings the Registry remotes and every server's category up to
// date (both stream, and write only what changed); it also follows a saved
// probe, whose tools can change a category.
func Categories(ctx context.Context, st CategoryStore, opts Options) (recompute.Result, error) {
	if err := discover.RefreshRegistryRemotes(ctx, st); err != nil {
		return recompute.Result{}, err
	}
	res, err := recompute.Run(ctx, st, recompute.Options{Logger: opts.Logger})
	if err != nil {
		return res, fmt.Errorf("categories: %w", err)
	}
	// The categories written since the namespace pass moved the change
	// number its mark holds: mark again, after the last write.
	if _, err := st.MarkNamespacesComplete(ctx); err != nil {
		return res, err
	}
	return res, nil
}

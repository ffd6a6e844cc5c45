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
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
)

// Store is everything the steps use, each declared by the package that
// uses it; *store.DB implements it.
type Store interface {
	discover.Store
	registry.Store
	reconcile.Store
	namespace.Store
}

// Options configure the steps that follow a change.
type Options struct {
	Logger *slog.Logger
	// Namespaces configures the namespace step. Without a Checker it is
	// offline and keeps the outcome of earlier network checks.
	Namespaces namespace.RunOptions
}

// Recomputed is what the steps after a change produced.
type Recomputed struct {
	Reconcile  reconcile.Counts
	Namespaces namespace.Summary
}

// Crawl runs a crawl of domains into st (opts.Store is set to st), then the
// steps that follow. An interrupted or failed crawl stops there: what it
// stored is reconciled by the next run. rec is nil when those steps did
// not run.
func Crawl(ctx context.Context, st Store, crawl discover.Options, domains iter.Seq2[string, error], opts Options) (sum discover.Summary, rec *Recomputed, err error) {
	crawl.Store = st
	sum, err = discover.Crawl(ctx, crawl, domains)
	if err != nil || sum.Interrupted {
		return sum, nil, err
	}
	rec, err = Recompute(ctx, st, opts)
	if err != nil {
		return sum, nil, fmt.Errorf("reconcile after the crawl: %w", err)
	}
	return sum, rec, nil
}

// Synced is what a Registry sync or import did: its result, the error that
// stopped it (entries stored before it are kept), and what the steps after
// it produced (nil when they did not run).
type Synced struct {
	Result     registry.SyncResult
	SyncErr    error
	Recomputed *Recomputed
}

// Sync mirrors a registry into st (sync.Store is set to st), then runs the
// steps that follow, even after a partial sync, unless ctx ended. The
// error is theirs; the sync's own is in Synced.SyncErr.
func Sync(ctx context.Context, st Store, sync registry.SyncOptions, opts Options) (Synced, error) {
	sync.Store = st
	res, err := registry.Sync(ctx, sync)
	return after(ctx, st, opts, Synced{Result: res, SyncErr: err})
}

// Import stores an offline Registry dump (imp.Store is set to st), then
// runs the steps that follow, as Sync does.
func Import(ctx context.Context, st Store, imp registry.ImportOptions, body []byte, opts Options) (Synced, error) {
	imp.Store = st
	res, err := registry.ImportDump(ctx, imp, body)
	return after(ctx, st, opts, Synced{Result: res, SyncErr: err})
}

func after(ctx context.Context, st Store, opts Options, s Synced) (Synced, error) {
	if ctx.Err() != nil {
		return s, nil
	}
	rec, err := Recompute(ctx, st, opts)
	s.Recomputed = rec
	return s, err
}

// Recompute runs the steps that follow any change: the reconciliation,
// then the namespace list.
func Recompute(ctx context.Context, st Store, opts Options) (*Recomputed, error) {
	rec, err := reconcile.Run(ctx, st, reconcile.Options{Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	ns, err := namespace.Run(ctx, st, opts.Namespaces)
	if err != nil {
		return nil, err
	}
	return &Recomputed{Reconcile: rec, Namespaces: ns}, nil
}

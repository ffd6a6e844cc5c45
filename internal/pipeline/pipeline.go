// Package pipeline runs cardcrawl's steps in their one order: a crawl or a
// Registry sync (or dump import) changes what is stored, then the card ↔
// Registry reconciliation is recomputed, then the namespace list, so `diff`
// and `namespaces` never show a picture older than the data. The CLI and the
// demo call this package rather than repeating the order.
package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"runtime/debug"

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
	reconcile.Kinds
	MarkNamespacesComplete(ctx context.Context) (bool, error)
	RecomputeState(ctx context.Context) (now, marked string, err error)
	MarkRecomputed(ctx context.Context, key string) error
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
	// Build names the rules the steps apply (a new build may reconcile or
	// categorise differently); "" is this program's (buildID).
	Build string
}

// Recomputed is what the steps after a change produced. Skipped: they did
// not run, their inputs being those of an earlier run that changed nothing;
// Reconcile then counts what that run stored, and the rest is zero.
type Recomputed struct {
	Reconcile  reconcile.Counts
	Namespaces namespace.Summary
	Categories recompute.Result
	Skipped    bool
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
// server's category (Categories). At 100,000 servers they take seconds
// even when nothing changed, so a run that changed nothing records its
// inputs (and the build, whose rules they apply), and a later run with the
// same skips them. A run that wrote something is not recorded: its writes
// and another writer's look the same, so the next run repeats it and
// records that one.
func Recompute(ctx context.Context, st Store, opts Options) (*Recomputed, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	build := cmp.Or(opts.Build, buildID())
	// Network checks of namespaces are news whatever the inputs.
	var key, before string
	if opts.Namespaces.Checker == nil {
		now, marked, err := st.RecomputeState(ctx)
		if err != nil {
			return nil, err
		}
		if build != "" {
			key, before = build+"|"+now, now
		}
		if key != "" && key == marked {
			counts, err := reconcile.Stored(ctx, st)
			if err != nil {
				return nil, err
			}
			opts.Logger.Info("recomputation skipped: nothing it reads changed since the last", "pairs", counts.Pairs,
				"card_only", counts.CardOnly, "registry_only", counts.RegistryOnly)
			return &Recomputed{Reconcile: counts, Skipped: true}, nil
		}
	}
	rec, err := reconcile.Run(ctx, st, reconcile.Options{Logger: opts.Logger, Build: build})
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
	if key != "" {
		after, _, err := st.RecomputeState(ctx)
		if err != nil {
			return nil, err
		}
		if after == before {
			if err := st.MarkRecomputed(ctx, key); err != nil {
				return nil, err
			}
		}
	}
	return &Recomputed{Reconcile: rec, Namespaces: ns, Categories: cats}, nil
}

// buildID names this program's build: its module revision when built from
// a clean checkout, else the executable itself (its path, size and time),
// so a rebuilt program never takes an older build's recomputation for its
// own; "" when neither is known, and then nothing is skipped.
func buildID() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" && modified == "false" {
			return bi.GoVersion + " " + rev
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
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

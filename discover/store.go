package discover

import (
	"context"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what a crawl needs from the database, in the small parts each
// step uses; *store.DB implements it, and so must any other backend (the
// store/storetest suite checks the behaviour these methods promise).
type Store interface {
	Runs
	Frontier
	Documents
	ProbeLog
	RegistryRemotes
}

// Runs records crawl runs and finds the ones that stopped without finishing.
type Runs interface {
	StartRun(ctx context.Context, r store.RunStart) (int64, error)
	FinishRun(id int64, status string, summary any) error
	AbandonDeadRuns(ctx context.Context, host string, alive func(pid int) bool) (int, error)
	RunTotals(ctx context.Context, runID int64) (cards, remotes int, err error)
	UnsettledRuns(ctx context.Context) ([]int64, error)
	SettleRun(ctx context.Context, runID int64) error
}

// Frontier takes domains on and stores each domain's result.
type Frontier interface {
	Enqueue(ctx context.Context, domains []string, opts store.EnqueueOptions) (store.Enqueued, error)
	SaveDomain(ctx context.Context, r store.DomainResult) error
	AddDomainCaps(ctx context.Context, domain string, caps []string) error
}

// Documents keeps fetch history and bodies, for conditional requests.
type Documents interface {
	AddObservations(ctx context.Context, fs ...store.Fetched) error
	LastValidators(ctx context.Context, url string) (store.Validators, bool, error)
	LastFetch(ctx context.Context, url string) (store.LastFetch, bool, error)
	Document(ctx context.Context, sha256 string) ([]byte, error)
}

// ProbeLog records probe decisions and results, and answers what a
// decision needs: when an endpoint was last probed, against which card.
type ProbeLog interface {
	AddProbeDecision(ctx context.Context, ds ...store.ProbeDecision) error
	AddProbe(ctx context.Context, runID int64, p store.ProbeRow) error
	DecidedInRun(ctx context.Context, runID int64, remoteNorm string) (bool, error)
	LastProbe(ctx context.Context, remoteNorm string) (at time.Time, cardSHA string, ok bool, err error)
	StillDeclared(ctx context.Context, remoteNorm, cardSHA string) (bool, error)
	PendingProbes(ctx context.Context, domain string, fn func(store.PendingRemote) error) error
	PendingProbeDomains(ctx context.Context, runID int64, fn func(domain string) error) error
}

// RegistryRemotes keeps the remotes of the Registry entries it lists
// (latest, not deleted); a crawl probes the active ones too.
type RegistryRemotes interface {
	EachListedEntry(ctx context.Context, fn func(store.RegistryEntryDoc) error) error
	ReplaceRegistryRemotes(ctx context.Context, e store.RegistryEntryDoc, entrySHA string, remotes []store.RegistryRemote) error
	PruneRegistryRemotes(ctx context.Context) (int64, error)
	EachActiveRegistryRemote(ctx context.Context, fn func(store.DeclaredRemote) error) error
}

var _ Store = (*store.DB)(nil)

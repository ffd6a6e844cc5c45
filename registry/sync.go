package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/store"
)

// Errors that end a sweep early; both are wrapped with details.
var (
	// ErrCursorRepeat: the registry handed back a cursor it had already
	// given in this sweep, which would loop forever.
	ErrCursorRepeat = errors.New("registry repeated a pagination cursor")
	// ErrPageCap: the sweep reached SyncOptions.MaxPages without the
	// registry ending pagination.
	ErrPageCap = errors.New("registry pagination did not end within the page cap")
)

// Store is what Sync needs from the database; *store.DB implements it.
type Store interface {
	RegistrySyncState(ctx context.Context, source string) (store.RegistrySyncState, error)
	SaveRegistrySyncState(ctx context.Context, s store.RegistrySyncState) error
	WriteRegistry(ctx context.Context, w store.RegistryWrite) error
}

// SyncOptions configure Sync.
type SyncOptions struct {
	Client *Client
	Store  Store
	// Validator checks each server.json; nil builds one.
	Validator *Validator
	// Full forces a full sweep even when a watermark allows a delta.
	Full bool
	// MaxPages caps one sweep (default 10,000 pages, a million versions).
	MaxPages int
	// Workers parse and validate pages in parallel while the next page is
	// fetched (default GOMAXPROCS, at most 8).
	Workers int
	// SafetyMargin is subtracted from the sweep's start time to form the
	// next watermark, covering clock skew and rows written mid-sweep
	// (default 5 minutes).
	SafetyMargin time.Duration
	// Now is used when the registry sends no Date header (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// Progress, when set, is called after each page is stored with the
	// running totals of this sync.
	Progress func(pages, entries int)
}

// SyncResult says what one Sync did.
type SyncResult struct {
	Source  string `json:"source"`
	Kind    string `json:"kind"` // full or delta
	Since   string `json:"since,omitempty"`
	Resumed bool   `json:"resumed"`
	Pages   int    `json:"pages"`
	Entries int    `json:"entries"`
	Invalid int    `json:"invalid"` // entries with at least one error finding
	// InvalidNames are the first MaxInvalidNames of them, "name@version",
	// so a user sees which without querying ('registry entries --invalid').
	InvalidNames []string `json:"invalidNames,omitempty"`
	Complete     bool     `json:"complete"`
	Watermark    string   `json:"watermark,omitempty"`
	// Findings are about entries skipped while reading pages: the first
	// finding.MaxPerDocument of them (a page of 32 MiB can skip millions),
	// and how many more there were.
	Findings     finding.List `json:"findings,omitempty"`
	FindingsMore int          `json:"findingsMore,omitempty"`
}

// addFindings keeps what a page or dump says of the entries it skipped,
// as far as Findings' bound.
func (r *SyncResult) addFindings(fl finding.List, prefix string) {
	for _, f := range fl {
		if len(r.Findings) == finding.MaxPerDocument {
			r.FindingsMore++
			continue
		}
		f.Message = prefix + f.Message
		r.Findings = append(r.Findings, f)
	}
}

// Sync mirrors one registry into the store: a full sweep the first time (or
// with Full), afterwards a delta from the watermark. Each page is written
// with the cursor that follows it in one transaction, so a sync interrupted
// at any point resumes where it stopped, without losing or duplicating
// entries. On error the result still describes what was stored.
func Sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	if opts.Client == nil || opts.Store == nil {
		return SyncResult{}, errors.New("sync: client and store are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxPages <= 0 {
		opts.MaxPages = 10000
	}
	if opts.Workers <= 0 {
		opts.Workers = min(runtime.GOMAXPROCS(0), 8)
	}
	if opts.SafetyMargin == 0 {
		opts.SafetyMargin = 5 * time.Minute
	}
	if opts.Validator == nil {
		v, err := NewValidator()
		if err != nil {
			return SyncResult{}, err
		}
		opts.Validator = v
	}
	source := opts.Client.BaseURL()
	st, err := opts.Store.RegistrySyncState(ctx, source)
	if err != nil {
		return SyncResult{}, fmt.Errorf("sync %s: %w", source, err)
	}
	// The store keeps times in its fixed-width form; the Registry is asked,
	// and the report told, in the Registry's own (RFC3339Nano).
	st.Watermark, st.SweepSince, st.SweepStartedAt = restamp(st.Watermark), restamp(st.SweepSince), restamp(st.SweepStartedAt)
	res := SyncResult{Source: source}
	if opts.Full {
		// A forced full sweep never resumes: it is also the way out of a
		// sweep whose stored cursor leads nowhere.
		st.SweepKind = ""
	}
	if st.SweepKind == "" {
		st.SweepKind, st.SweepSince = "delta", st.Watermark
		if opts.Full || st.Watermark == "" {
			st.SweepKind, st.SweepSince = "full", ""
		}
		st.SweepStartedAt, st.Cursor, st.Pages, st.Entries = "", "", 0, 0
	} else {
		res.Resumed = true
	}
	res.Kind, res.Since = st.SweepKind, st.SweepSince
	log := opts.Logger.With("source", source, "kind", st.SweepKind)
	log.Info("registry sync start", "since", st.SweepSince, "resume_cursor", st.Cursor)

	fail := func(err error) (SyncResult, error) {
		st.LastError = err.Error()
		if serr := opts.Store.SaveRegistrySyncState(context.WithoutCancel(ctx), st); serr != nil {
			log.Error("save sync state", "err", serr)
		}
		return res, fmt.Errorf("sync %s: %w", source, err)
	}
	// A pipeline: the fetcher reads only each page's envelope (enough for
	// the next cursor) and sends the next request at once; Workers parse
	// and validate pages in parallel; this loop writes them in page order.
	// Still one request at a time: the fetcher is the client's only user.
	fctx, cancel := context.WithCancel(ctx)
	pages := make(chan chan fetched, opts.Workers+1)
	go fetchPages(fctx, opts, st, pages)
	defer func() {
		cancel()
		for range pages {
		}
	}()
	seen := map[string]bool{}
	if st.Cursor != "" {
		seen[st.Cursor] = true
	}
	// interrupted ends a sweep the caller cancelled (Ctrl-C). Every page
	// written so far carries its cursor, so resuming loses nothing.
	interrupted := func() (SyncResult, error) {
		return fail(fmt.Errorf("interrupted after %d pages: %w; progress is kept and the next sync resumes", res.Pages, ctx.Err()))
	}
	for pc := range pages {
		f := <-pc
		if f.err != nil {
			if ctx.Err() != nil {
				return interrupted()
			}
			if errors.Is(f.err, ErrPageCap) {
				return fail(fmt.Errorf("%w; progress is kept and the next sync resumes", f.err))
			}
			page := st.Pages + 1
			var se *StatusError
			switch {
			case errors.As(f.err, &se) && se.Status >= 400 && se.Status < 500 && se.Status != 429 && st.Cursor != "":
				// The registry refuses the stored cursor (expired, or
				// changed format): resuming would fail the same way
				// forever, so the sweep is abandoned. Entries stored so
				// far stay; re-reading them is harmless.
				cursor := st.Cursor
				st.SweepKind, st.SweepSince, st.SweepStartedAt, st.Cursor = "", "", "", ""
				return fail(fmt.Errorf("page %d: %w; the registry rejected the stored cursor %q, so it is dropped and the next sync starts over", page, f.err, cursor))
			case Transient(f.err):
				return fail(fmt.Errorf("page %d: %w; a temporary failure (%s): progress is kept and the next sync resumes from page %d", page, f.err, ErrorClass(f.err), page))
			case st.Pages == 0 && st.Cursor == "":
				return fail(fmt.Errorf("page %d: %w; not a temporary failure%s, so syncing again will fail the same way until it is fixed", page, f.err, classNote(f.err)))
			default:
				return fail(fmt.Errorf("page %d: %w; not a temporary failure%s: the pages before it are kept, but the next sync stops here again unless the registry changes ('--full' starts over)", page, f.err, classNote(f.err)))
			}
		}
		resp, entries, invalid := f.resp, f.rows, len(f.invalid)
		prev := st // what is stored if this page's write fails
		if st.SweepStartedAt == "" {
			started := resp.Date
			if started.IsZero() {
				started = opts.Now()
			}
			st.SweepStartedAt = stamp(started)
		}
		res.addFindings(resp.Findings, resp.URL+": ")
		next := resp.NextCursor
		repeat := next != "" && seen[next]
		st.Pages++
		st.Entries += len(entries)
		switch {
		case repeat:
			// Abandon the sweep: resuming from a looping cursor would loop
			// again. The watermark stays, so nothing is skipped next time.
			st.SweepKind, st.SweepSince, st.SweepStartedAt, st.Cursor = "", "", "", ""
			st.LastError = fmt.Sprintf("%v: %q", ErrCursorRepeat, next)
		case next == "":
			started, _ := time.Parse(time.RFC3339Nano, st.SweepStartedAt)
			st.Watermark = stamp(started.Add(-opts.SafetyMargin))
			st.LastDoneAt = stamp(opts.Now())
			if st.SweepKind == "full" {
				st.LastFullAt = st.LastDoneAt
			}
			st.SweepKind, st.SweepSince, st.SweepStartedAt, st.Cursor = "", "", "", ""
			st.LastError = ""
		default:
			st.Cursor = next
		}
		// A page in hand is committed even if Ctrl-C lands meanwhile: the
		// transaction is short, and the loop stops right after it.
		if err := opts.Store.WriteRegistry(context.WithoutCancel(ctx), store.RegistryWrite{Source: source, Entries: entries, State: &st, PickLatest: PickLatest}); err != nil {
			st = prev
			return fail(fmt.Errorf("page %d: store: %w; the pages before it are kept and the next sync resumes", prev.Pages+1, err))
		}
		res.Pages++
		res.Entries += len(entries)
		res.Invalid += invalid
		res.noteInvalid(f.invalid)
		if opts.Progress != nil {
			opts.Progress(res.Pages, res.Entries)
		}
		if repeat {
			return res, fmt.Errorf("sync %s: %w %q after %d pages; stored entries are kept", source, ErrCursorRepeat, next, res.Pages)
		}
		if next == "" {
			res.Complete = true
			res.Watermark = st.Watermark
			log.Info("registry sync done", "pages", res.Pages, "entries", res.Entries, "invalid", res.Invalid, "watermark", st.Watermark)
			return res, nil
		}
		seen[next] = true
		if ctx.Err() != nil {
			return interrupted()
		}
	}
	// The fetcher closes the channel early without an error only when ctx
	// ended: its send gave up on ctx.Done rather than block.
	if ctx.Err() != nil {
		return interrupted()
	}
	return fail(errors.New("page fetcher stopped unexpectedly"))
}

// classNote names err's failure class for a message, when it has one.
func classNote(err error) string {
	if c := ErrorClass(err); c != failure.None {
		return " (" + string(c) + ")"
	}
	return ""
}

type fetched struct {
	resp    *Response
	rows    []store.RegistryEntry
	invalid []string // name@version of entries with error findings
	err     error
}

type parseJob struct {
	raw *rawResponse
	out chan<- fetched // buffered: the worker never blocks on it
}

// fetchPages follows the cursor from st. For each page it sends out, in
// page order, a channel that will carry the parsed page (or the error that
// stopped the sweep), and hands the page to a parse worker. It stops after
// the last page, before a repeated cursor, at the page cap, or when ctx
// ends; the workers are done before out is closed.
func fetchPages(ctx context.Context, opts SyncOptions, st store.RegistrySyncState, out chan<- chan fetched) {
	jobs := make(chan parseJob)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for j := range jobs {
				resp := j.raw.parse()
				rows, invalid := toRows(resp.Entries, opts.Validator)
				j.out <- fetched{resp: resp, rows: rows, invalid: invalid}
			}
		})
	}
	defer close(out)
	defer wg.Wait()
	defer close(jobs)
	sendErr := func(err error) {
		pc := make(chan fetched, 1)
		pc <- fetched{err: err}
		select {
		case out <- pc:
		case <-ctx.Done():
		}
	}
	cursor := st.Cursor
	seen := map[string]bool{cursor: true}
	for pages := 0; ; pages++ {
		if pages >= opts.MaxPages {
			sendErr(fmt.Errorf("%w (%d pages)", ErrPageCap, opts.MaxPages))
			return
		}
		raw, err := opts.Client.listRaw(ctx, ListQuery{Cursor: cursor, UpdatedSince: st.SweepSince, IncludeDeleted: true})
		if err != nil {
			sendErr(err)
			return
		}
		pc := make(chan fetched, 1)
		select {
		case jobs <- parseJob{raw: raw, out: pc}:
		case <-ctx.Done():
			return
		}
		select {
		case out <- pc:
		case <-ctx.Done():
			return
		}
		next := raw.nextCursor
		if next == "" || seen[next] {
			return
		}
		seen[next] = true
		cursor = next
	}
}

// ImportOptions configure ImportDump.
type ImportOptions struct {
	Store Store
	// Source is the registry the dump stands in for (default DefaultBaseURL).
	Source    string
	Validator *Validator
	// BatchSize is the number of entries per transaction (default 1000).
	BatchSize int
	Logger    *slog.Logger
}

// ImportDump stores an offline dump (see ParseDump). It leaves the sync
// watermark alone: a dump says nothing about when it was taken. A body that
// is not a dump stores nothing.
func ImportDump(ctx context.Context, opts ImportOptions, body []byte) (SyncResult, error) {
	if opts.Source == "" {
		opts.Source = DefaultBaseURL
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1000
	}
	res := SyncResult{Source: opts.Source, Kind: "file"}
	entries, fl, err := ParseDump(body)
	if err != nil {
		return res, err
	}
	res.addFindings(fl, "")
	if opts.Validator == nil {
		if opts.Validator, err = NewValidator(); err != nil {
			return res, err
		}
	}
	rows, invalid := toRows(entries, opts.Validator)
	res.noteInvalid(invalid)
	for start := 0; start < len(rows); start += opts.BatchSize {
		batch := rows[start:min(start+opts.BatchSize, len(rows))]
		if err := opts.Store.WriteRegistry(ctx, store.RegistryWrite{Source: opts.Source, Entries: batch, PickLatest: PickLatest}); err != nil {
			return res, fmt.Errorf("import dump: %w", err)
		}
		res.Entries += len(batch)
	}
	res.Invalid = len(invalid)
	res.Complete = true
	return res, nil
}

// restamp rewrites a stored RFC 3339 time as stamp would ("" stays "").
func restamp(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return stamp(t)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// MaxInvalidNames caps SyncResult.InvalidNames.
const MaxInvalidNames = 10

func (r *SyncResult) noteInvalid(names []string) {
	for _, n := range names {
		if len(r.InvalidNames) >= MaxInvalidNames {
			return
		}
		r.InvalidNames = append(r.InvalidNames, n)
	}
}

// toRows turns parsed entries into store rows, validating each; it also
// names the entries with error findings.
func toRows(entries []Entry, v *Validator) ([]store.RegistryEntry, []string) {
	rows := make([]store.RegistryEntry, 0, len(entries))
	var invalid []string
	for _, e := range entries {
		fl := append(slices.Clone(e.Findings), v.Validate(e.Raw)...)
		if fl.HasError() {
			invalid = append(invalid, e.Server.Name+"@"+e.Server.Version)
		}
		r := store.RegistryEntry{
			Name:       e.Server.Name,
			Version:    e.Server.Version,
			Schema:     e.Server.Schema,
			ServerJSON: string(e.Raw),
			Meta:       string(e.Meta),
			Findings:   fl,
			JudgedBy:   RulesVersion,
		}
		if o := e.Official; o != nil {
			r.Status = o.Status
			r.StatusMessage = o.StatusMessage
			r.StatusChangedAt = stamp(o.StatusChangedAt)
			r.PublishedAt = stamp(o.PublishedAt)
			r.UpdatedAt = stamp(o.UpdatedAt)
			r.ReportedLatest = o.IsLatest
		}
		rows = append(rows, r)
	}
	return rows, invalid
}

package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Domain states and outcomes, as stored.
const (
	StatePending = "pending"
	StateDone    = "done"

	OutcomeCatalog   = "catalog"
	OutcomeNoCatalog = "no_catalog"
	OutcomeFailed    = "failed"
)

// Observation is one fetch attempt, successful or not. Observations are
// append-only: they are the crawl's history.
type Observation struct {
	RunID        int64
	Domain       string
	Kind         string // catalog, card, home_page, legacy
	URL          string
	FetchedAt    time.Time
	Status       int
	Class        string
	Reason       string
	ContentType  string
	ETag         string
	LastModified string
	MaxAge       *int
	SHA256       string
	Size         int64
	Duration     time.Duration
	FinalURL     string
	Redirects    []string
	NotModified  bool
}

// Run statuses.
const (
	RunRunning     = "running"
	RunDone        = "done"
	RunInterrupted = "interrupted"
	RunFailed      = "failed"
	// RunAbandoned is a run whose process died without saying how it ended
	// (kill -9, a crash, a power cut); its work resumes like any other.
	RunAbandoned = "abandoned"
)

// RunStart describes a run as it starts.
type RunStart struct {
	Options any
	// Host and PID name the process, so a later run on the same host can
	// tell whether it is still alive.
	Host string
	PID  int
}

// StartRun records the start of a crawl run and returns its id.
func (db *DB) StartRun(ctx context.Context, r RunStart) (int64, error) {
	opts, err := json.Marshal(r.Options)
	if err != nil {
		return 0, fmt.Errorf("encode run options: %w", err)
	}
	var id int64
	err = db.sql.QueryRowContext(ctx,
		`INSERT INTO runs (started_at, status, options, host, pid) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		db.Now(), RunRunning, string(opts), r.Host, r.PID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("start run: %w", err)
	}
	return id, nil
}

// AbandonDeadRuns marks as abandoned the runs still "running" that were
// started on host by a process alive says is gone. Runs of other hosts are
// left alone: their processes cannot be checked from here.
func (db *DB) AbandonDeadRuns(ctx context.Context, host string, alive func(pid int) bool) (int, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, pid FROM runs WHERE status = ? AND host = ?`, RunRunning, host)
	if err != nil {
		return 0, fmt.Errorf("running runs: %w", err)
	}
	var dead []int64
	for rows.Next() {
		var id int64
		var pid int
		if err := rows.Scan(&id, &pid); err != nil {
			rows.Close()
			return 0, fmt.Errorf("running runs: %w", err)
		}
		if !alive(pid) {
			dead = append(dead, id)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("running runs: %w", err)
	}
	for _, id := range dead {
		if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ? AND status = ?`,
			RunAbandoned, id, RunRunning); err != nil {
			return 0, fmt.Errorf("abandon run %d: %w", id, err)
		}
	}
	return len(dead), nil
}

// FinishRun records how a run ended. It uses a fresh context so a cancelled
// run can still say it was interrupted.
func (db *DB) FinishRun(id int64, status string, summary any) error {
	sum, err := json.Marshal(summary)
	if err != nil {
		return fmt.Errorf("encode run summary: %w", err)
	}
	_, err = db.sql.ExecContext(context.Background(),
		`UPDATE runs SET finished_at = ?, status = ?, summary = ? WHERE id = ?`,
		db.Now(), status, string(sum), id)
	if err != nil {
		return fmt.Errorf("finish run: %w", err)
	}
	return nil
}

// EnqueueOptions control which domains a run takes on.
type EnqueueOptions struct {
	// RunID is the run taking the domains on. A name it already took on
	// earlier (an input listing it twice) is counted as a duplicate, so the
	// caller need not remember every name it has seen.
	RunID int64
	// Force makes every named domain due, whatever its freshness.
	Force bool
}

// Enqueued is what Enqueue made of one batch of names.
type Enqueued struct {
	Due        []string // to crawl now, in the order given
	Fresh      int      // skipped: the last result is still fresh
	Duplicates int      // already taken on by this run
}

// Enqueue adds new domains as pending and marks known ones pending when they
// are due (next_fetch_after has passed) or when forced. Domains left pending
// by an interrupted run stay pending. Callers hand over the input in
// batches (one transaction each), so a list of any length streams through.
func (db *DB) Enqueue(ctx context.Context, domains []string, opts EnqueueOptions) (Enqueued, error) {
	var out Enqueued
	err := db.retryTx(ctx, func() (err error) {
		out, err = db.enqueue(ctx, domains, opts)
		return err
	})
	return out, err
}

func (db *DB) enqueue(ctx context.Context, domains []string, opts EnqueueOptions) (Enqueued, error) {
	var out Enqueued
	now := db.now().UTC()
	var run any
	if opts.RunID != 0 {
		run = opts.RunID
	}
	// Each name is one upsert, never read-then-insert, so two writers
	// taking on the same name cannot both insert it: a new name is inserted
	// pending; a known one, unless this run already took it on, becomes
	// pending when due (or forced) and keeps its state when fresh.
	err := db.inTx(ctx, func(tx *txw) error {
		out = Enqueued{}
		for _, d := range domains {
			var name string
			err := tx.queryRow(`INSERT INTO domains (domain, added_at, state, queued_run_id)
				VALUES (?, ?, ?, ?) ON CONFLICT (domain) DO NOTHING RETURNING domain`,
				d, ts(now), StatePending, run).Scan(&name)
			if err == nil {
				out.Due = append(out.Due, d)
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("enqueue %s: %w", d, err)
			}
			var state string
			err = tx.queryRow(`UPDATE domains SET queued_run_id = ?,
				  state = CASE WHEN state <> ? AND ? = 0 AND next_fetch_after IS NOT NULL AND next_fetch_after > ?
				               THEN state ELSE ? END
				WHERE domain = ? AND (? = 0 OR queued_run_id IS NULL OR queued_run_id <> ?)
				RETURNING state`, run, StatePending, opts.Force, ts(now), StatePending, d,
				opts.RunID, opts.RunID).Scan(&state)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				out.Duplicates++ // this run took it on already
			case err != nil:
				return fmt.Errorf("enqueue %s: %w", d, err)
			case state == StatePending:
				out.Due = append(out.Due, d)
			default:
				out.Fresh++
			}
		}
		return nil
	})
	if err != nil {
		return Enqueued{}, fmt.Errorf("enqueue: %w", err)
	}
	return out, nil
}

// RunTotals counts the distinct cards and remote endpoints that the domains
// a run crawled list now, for its summary; counting in SQL keeps the crawl
// from holding every card and remote it saw.
func (db *DB) RunTotals(ctx context.Context, runID int64) (cards, remotes int, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT COUNT(DISTINCT l.card_key), COUNT(DISTINCT NULLIF(l.remote_norm, ''))
		FROM listings l JOIN domains d ON d.domain = l.domain
		WHERE d.last_run_id = ? AND l.active = TRUE`, runID).Scan(&cards, &remotes)
	if err != nil {
		return 0, 0, fmt.Errorf("count what run %d found: %w", runID, err)
	}
	return cards, remotes, nil
}

// Fetched is one fetch attempt and the body it brought (nil when it brought
// none to store: a failure, or a 304 confirming a stored body).
type Fetched struct {
	Observation
	Body []byte
}

// AddObservations appends fetch attempts in one write, each body stored
// once under its hash. A crawl writes a domain's fetches with its result
// (DomainResult.Fetches); this is for those that cannot wait for it.
func (db *DB) AddObservations(ctx context.Context, fs ...Fetched) error {
	if len(fs) == 0 {
		return nil
	}
	return db.write(func(tx *txw) error { return addObservations(tx, fs) })
}

// addObservations writes fetch attempts in the caller's transaction.
func addObservations(tx *txw, fs []Fetched) error {
	for i := range fs {
		o := &fs[i].Observation
		redirects := "[]"
		if len(o.Redirects) > 0 {
			b, err := json.Marshal(o.Redirects)
			if err != nil {
				return fmt.Errorf("encode redirects: %w", err)
			}
			redirects = string(b)
		}
		var maxAge any
		if o.MaxAge != nil {
			maxAge = *o.MaxAge
		}
		fetchedAt := ts(o.FetchedAt)
		if body := fs[i].Body; body != nil && o.SHA256 != "" {
			if err := addDocument(tx, o.SHA256, o.ContentType, body, fetchedAt); err != nil {
				return err
			}
		}
		if _, err := tx.exec(`INSERT INTO observations
		(run_id, domain, kind, url, fetched_at, status, class, reason, content_type, etag, last_modified,
		 max_age, sha256, size, duration_ms, final_url, redirects, not_modified)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			o.RunID, o.Domain, o.Kind, o.URL, fetchedAt, o.Status, o.Class, o.Reason, o.ContentType,
			o.ETag, o.LastModified, maxAge, o.SHA256, o.Size, o.Duration.Milliseconds(), o.FinalURL,
			redirects, o.NotModified); err != nil {
			return fmt.Errorf("add observation: %w", err)
		}
	}
	return nil
}

// Body is a document's bytes by their hash, with the media type it came as.
type Body struct {
	SHA256      string
	ContentType string
	Data        []byte
}

// addDocument keeps a body by its hash; a body already kept stays as it is.
func addDocument(tx *txw, sha256, contentType string, body []byte, at string) error {
	if _, err := tx.exec(`INSERT INTO documents (sha256, size, content_type, body, first_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (sha256) DO NOTHING`, sha256, len(body), contentType, body, at); err != nil {
		return fmt.Errorf("store document: %w", err)
	}
	return nil
}

// Validators are what a conditional GET needs from the last good fetch of a URL.
type Validators struct {
	ETag         string
	LastModified string
	SHA256       string // the body those validators describe
	FinalURL     string
}

const lastValidatorsQuery = `SELECT etag, last_modified, sha256, final_url FROM observations
	WHERE url = ? AND sha256 <> '' ORDER BY id DESC LIMIT 1`

// LastValidators returns the validators of the most recent fetch of url that
// produced a body (a 200), or ok=false when there is none.
func (db *DB) LastValidators(ctx context.Context, url string) (v Validators, ok bool, err error) {
	err = db.readRow(ctx, func(row *sql.Row) error {
		return row.Scan(&v.ETag, &v.LastModified, &v.SHA256, &v.FinalURL)
	}, lastValidatorsQuery, url)
	if errors.Is(err, sql.ErrNoRows) {
		return Validators{}, false, nil
	}
	if err != nil {
		return Validators{}, false, fmt.Errorf("last validators for %s: %w", url, err)
	}
	return v, true, nil
}

// LastFetch is what the most recent fetch of a URL found.
type LastFetch struct {
	FetchedAt time.Time
	Status    int
	Class     string
	SHA256    string // the body it brought or confirmed; '' when none
}

const lastFetchQuery = `SELECT fetched_at, status, class, sha256 FROM observations
	WHERE url = ? ORDER BY id DESC LIMIT 1`

// LastFetch returns the most recent fetch of url, or ok=false when it was
// never fetched.
func (db *DB) LastFetch(ctx context.Context, url string) (f LastFetch, ok bool, err error) {
	var at string
	err = db.readRow(ctx, func(row *sql.Row) error {
		return row.Scan(&at, &f.Status, &f.Class, &f.SHA256)
	}, lastFetchQuery, url)
	if errors.Is(err, sql.ErrNoRows) {
		return LastFetch{}, false, nil
	}
	if err == nil {
		f.FetchedAt, err = time.Parse(time.RFC3339Nano, at)
	}
	if err != nil {
		return LastFetch{}, false, fmt.Errorf("last fetch of %s: %w", url, err)
	}
	return f, true, nil
}

// Document returns a stored body by its hash.
func (db *DB) Document(ctx context.Context, sha256 string) ([]byte, error) {
	var body []byte
	err := db.queryRow(ctx, `SELECT body FROM documents WHERE sha256 = ?`, sha256).Scan(&body)
	if err != nil {
		return nil, fmt.Errorf("document %s: %w", sha256, err)
	}
	return body, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

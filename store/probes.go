package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// ProbeRow is one stored probe.
type ProbeRow struct {
	RemoteNorm    string
	URL           string
	ProbedAt      string
	Outcome       string
	Transport     string
	Protocol      string
	ServerName    string
	ServerVersion string
	ToolCount     *int
	CardSHA256    string
	Result        string // the probe's full JSON record
	// Partial: the handshake worked but a later step failed (read from Result).
	Partial bool
}

// ProbeDecision is a recorded decision to probe a remote or not, and why.
type ProbeDecision struct {
	RunID      int64
	RemoteNorm string
	URL        string
	Decision   string // probe, skip
	Reason     string
	// DeclaredBy says who declared the endpoint: "card:" and the card key,
	// or "registry:" and name@version.
	DeclaredBy string
	// Repeated is set by SaveDomain: the run had already decided the
	// endpoint, so this decision was not written (one an endpoint a run).
	Repeated bool
}

// AddProbeDecision appends decisions, in one transaction.
func (db *DB) AddProbeDecision(ctx context.Context, ds ...ProbeDecision) error {
	if len(ds) == 0 {
		return nil
	}
	now := db.Now()
	err := db.write(func(tx *txw) error {
		f := newFeedTx(tx, now)
		for _, d := range ds {
			if err := insertDecision(tx, now, d); err != nil {
				return err
			}
			if err := feedAfterDecision(f, d); err != nil {
				return fmt.Errorf("decision for %s: %w", d.URL, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add probe decisions: %w", err)
	}
	return nil
}

// insertDecisionInto is the INSERT of a decision's columns, in the order
// decisionValues gives them.
const insertDecisionInto = `INSERT INTO probe_decisions (run_id, remote_norm, url, decided_at, decision, reason, declared_by)`

func decisionValues(now string, d ProbeDecision) []any {
	return []any{d.RunID, d.RemoteNorm, d.URL, now, d.Decision, d.Reason, d.DeclaredBy}
}

// decidedInRun selects the decisions of a run (first argument) about an
// endpoint (second).
const decidedInRun = `SELECT 1 FROM probe_decisions WHERE run_id = ? AND remote_norm = ?`

func insertDecision(tx *txw, now string, d ProbeDecision) error {
	_, err := tx.exec(insertDecisionInto+` VALUES (?, ?, ?, ?, ?, ?, ?)`, decisionValues(now, d)...)
	if err != nil {
		return fmt.Errorf("decision for %s: %w", d.URL, err)
	}
	return nil
}

// insertDecisionOnce writes d unless its run already decided the endpoint,
// and reports whether it had. Checked by the INSERT itself, so a decision
// written with a domain's result needs no look-up of its own first: that
// look-up, one an endpoint, each waiting its turn in a shared commit, cost
// ~2 % of a crawl's CPU at 64 in flight under --probe never. The CAST
// gives PostgreSQL the column's type for a parameter a SELECT list leaves
// untyped.
func insertDecisionOnce(tx *txw, now string, d ProbeDecision) (repeated bool, err error) {
	res, err := tx.exec(insertDecisionInto+` SELECT CAST(? AS BIGINT), ?, ?, ?, ?, ?, ?
		WHERE NOT EXISTS (`+decidedInRun+`)`, append(decisionValues(now, d), d.RunID, d.RemoteNorm)...)
	if err != nil {
		return false, fmt.Errorf("decision for %s: %w", d.URL, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("decision for %s: %w", d.URL, err)
	}
	return n == 0, nil
}

// addProbeOutcome counts a new probe in its endpoint's brief history
// (probe_outcomes, migration 0033). A probe's time is the prober's, so
// the first and last times are compared rather than assumed in id order.
const addProbeOutcome = `INSERT INTO probe_outcomes (remote_norm, outcome, probe_count, first_at, last_at, last_id)
	VALUES (?, ?, 1, ?, ?, ?) ON CONFLICT (remote_norm, outcome) DO UPDATE SET
	probe_count = probe_outcomes.probe_count + 1,
	first_at = CASE WHEN excluded.first_at < probe_outcomes.first_at THEN excluded.first_at ELSE probe_outcomes.first_at END,
	last_at = CASE WHEN excluded.last_at > probe_outcomes.last_at THEN excluded.last_at ELSE probe_outcomes.last_at END,
	last_id = CASE WHEN excluded.last_id > probe_outcomes.last_id THEN excluded.last_id ELSE probe_outcomes.last_id END`

// latestProbeIDs is each probed endpoint's latest probe id, from its brief
// history: a row per outcome, not per probe.
const latestProbeIDs = `SELECT remote_norm, MAX(last_id) AS id FROM probe_outcomes GROUP BY remote_norm`

// AddProbe appends a probe result.
func (db *DB) AddProbe(ctx context.Context, runID int64, p ProbeRow) error {
	var tools sql.NullInt64
	if p.ToolCount != nil {
		tools = sql.NullInt64{Int64: int64(*p.ToolCount), Valid: true}
	}
	probedAt := db.Now()
	if t, err := time.Parse(time.RFC3339Nano, p.ProbedAt); err == nil {
		probedAt = ts(t)
	}
	now := db.Now()
	return db.write(func(tx *txw) error {
		var id int64
		err := tx.queryRow(`INSERT INTO probes (run_id, remote_norm, url, probed_at, outcome, transport, protocol,
		server_name, server_version, tool_count, card_sha256, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
			runID, p.RemoteNorm, p.URL, probedAt, p.Outcome, p.Transport, p.Protocol, p.ServerName, p.ServerVersion,
			tools, p.CardSHA256, p.Result).Scan(&id)
		if err == nil {
			_, err = tx.exec(addProbeOutcome, p.RemoteNorm, p.Outcome, probedAt, probedAt, id)
		}
		if err != nil {
			return fmt.Errorf("add probe for %s: %w", p.URL, err)
		}
		if err := feedAfterProbe(tx, now, p.RemoteNorm); err != nil {
			return err
		}
		return afterProbeMeaning(tx, now, p, tools)
	})
}

// LastProbe returns when remoteNorm was last probed and against which card
// version, or ok=false when never.
func (db *DB) LastProbe(ctx context.Context, remoteNorm string) (at time.Time, cardSHA string, ok bool, err error) {
	var when string
	err = db.sql.QueryRowContext(ctx, `SELECT probed_at, card_sha256 FROM probes WHERE remote_norm = ? ORDER BY id DESC LIMIT 1`,
		remoteNorm).Scan(&when, &cardSHA)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, "", false, nil
	}
	if err != nil {
		return time.Time{}, "", false, fmt.Errorf("last probe of %s: %w", remoteNorm, err)
	}
	at, err = time.Parse(time.RFC3339Nano, when)
	if err != nil {
		return time.Time{}, "", false, fmt.Errorf("last probe of %s: bad time %q: %w", remoteNorm, when, err)
	}
	return at, cardSHA, true, nil
}

// Probes returns the latest probe of every endpoint, in URL order.
func (db *DB) Probes(ctx context.Context) ([]ProbeRow, error) {
	m, err := db.latestProbes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ProbeRow, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RemoteNorm < out[j].RemoteNorm })
	return out, nil
}

func (db *DB) latestProbes(ctx context.Context) (map[string]ProbeRow, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT p.remote_norm, p.url, p.probed_at, p.outcome, p.transport, p.protocol,
		p.server_name, p.server_version, p.tool_count, p.card_sha256, p.result
		FROM probes p JOIN (`+latestProbeIDs+`) last ON last.id = p.id`)
	if err != nil {
		return nil, fmt.Errorf("latest probes: %w", err)
	}
	defer rows.Close()
	out := map[string]ProbeRow{}
	for rows.Next() {
		var p ProbeRow
		var tools sql.NullInt64
		if err := rows.Scan(&p.RemoteNorm, &p.URL, &p.ProbedAt, &p.Outcome, &p.Transport, &p.Protocol, &p.ServerName,
			&p.ServerVersion, &tools, &p.CardSHA256, &p.Result); err != nil {
			return nil, fmt.Errorf("latest probes: %w", err)
		}
		if tools.Valid {
			n := int(tools.Int64)
			p.ToolCount = &n
		}
		var flags struct {
			Partial bool `json:"partial"`
		}
		_ = json.Unmarshal([]byte(p.Result), &flags) // a record without the field is not partial
		p.Partial = flags.Partial
		out[p.RemoteNorm] = p
	}
	return out, rows.Err()
}

func (db *DB) latestDecisions(ctx context.Context) (map[string]ProbeDecision, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT d.run_id, d.remote_norm, d.url, d.decision, d.reason
		FROM probe_decisions d JOIN (SELECT remote_norm, MAX(id) AS id FROM probe_decisions GROUP BY remote_norm) last
		ON last.id = d.id`)
	if err != nil {
		return nil, fmt.Errorf("latest probe decisions: %w", err)
	}
	defer rows.Close()
	out := map[string]ProbeDecision{}
	for rows.Next() {
		var d ProbeDecision
		var run sql.NullInt64
		if err := rows.Scan(&run, &d.RemoteNorm, &d.URL, &d.Decision, &d.Reason); err != nil {
			return nil, fmt.Errorf("latest probe decisions: %w", err)
		}
		d.RunID = run.Int64
		out[d.RemoteNorm] = d
	}
	return out, rows.Err()
}

// DecidedInRun reports whether run already recorded a decision about the
// endpoint, so a remote several domains list is decided once per run.
func (db *DB) DecidedInRun(ctx context.Context, runID int64, remoteNorm string) (bool, error) {
	var one int
	err := db.readRow(ctx, func(row *sql.Row) error { return row.Scan(&one) },
		decidedInRun+` LIMIT 1`, runID, remoteNorm)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("decisions about %s: %w", remoteNorm, err)
	}
	return true, nil
}

// StillDeclared reports whether a card with hash cardSHA declares the
// endpoint now (an active listing reaches it from such a card): the card a
// probe was made against has not changed, whichever domain lists it.
func (db *DB) StillDeclared(ctx context.Context, remoteNorm, cardSHA string) (bool, error) {
	var one int
	// A Registry entry declaring it is as good as a card: the probe
	// remembers the hash of whichever document it followed.
	err := db.sql.QueryRowContext(ctx, `SELECT 1 FROM listings l JOIN cards c ON c.key = l.card_key
		WHERE l.remote_norm = ? AND l.active = TRUE AND c.sha256 = ?
		UNION ALL SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = ? AND rr.entry_sha256 = ? LIMIT 1`,
		remoteNorm, cardSHA, remoteNorm, cardSHA).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cards declaring %s: %w", remoteNorm, err)
	}
	return true, nil
}

// PendingRemote is one declaration of a remote whose probe step never
// finished: no decision was recorded about it since its domain's last
// crawl (the run stopped between saving the domain and deciding), or its
// latest decision was to probe and that run stored no probe of it. It
// carries only what a probe needs: never the card itself, which may be
// large and is shared by many remotes.
type PendingRemote struct {
	Norm        string
	RemoteJSON  string // the remote object as declared
	CardKey     string
	CardSHA256  string
	CardName    string
	CardVersion string
}

// pendingPage is how many rows one PendingProbes query reads.
const pendingPage = 500

// pendingRemote is the SQL condition "remote l.remote_norm of domain d is
// pending" (see PendingRemote).
const pendingRemote = `(NOT EXISTS (SELECT 1 FROM probe_decisions pd
		WHERE pd.remote_norm = l.remote_norm AND pd.run_id >= d.last_run_id)
	OR EXISTS (SELECT 1 FROM probe_decisions pd
		WHERE pd.remote_norm = l.remote_norm AND pd.decision = 'probe'
		  AND pd.id = (SELECT MAX(d2.id) FROM probe_decisions d2 WHERE d2.remote_norm = l.remote_norm)
		  AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.remote_norm = l.remote_norm AND p.run_id = pd.run_id)))`

// PendingProbes calls fn for each pending remote domain lists, ordered by
// normalised URL and card key: one row per (remote, declaring card). It
// reads a page at a time (keyset on those two columns), so a domain with
// thousands of remotes costs one page of small rows at a time.
func (db *DB) PendingProbes(ctx context.Context, domain string, fn func(PendingRemote) error) error {
	type key struct{ norm, card string }
	return eachPage(pendingPage, func(after key) ([]PendingRemote, error) {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (PendingRemote, error) {
			var p PendingRemote
			err := rows.Scan(&p.Norm, &p.RemoteJSON, &p.CardKey, &p.CardSHA256, &p.CardName, &p.CardVersion)
			return p, err
		}, `SELECT DISTINCT r.url_norm, r.json, c.key, c.sha256, c.name, c.version
		FROM domains d
		JOIN listings l ON l.domain = d.domain AND l.active = TRUE
		JOIN remotes r ON r.url_norm = l.remote_norm
		JOIN cards c ON c.key = l.card_key
		WHERE d.domain = ? AND (l.remote_norm, l.card_key) > (?, ?)
		  AND `+pendingRemote+`
		ORDER BY r.url_norm, c.key LIMIT ?`, domain, after.norm, after.card, pendingPage)
		if err != nil {
			return nil, fmt.Errorf("pending probes of %s: %w", domain, err)
		}
		return page, nil
	}, func(p PendingRemote) key { return key{p.Norm, p.CardKey} }, fn)
}

// UnsettledRuns lists, oldest first, the runs that stopped without
// finishing (interrupted, failed, abandoned) and whose leftovers no later
// run has finished yet. A run that finished ("done") decided about every
// remote of every domain it saved; one still running is its own business.
func (db *DB) UnsettledRuns(ctx context.Context) ([]int64, error) {
	ids, err := collect(ctx, db.sql, func(rows *sql.Rows) (int64, error) {
		var id int64
		err := rows.Scan(&id)
		return id, err
	}, `SELECT id FROM runs WHERE status NOT IN (?, ?) AND settled = FALSE ORDER BY id`, RunRunning, RunDone)
	if err != nil {
		return nil, fmt.Errorf("stopped runs: %w", err)
	}
	return ids, nil
}

// SettleRun records that a stopped run's leftovers are finished.
func (db *DB) SettleRun(ctx context.Context, runID int64) error {
	if _, err := db.sql.ExecContext(ctx, `UPDATE runs SET settled = TRUE WHERE id = ?`, runID); err != nil {
		return fmt.Errorf("settle run %d: %w", runID, err)
	}
	return nil
}

// PendingProbeDomains calls fn, in name order and a page at a time, for
// each domain whose last crawl was by the stopped run runID and that lists
// a pending remote (see PendingRemote): a run finishes what stopped runs
// left, never what a concurrent run is still working on.
func (db *DB) PendingProbeDomains(ctx context.Context, runID int64, fn func(domain string) error) error {
	return eachPage(pendingPage, func(after string) ([]string, error) {
		page, err := collect(ctx, db.sql, scanString, `SELECT d.domain FROM domains d
			WHERE d.last_run_id = ? AND d.domain > ?
			  AND EXISTS (SELECT 1 FROM listings l WHERE l.domain = d.domain AND l.active = TRUE AND l.remote_norm <> ''
			              AND `+pendingRemote+`)
			ORDER BY d.domain LIMIT ?`, runID, after, pendingPage)
		if err != nil {
			return nil, fmt.Errorf("domains with pending probes: %w", err)
		}
		return page, nil
	}, func(d string) string { return d }, fn)
}

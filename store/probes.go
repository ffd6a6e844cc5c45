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
}

// AddProbeDecision appends a decision.
func (db *DB) AddProbeDecision(ctx context.Context, d ProbeDecision) error {
	_, err := db.sql.ExecContext(ctx, `INSERT INTO probe_decisions (run_id, remote_norm, url, decided_at, decision, reason)
		VALUES (?, ?, ?, ?, ?, ?)`, d.RunID, d.RemoteNorm, d.URL, db.Now(), d.Decision, d.Reason)
	if err != nil {
		return fmt.Errorf("add probe decision for %s: %w", d.URL, err)
	}
	return nil
}

// AddProbe appends a probe result.
func (db *DB) AddProbe(ctx context.Context, runID int64, p ProbeRow) error {
	var tools any
	if p.ToolCount != nil {
		tools = *p.ToolCount
	}
	probedAt := db.Now()
	if t, err := time.Parse(time.RFC3339Nano, p.ProbedAt); err == nil {
		probedAt = ts(t)
	}
	_, err := db.sql.ExecContext(ctx, `INSERT INTO probes (run_id, remote_norm, url, probed_at, outcome, transport, protocol,
		server_name, server_version, tool_count, card_sha256, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		runID, p.RemoteNorm, p.URL, probedAt, p.Outcome, p.Transport, p.Protocol, p.ServerName, p.ServerVersion,
		tools, p.CardSHA256, p.Result)
	if err != nil {
		return fmt.Errorf("add probe for %s: %w", p.URL, err)
	}
	return nil
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
		FROM probes p JOIN (SELECT remote_norm, MAX(id) AS id FROM probes GROUP BY remote_norm) last ON last.id = p.id`)
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

// PendingRemote is a listed remote whose probe phase never finished: it has
// no decision at all (its domain was crawled by a run stopped before the
// probe phase), or its latest decision was to probe and that run stored no
// probe of it.
type PendingRemote struct {
	Norm       string
	CardKey    string
	CardSHA256 string
	RemoteJSON string // the remote object as declared
	CardJSON   string // the card as parsed
}

// PendingProbes returns the remotes an interrupted run left undecided or
// unprobed, so the next run finishes them even if their domains are fresh.
func (db *DB) PendingProbes(ctx context.Context) ([]PendingRemote, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT r.url_norm, r.card_key, c.sha256, r.json, c.json
		FROM remotes r JOIN cards c ON c.key = r.card_key
		WHERE EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = r.url_norm AND l.active = 1)
		  AND (NOT EXISTS (SELECT 1 FROM probe_decisions d WHERE d.remote_norm = r.url_norm)
		       OR EXISTS (SELECT 1 FROM probe_decisions d
		                  WHERE d.remote_norm = r.url_norm AND d.decision = 'probe'
		                    AND d.id = (SELECT MAX(d2.id) FROM probe_decisions d2 WHERE d2.remote_norm = r.url_norm)
		                    AND NOT EXISTS (SELECT 1 FROM probes p WHERE p.remote_norm = r.url_norm AND p.run_id = d.run_id)))
		ORDER BY r.url_norm`)
	if err != nil {
		return nil, fmt.Errorf("pending probes: %w", err)
	}
	defer rows.Close()
	var out []PendingRemote
	for rows.Next() {
		var p PendingRemote
		if err := rows.Scan(&p.Norm, &p.CardKey, &p.CardSHA256, &p.RemoteJSON, &p.CardJSON); err != nil {
			return nil, fmt.Errorf("pending probes: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

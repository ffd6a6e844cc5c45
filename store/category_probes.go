package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Probe sources: which declarations an endpoint must have now to count.
const (
	SourceAll      = "all"      // every probed endpoint, one-off `probe --save` ones included
	SourceCard     = "card"     // endpoints an active listing's card declares
	SourceRegistry = "registry" // endpoints a latest, undeleted Registry entry declares
)

// probeSourceFilter is the SQL condition on p.remote_norm for a source.
func probeSourceFilter(source string) (string, error) {
	switch source {
	case SourceAll, "":
		return "1 = 1", nil
	case SourceCard:
		return "EXISTS (SELECT 1 FROM listings l WHERE l.remote_norm = p.remote_norm AND l.active = 1)", nil
	case SourceRegistry:
		return "EXISTS (SELECT 1 FROM registry_remotes rr WHERE rr.url_norm = p.remote_norm)", nil
	}
	return "", fmt.Errorf("unknown probe source %q (want card, registry or all)", source)
}

// OutcomeCount is how many endpoints' latest probe ended on an outcome.
type OutcomeCount struct {
	Outcome string
	Count   int
}

// ProbeOutcomeCounts counts endpoints by the outcome of their latest probe,
// for endpoints of the given source, in outcome order.
func (db *DB) ProbeOutcomeCounts(ctx context.Context, source string) ([]OutcomeCount, error) {
	cond, err := probeSourceFilter(source)
	if err != nil {
		return nil, err
	}
	out, err := collect(ctx, db.sql, func(rows *sql.Rows) (OutcomeCount, error) {
		var c OutcomeCount
		err := rows.Scan(&c.Outcome, &c.Count)
		return c, err
	}, `SELECT p.outcome, COUNT(*) FROM probe_outcomes p
		JOIN (`+latestProbeIDs+`) last ON last.remote_norm = p.remote_norm AND last.id = p.last_id
		WHERE `+cond+` GROUP BY p.outcome ORDER BY p.outcome`)
	if err != nil {
		return nil, fmt.Errorf("probe outcome counts: %w", err)
	}
	return out, nil
}

// ProbesFrom calls fn with the latest probe of every endpoint of the given
// source, in URL order, a page at a time.
func (db *DB) ProbesFrom(ctx context.Context, source string, fn func(ProbeRow) error) error {
	cond, err := probeSourceFilter(source)
	if err != nil {
		return err
	}
	return eachPage(categoryPage, func(after string) ([]ProbeRow, error) {
		page, err := collect(ctx, db.sql, scanProbeRow, `SELECT p.remote_norm, p.url, p.probed_at, p.outcome, p.transport, p.protocol,
			p.server_name, p.server_version, p.tool_count, p.card_sha256, p.result
			FROM (SELECT p.remote_norm, MAX(p.last_id) AS id FROM probe_outcomes p WHERE p.remote_norm > ? AND `+cond+`
			      GROUP BY p.remote_norm ORDER BY p.remote_norm LIMIT ?) last
			JOIN probes p ON p.id = last.id
			ORDER BY p.remote_norm`, after, categoryPage)
		if err != nil {
			return nil, fmt.Errorf("probes: %w", err)
		}
		return page, nil
	}, func(p ProbeRow) string { return p.RemoteNorm }, fn)
}

// partialResult reads the partial flag of a stored probe record (a record
// without it is not partial).
func partialResult(result string) bool {
	var flags struct {
		Partial bool `json:"partial"`
	}
	_ = json.Unmarshal([]byte(result), &flags)
	return flags.Partial
}

package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// plan returns SQLite's query plan for q, one line per step.
func plan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.sql.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatalf("explain %.60s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	return b.String()
}

// TestQueriesUseTheirIndexes: the store's reads of observations,
// reconcile_results and a domain's catalogs go through the primary keys
// and the indexes kept, never a full scan; the indexes migration 0006
// dropped had no reader (before it, the store read a domain's catalogs by
// catalogs.domain; domain_catalogs' key serves those reads now).
func TestQueriesUseTheirIndexes(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "i.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		query string
		args  []any
		want  string
	}{
		{lastValidatorsQuery, []any{"u"}, "USING INDEX observations_url"},
		{reconcileResultsQuery, nil, "SCAN reconcile_results"}, // the whole result, in id (rowid) order
		{catalogFindingsQuery, []any{"a", "b"}, "INDEX sqlite_autoindex_domain_catalogs_1 (domain>? AND domain<?)"},
		{domainCatalogsQuery, []any{"a"}, "INDEX sqlite_autoindex_domain_catalogs_1 (domain=?)"},
		// A filter by category finds each record's by server_categories' key.
		{`SELECT ` + feedColumns + ` FROM ` + feedFromOf(FeedFilter{Category: "travel"}) + ` WHERE (f.kind, f.key) > (?, ?)
			AND f.removed_at IS NULL AND sc.category = ? ORDER BY f.kind, f.key LIMIT ?`, []any{0, "", "travel", 10},
			"SEARCH sc USING COVERING INDEX server_categories_category (category=? AND kind=? AND registry=? AND subject=?)"},
		// and the listing chains of a page from the indexes alone, in order.
		{fmt.Sprintf(listingsByRemote, "?, ?"), []any{"a", "b"},
			"SEARCH listings USING COVERING INDEX listings_remote (remote_norm=?)"},
		{fmt.Sprintf(listingsByCard, "?, ?"), []any{"a", "b"},
			"SEARCH listings USING COVERING INDEX listings_card (card_key=? AND active=?)"},
		// A page of a whole walk reads its endpoints' listings, Registry
		// entries and probes by their range, in order (queryKeys).
		{strings.Replace(listingsByRemote, " IN (%s)", " BETWEEN ? AND ?", 1), []any{"a", "b"},
			"SEARCH listings USING COVERING INDEX listings_remote (remote_norm>? AND remote_norm<?)"},
		{strings.Replace(registryFactsQuery, " IN (%s)", " BETWEEN ? AND ?", 1), []any{"a", "b"},
			"SEARCH rr USING COVERING INDEX registry_remotes_norm (url_norm>? AND url_norm<?)"},
		{strings.Replace(probeHistoryQuery, " IN (%s)", " BETWEEN ? AND ?", 1), []any{"a", "b"},
			"SEARCH probe_outcomes USING INDEX sqlite_autoindex_probe_outcomes_1 (remote_norm>? AND remote_norm<?)"},
		// Each feed page reads its records' facts by key (feedrecords.go).
		{fmt.Sprintf(registryFactsQuery, "?, ?"), []any{"a", "b"}, "SEARCH rr USING COVERING INDEX registry_remotes_norm (url_norm=?)"},
		{fmt.Sprintf(probeHistoryQuery, "?, ?"), []any{"a", "b"}, "SEARCH probe_outcomes USING INDEX sqlite_autoindex_probe_outcomes_1 (remote_norm=?)"},
		{fmt.Sprintf(reconcileFactsQuery, "?, ?"), []any{"a", "b"}, "SEARCH reconcile_results USING INDEX reconcile_results_card (card_key=? AND kind=?)"},
		{fmt.Sprintf(namespaceFactsQuery, "?, ?"), []any{"a", "b"}, "SEARCH namespaces USING INDEX sqlite_autoindex_namespaces_1 (namespace=?)"},
		// A page's categories, by key, or by range in a whole walk.
		{fmt.Sprintf(endpointCategoriesQuery, "?, ?"), []any{"a", "b"},
			"SEARCH server_categories USING INDEX sqlite_autoindex_server_categories_1 (kind=? AND registry=? AND subject=?)"},
		{strings.Replace(cardCategoriesQuery, " IN (%s)", " BETWEEN ? AND ?", 1), []any{"a", "b"},
			"SEARCH server_categories USING INDEX sqlite_autoindex_server_categories_1 (kind=? AND registry=? AND subject>? AND subject<?)"},
		// The site's ns=METHOD counts the namespaces of the method, and the
		// Registry-only endpoints are each their first entry's row.
		{namespacesOfMethod, []any{"dns", 5001}, "SEARCH namespaces USING COVERING INDEX namespaces_method (method=?)"},
		{`SELECT rr.url_norm FROM registry_remotes rr WHERE rr.url_norm > ? AND ` + firstEntry("rr"), []any{""},
			"SEARCH r2 USING COVERING INDEX registry_remotes_norm (url_norm=? AND source<?)"},
		// The categories read each endpoint's latest ok probe from its brief
		// history, not from every probe it had.
		{latestOKProbesPage, []any{"", 10},
			"SEARCH probe_outcomes USING COVERING INDEX probe_outcomes_outcome (outcome=? AND remote_norm>?)"},
		// A record's card is its endpoint's first in key order, one seek
		// however many domains list the endpoint.
		{endpointRecordQuery, []any{nil, "u"}, "SEARCH l USING COVERING INDEX listings_remote_card (remote_norm=? AND active=?)"},
		// A new reconciliation is compared with the stored one by card key.
		{changedPairs, []any{"t", "t"}, "SEARCH s USING INDEX reconcile_staging_card (token=? AND card_key=?)"},
		{changedPairs, []any{"t", "t"}, "SEARCH r USING INDEX reconcile_results_card (card_key=? AND kind=?)"},
	} {
		p := plan(t, db, c.query, c.args...)
		if !strings.Contains(p, c.want) {
			t.Errorf("plan of %.60s…:\n%s\nwant %q", c.query, p, c.want)
		}
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("plan of %.60s… sorts in a temporary b-tree:\n%s", c.query, p)
		}
	}
}

package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// category=none and ns=unknown read index rows only while a mark says
// every server had a row at a change number (MarkCategoriesComplete,
// MarkNamespacesComplete). Any change since used to turn them off until
// the next recomputation, so while a crawl wrote, each such page walked
// every server (0.5–1.3 s at 100,000). A server that may lack a row since
// the mark is one whose feed record was written since (a crawl's new
// cards and endpoints, a Registry sync's endpoints that a card declares
// too) or an endpoint only the Registry declares, which has no record; no
// pass removes the row of a server still listed. So while few records
// were written since, the facet answers with those servers, and the
// Registry's that lack a row, added to its candidates.

// recordsSince returns the feed records written after change number
// r.seq (feed_servers_seq) for which r.holds is true; common, and none,
// when more than r.most records were written since. Each is read with the
// condition's value, not filtered by it, so the bound counts every record
// written since and the read stays within it.
func recordsSince(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, r sinceRead) (recs []recordSince, common bool, err error) {
	holds := cmp.Or(r.holds, "1 = 1")
	card := "''"
	if r.cards {
		card = "f.card_key" // from the table: the index holds the key
	}
	type read struct {
		rec   recordSince
		holds bool
	}
	recent, err := collect(ctx, q, func(rows *sql.Rows) (read, error) {
		var kind int
		var x read
		err := rows.Scan(&kind, &x.rec.key.Subject, &x.rec.cardKey, &x.holds)
		x.rec.key.Kind = siteKind(kind)
		return x, err
	}, `SELECT f.kind, f.key, `+card+`, CASE WHEN `+holds+` THEN 1 ELSE 0 END FROM feed_servers f WHERE f.seq > ? LIMIT ?`,
		append(slices.Clip(r.args), r.seq, r.most+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("records since %d: %w", r.seq, err)
	}
	if len(recent) > r.most {
		return nil, true, nil
	}
	for _, x := range recent {
		if x.holds {
			recs = append(recs, x.rec)
		}
	}
	return recs, false, nil
}

// sinceRead is what recordsSince reads.
type sinceRead struct {
	seq  int64 // records written after this change number
	most int
	// holds is a condition on feed_servers f, taking args ("": every
	// record).
	holds string
	args  []any
	cards bool // read each record's card key too
}

// recordSince is a feed record recordsSince read: its server, and its
// card when asked for.
type recordSince struct {
	key     SiteKey
	cardKey string
}

// siteKeysOf returns the records' servers.
func siteKeysOf(recs []recordSince) []SiteKey {
	keys := make([]SiteKey, len(recs))
	for i, r := range recs {
		keys[i] = r.key
	}
	return keys
}

// lacksOwnCategory holds for a feed record f whose server has no category
// row of its own that names one: the only records since a categories mark
// that category=none may select (an own row wins over the Registry's).
const lacksOwnCategory = `NOT EXISTS (SELECT 1 FROM server_categories sc
	WHERE sc.kind = CASE WHEN f.kind = 0 THEN '` + KindEndpoint + `' ELSE '` + KindCard + `' END
	  AND sc.registry = '' AND sc.subject = f.key AND sc.category <> '')`

// registryUncategorized lists the endpoints of Registry entries that have
// no category row: one only the Registry declares then has none.
const registryUncategorized = `SELECT DISTINCT rr.url_norm FROM registry_remotes rr WHERE ` + registryRowless + ` LIMIT ?`

// registryNamespaceUnknown lists the endpoints of latest Registry entries
// whose name gives no namespace or one not checked (%[1]s: the name's
// namespace, namespaceOf).
const registryNamespaceUnknown = `SELECT DISTINCT rr.url_norm FROM registry_remotes rr
	WHERE NOT EXISTS (SELECT 1 FROM namespaces n WHERE n.namespace = %[1]s AND n.method <> '') LIMIT ?`

// sinceMark returns the servers a facet may miss since its mark at change
// number mark: those whose records were written since and for which holds
// is true (recordsSince; "" for all), and the endpoints registry (a query
// of Registry endpoints, its one argument the most to read) lists, since
// those have no record. common when the mark was never taken, or when
// more than most records were written since or more than most servers
// found.
func (db *DB) sinceMark(ctx context.Context, mark int64, most int, holds, registry string) ([]SiteKey, bool, error) {
	if mark < 0 {
		return nil, true, nil // never marked
	}
	recs, common, err := recordsSince(ctx, db.sql, sinceRead{seq: mark, most: most, holds: holds})
	if err != nil || common {
		return nil, common, err
	}
	keys := siteKeysOf(recs)
	reg, err := collect(ctx, db.sql, scanString, registry, most+1-len(keys))
	if err != nil {
		return nil, false, fmt.Errorf("servers since a mark: %w", err)
	}
	for _, e := range reg {
		keys = append(keys, SiteKey{Kind: KindEndpoint, Subject: e})
	}
	return keys, len(keys) > most, nil
}

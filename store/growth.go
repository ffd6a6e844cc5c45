package store

import (
	"context"
	"math/bits"
	"time"
)

// PostgreSQL plans a prepared statement once for all its executions (a
// generic plan, from its sixth on) with the statistics of the moment, and
// plans again only when they change. A crawl or a Registry sync into a new
// database prepares its statements while the tables are nearly empty,
// where a sequential scan is the cheapest plan, and then grows them:
// the read model's query of an endpoint's record hashed the whole probes
// table for each record, and the sync's look-up of a page's names scanned
// every entry stored so far, until autovacuum's next ANALYZE (once a minute
// at most) replaced the plans. In the worker benchmark at 10,000 domains
// the record query averaged 0.91 ms, and in a sync of 20,000 entries the
// look-up 11.5 ms; with statistics kept current, 0.09 ms and 0.25 ms. So a
// store refreshes them itself each time the rows it wrote (domains saved,
// Registry entries written) double, from firstAnalyze on: a few times per
// run (eleven in a million domains), each a sampled ANALYZE.

// firstAnalyze is the first count of written rows at which statistics are
// refreshed: plans made at a few hundred rows already use the indexes.
const firstAnalyze = 256

// analyzeTimeout bounds a refresh: ANALYZE waits for a table's lock behind
// a running VACUUM (an anti-wraparound one is not cancelled for it), and
// the writer whose row triggered it waits meanwhile.
const analyzeTimeout = time.Minute

// grew notes n written rows, and refreshes the statistics when the count
// reaches firstAnalyze or a power of two past it. A refresh that fails
// costs only the plans it would have fixed: it is logged, and the caller
// goes on.
func (db *DB) grew(ctx context.Context, n int) {
	if db.dialect.analyze == "" || n <= 0 {
		return
	}
	after := db.written.Add(int64(n))
	before := after - int64(n)
	// A power of two lies in (before, after] exactly when the two differ
	// in length.
	if after < firstAnalyze || bits.Len64(uint64(before)) == bits.Len64(uint64(after)) {
		return
	}
	actx, cancel := context.WithTimeout(ctx, analyzeTimeout)
	defer cancel()
	if _, err := db.sql.ExecContext(actx, db.dialect.analyze); err != nil && ctx.Err() == nil {
		db.log.Warn("refreshing the planner's statistics", "written", after, "err", err)
	}
}

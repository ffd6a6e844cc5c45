package store

import (
	"context"
	"sync/atomic"
)

// PostgreSQL plans a prepared statement once for all its executions (a
// generic plan, from its sixth on) with the statistics of the moment, and
// plans again only when they change. A crawl into a new database prepares
// its statements while the tables are nearly empty, where a sequential scan
// is the cheapest plan, and then grows them: the read model's query of an
// endpoint's record hashed the whole probes table for each record, until
// autovacuum's next ANALYZE (once a minute at most) replaced the plan. In
// the worker benchmark at 10,000 domains that query averaged 0.91 ms; with
// statistics kept current, 0.10 ms. So a store refreshes them itself each
// time the domains it saved double, from firstAnalyze on: a few times per
// run (eleven in a million domains), each a sampled ANALYZE.

// firstAnalyze is the first count of saved domains at which statistics are
// refreshed: plans made at a few hundred rows already use the indexes.
const firstAnalyze = 256

// growth counts the domains this store saved.
type growth struct {
	saved atomic.Int64
}

// grew notes a saved domain, and refreshes the statistics when the count
// reaches firstAnalyze or doubles since. A refresh that fails costs only
// the plans it would have fixed: it is logged, and the crawl goes on.
func (db *DB) grew(ctx context.Context) {
	if db.dialect.analyze == "" {
		return
	}
	n := db.growth.saved.Add(1)
	if n < firstAnalyze || n&(n-1) != 0 {
		return
	}
	if _, err := db.sql.ExecContext(ctx, db.dialect.analyze); err != nil && ctx.Err() == nil {
		db.log.Warn("refreshing the planner's statistics", "saved", n, "err", err)
	}
}

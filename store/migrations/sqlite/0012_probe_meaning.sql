-- One record per server (issue 11): a server only the Registry declares has
-- no feed_servers row, so nothing kept when its latest probe's meaning
-- changed. Each endpoint's latest probe, reduced to what a record's meaning
-- holds of it (outcome, transport, protocol, server name and version, tool
-- count, partial: store/feedregistryonly.go probeMeaning), and when that
-- last changed: kept by AddProbe, so the record's updatedAt and the delta
-- feed read one row by key instead of the endpoint's probe history. Filled
-- for the probes there are by a Go step (store/feed.go afterMigration).
CREATE TABLE probe_meaning (
  remote_norm TEXT PRIMARY KEY,
  meaning     TEXT NOT NULL,
  changed_at  TEXT NOT NULL
);

-- PostgreSQL mirror of sqlite/0012_probe_meaning.sql (text COLLATE "C").
-- One record per server (issue 11): a server only the Registry declares has
-- no feed_servers row, so nothing kept when its latest probe's meaning
-- changed. Each endpoint's latest probe, reduced to what a record's meaning
-- holds of it, and when that last changed: kept by AddProbe, so the
-- record's updatedAt and the delta feed read one row by key instead of the
-- endpoint's probe history.
CREATE TABLE probe_meaning (
  remote_norm TEXT COLLATE "C" PRIMARY KEY,
  meaning     TEXT COLLATE "C" NOT NULL,
  changed_at  TEXT COLLATE "C" NOT NULL
);

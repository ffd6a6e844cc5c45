-- PostgreSQL mirror of sqlite/0017_registry_seen_index.sql.
-- When the Registry's tables last changed (issue 8). The site's search
-- index (store/searchindex.go) rebuilds its Registry rows when they did,
-- and `serve` asks every two seconds: every write of an entry moves its
-- last_seen, and remotes are made anew with their entry's changed_at, so
-- the latest of each and the counts say it, read from these indexes
-- instead of every row (an entry's server.json included).
CREATE INDEX registry_entries_seen ON registry_entries (last_seen);
CREATE INDEX registry_remotes_changed ON registry_remotes (entry_changed_at);

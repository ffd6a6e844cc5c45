-- PostgreSQL only (postgres/0018: statistics on lower(name) for searches of
-- names). SQLite's planner walks feed_servers in key order for such a search
-- whatever the term, and the store never runs ANALYZE on it.
SELECT 1;

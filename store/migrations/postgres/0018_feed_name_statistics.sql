-- Statistics on lower(name) (issue 8). Searches of names (the API's search,
-- the feed's) filter feed_servers by lower(name) LIKE '%term%'. Without
-- statistics on that expression PostgreSQL guessed a handful of rows for any
-- term, so for a term every server holds it read and sorted all of them
-- (370 ms at 100,000 servers) instead of walking feed_servers_card and
-- stopping after a page (0.3 ms). An extended statistics object costs
-- nothing on writes; ANALYZE (here, and the store's own as the tables grow)
-- fills it.
CREATE STATISTICS feed_servers_lower_name ON (lower(name)) FROM feed_servers;
ANALYZE feed_servers;

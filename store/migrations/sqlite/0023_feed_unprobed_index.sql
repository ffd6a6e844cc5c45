-- The live records never probed, in key order: the site's outcome=none
-- reads them here (with the cards without remotes, never probed either),
-- where it computed every server's row from its cursor on to find the few
-- a crawl with probes leaves (up to a second at 100,000 servers). Partial,
-- so a crawl that probes keeps it small.
CREATE INDEX feed_servers_unprobed ON feed_servers (kind, key) WHERE probe_outcome = '' AND removed_at IS NULL;

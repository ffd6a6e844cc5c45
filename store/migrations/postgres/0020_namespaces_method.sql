-- PostgreSQL mirror of sqlite/0020_namespaces_method.sql.
-- The namespaces verified by one method (issue 8). The site's ns=METHOD
-- filter counts them, then reads the cards named in them, and both read
-- every namespace without this (30-60 ms a page at 50,000 namespaces).
-- Namespaces are written by the recomputation and namespaces --check,
-- never by the crawl's per-domain writes.
CREATE INDEX namespaces_method ON namespaces (method, namespace);

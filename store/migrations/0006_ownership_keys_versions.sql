-- One seam: catalog ownership per domain, declared foreign keys, one
-- timestamp format, unused indexes dropped, failure attempts per domain and
-- the version of the rules that judged each stored document. Portable SQL;
-- SQLite cannot add a foreign key to an existing table, so listings,
-- entries and remotes are rebuilt (in the migration's one transaction,
-- every row copied).

-- Which domains reach which catalog. A nested catalog may be reached by
-- several domains; catalogs.domain kept only the last one, so the others
-- lost its findings and, after a passing failure, its listings. parent_url
-- and depth are the catalog's place in this domain's walk.
CREATE TABLE domain_catalogs (
  domain      TEXT NOT NULL REFERENCES domains (domain),
  catalog_url TEXT NOT NULL REFERENCES catalogs (url),
  parent_url  TEXT NOT NULL DEFAULT '',
  depth       INTEGER NOT NULL DEFAULT 0,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (domain, catalog_url)
);
INSERT INTO domain_catalogs (domain, catalog_url, parent_url, depth, first_seen, last_seen)
SELECT c.domain, c.url, c.parent_url, c.depth, c.first_seen, c.last_seen FROM catalogs c
WHERE EXISTS (SELECT 1 FROM domains d WHERE d.domain = c.domain);
-- Reads by domain go through domain_catalogs' primary key now.
DROP INDEX catalogs_domain;

-- The listing chain, with its keys declared.
CREATE TABLE listings_new (
  domain      TEXT NOT NULL REFERENCES domains (domain),
  catalog_url TEXT NOT NULL,
  identifier  TEXT NOT NULL,
  card_key    TEXT NOT NULL REFERENCES cards (key),
  remote_norm TEXT NOT NULL,
  active      INTEGER NOT NULL DEFAULT 1,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (domain, catalog_url, identifier, card_key, remote_norm)
);
INSERT INTO listings_new (domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen)
SELECT domain, catalog_url, identifier, card_key, remote_norm, active, first_seen, last_seen FROM listings;
DROP TABLE listings;
ALTER TABLE listings_new RENAME TO listings;
CREATE INDEX listings_remote ON listings (remote_norm);
CREATE INDEX listings_card ON listings (card_key);

CREATE TABLE entries_new (
  catalog_url  TEXT NOT NULL REFERENCES catalogs (url),
  identifier   TEXT NOT NULL,
  version      TEXT NOT NULL DEFAULT '',
  type         TEXT NOT NULL,
  url          TEXT NOT NULL DEFAULT '',
  resolved_url TEXT NOT NULL DEFAULT '',
  inline       INTEGER NOT NULL DEFAULT 0,
  display_name TEXT NOT NULL DEFAULT '',
  raw          TEXT NOT NULL,
  first_seen   TEXT NOT NULL,
  last_seen    TEXT NOT NULL,
  changed_at   TEXT NOT NULL,
  PRIMARY KEY (catalog_url, identifier, version)
);
INSERT INTO entries_new (catalog_url, identifier, version, type, url, resolved_url, inline, display_name, raw,
  first_seen, last_seen, changed_at)
SELECT catalog_url, identifier, version, type, url, resolved_url, inline, display_name, raw,
  first_seen, last_seen, changed_at FROM entries;
DROP TABLE entries;
ALTER TABLE entries_new RENAME TO entries;

CREATE TABLE remotes_new (
  url_norm    TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  type        TEXT NOT NULL,
  templated   INTEGER NOT NULL DEFAULT 0,
  card_key    TEXT NOT NULL REFERENCES cards (key),
  json        TEXT NOT NULL,
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  changed_at  TEXT NOT NULL
);
INSERT INTO remotes_new (url_norm, url, type, templated, card_key, json, first_seen, last_seen, changed_at)
SELECT url_norm, url, type, templated, card_key, json, first_seen, last_seen, changed_at FROM remotes;
DROP TABLE remotes;
ALTER TABLE remotes_new RENAME TO remotes;

-- Unused by every query of the store (EXPLAIN QUERY PLAN, see
-- store/indexes_test.go): nothing reads observations by domain, and the
-- reconciliation is read in insertion order.
DROP INDEX observations_domain;
DROP INDEX reconcile_results_kind;

-- One timestamp format: RFC 3339 UTC with a fixed nine-digit fraction, which
-- sorts as text. The Registry columns held RFC3339Nano (trailing zeros
-- dropped, so "…:05Z" sorted after "…:05.5Z"): each distinct value is
-- padded once in timestamp_fix, then every column is rewritten from it.
CREATE TABLE timestamp_fix (stored TEXT PRIMARY KEY, padded TEXT NOT NULL);
INSERT INTO timestamp_fix (stored, padded)
SELECT t, CASE WHEN length(t) = 20 THEN substr(t, 1, 19) || '.000000000Z'
               ELSE substr(t, 1, length(t) - 1) || substr('000000000', 1, 30 - length(t)) || 'Z' END
FROM (SELECT status_changed_at AS t FROM registry_entries
      UNION SELECT published_at FROM registry_entries
      UNION SELECT updated_at FROM registry_entries
      UNION SELECT watermark FROM registry_sync
      UNION SELECT sweep_since FROM registry_sync
      UNION SELECT sweep_started_at FROM registry_sync
      UNION SELECT last_full_at FROM registry_sync
      UNION SELECT last_done_at FROM registry_sync
      UNION SELECT checked_at FROM namespaces) stamps
WHERE (length(t) = 20 AND substr(t, 20, 1) = 'Z')
   OR (length(t) BETWEEN 22 AND 29 AND substr(t, 20, 1) = '.' AND substr(t, length(t), 1) = 'Z');
UPDATE registry_entries SET
  status_changed_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = status_changed_at), status_changed_at),
  published_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = published_at), published_at),
  updated_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = updated_at), updated_at);
UPDATE registry_sync SET
  watermark = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = watermark), watermark),
  sweep_since = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = sweep_since), sweep_since),
  sweep_started_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = sweep_started_at), sweep_started_at),
  last_full_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = last_full_at), last_full_at),
  last_done_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = last_done_at), last_done_at);
UPDATE namespaces SET checked_at = COALESCE((SELECT padded FROM timestamp_fix WHERE stored = checked_at), checked_at);
DROP TABLE timestamp_fix;

-- Consecutive failed crawls of a domain; the store backs off on them.
ALTER TABLE domains ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;

-- The parser/validator rules version that judged each stored document
-- ('' for judgements made before versions were recorded), so a rules change
-- can re-judge stored documents without fetching them again.
ALTER TABLE catalogs ADD COLUMN judged_by TEXT NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN judged_by TEXT NOT NULL DEFAULT '';
ALTER TABLE registry_entries ADD COLUMN judged_by TEXT NOT NULL DEFAULT '';

-- PostgreSQL mirror of sqlite/0006_ownership_keys_versions.sql. SQLite
-- declares foreign keys on existing tables by rebuilding them; PostgreSQL
-- adds them in place. Same tables, columns, indexes and data afterwards.

CREATE TABLE domain_catalogs (
  domain      TEXT COLLATE "C" NOT NULL REFERENCES domains (domain),
  catalog_url TEXT COLLATE "C" NOT NULL REFERENCES catalogs (url),
  parent_url  TEXT COLLATE "C" NOT NULL DEFAULT '',
  depth       BIGINT NOT NULL DEFAULT 0,
  first_seen  TEXT COLLATE "C" NOT NULL,
  last_seen   TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (domain, catalog_url)
);
INSERT INTO domain_catalogs (domain, catalog_url, parent_url, depth, first_seen, last_seen)
SELECT c.domain, c.url, c.parent_url, c.depth, c.first_seen, c.last_seen FROM catalogs c
WHERE EXISTS (SELECT 1 FROM domains d WHERE d.domain = c.domain);
DROP INDEX catalogs_domain;

ALTER TABLE listings ADD FOREIGN KEY (domain) REFERENCES domains (domain);
ALTER TABLE listings ADD FOREIGN KEY (card_key) REFERENCES cards (key);
ALTER TABLE entries ADD FOREIGN KEY (catalog_url) REFERENCES catalogs (url);
ALTER TABLE remotes ADD FOREIGN KEY (card_key) REFERENCES cards (key);

DROP INDEX observations_domain;
DROP INDEX reconcile_results_kind;

CREATE TABLE timestamp_fix (stored TEXT COLLATE "C" PRIMARY KEY, padded TEXT COLLATE "C" NOT NULL);
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

ALTER TABLE domains ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;

ALTER TABLE catalogs ADD COLUMN judged_by TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN judged_by TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE registry_entries ADD COLUMN judged_by TEXT COLLATE "C" NOT NULL DEFAULT '';

-- PostgreSQL mirror of sqlite/0009_registry_gone.sql (text COLLATE "C").
-- One record per server (issue 11): endpoints that left the Registry. A
-- latest, active entry declared the endpoint and none does now; the delta
-- feed (export --since, source registry or all) says so with a tombstone,
-- so a mirror of the servers only the Registry declares can tell stale
-- from absent. A row goes when an entry declares the endpoint again.
CREATE TABLE registry_gone (
  url_norm   TEXT COLLATE "C" PRIMARY KEY,
  url        TEXT COLLATE "C" NOT NULL,
  source     TEXT COLLATE "C" NOT NULL,
  name       TEXT COLLATE "C" NOT NULL,
  version    TEXT COLLATE "C" NOT NULL,
  reason     TEXT COLLATE "C" NOT NULL,
  removed_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX registry_gone_removed ON registry_gone (removed_at, url_norm);

-- Each feed record carries its card's reconciliation: a page of records
-- reads the pairs of its cards by card key.
CREATE INDEX reconcile_results_card ON reconcile_results (card_key, kind);
-- A new reconciliation is compared with the stored one card by card, to
-- move the updatedAt of the records whose pairing changed.
CREATE INDEX reconcile_staging_card ON reconcile_staging (token, card_key);

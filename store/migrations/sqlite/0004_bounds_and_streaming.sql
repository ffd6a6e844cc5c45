-- Bounded work per domain, and the indexes and tables that let a crawl,
-- its reconciliation and the domains listing stream instead of loading
-- everything.

-- The caps a domain hit in its last crawl, as a JSON array of names
-- (remotes, cards, catalogs, probes, time); '[]' when none.
ALTER TABLE domains ADD COLUMN capped TEXT NOT NULL DEFAULT '[]';
-- The run that last took the domain on, so a name listed twice in one run's
-- input is crawled once without keeping every name in memory.
ALTER TABLE domains ADD COLUMN queued_run_id INTEGER;
CREATE INDEX domains_last_run ON domains (last_run_id, domain);

-- A stopped run (interrupted, failed, abandoned) may leave remotes of the
-- domains it saved undecided; a later run finishes them and marks the
-- stopped run settled, so it is not searched again.
ALTER TABLE runs ADD COLUMN settled INTEGER NOT NULL DEFAULT 0;

-- A domain's catalogs, for its finding codes page by page.
CREATE INDEX catalogs_domain ON catalogs (domain);
-- "Already decided in this run?" for every remote a domain declares.
CREATE INDEX probe_decisions_run ON probe_decisions (run_id, remote_norm);

-- Reconciliation results are written here in batches while cards stream
-- past, then swapped into reconcile_results in one short transaction, so
-- readers never see half a result. token names one computation.
CREATE TABLE reconcile_staging (
  id          INTEGER PRIMARY KEY,
  token       TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  kind        TEXT NOT NULL,
  card_key    TEXT NOT NULL DEFAULT '',
  card_name   TEXT NOT NULL DEFAULT '',
  source      TEXT NOT NULL DEFAULT '',
  name        TEXT NOT NULL DEFAULT '',
  version     TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT '',
  basis       TEXT NOT NULL DEFAULT '',
  detail      TEXT NOT NULL DEFAULT '',
  diffs       TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX reconcile_staging_token ON reconcile_staging (token, id);

-- Namespaces are collected by streaming card and Registry names in name
-- order (a namespace's names are adjacent), and written in batches; each
-- row remembers the latest sweep that named it, and a finished sweep
-- removes the rows it did not name.
CREATE INDEX cards_name ON cards (name, key);
CREATE INDEX registry_entries_latest_name ON registry_entries (is_latest, name, source, version);
ALTER TABLE namespaces ADD COLUMN swept_at TEXT NOT NULL DEFAULT '';

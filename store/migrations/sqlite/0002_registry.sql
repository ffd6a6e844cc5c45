-- The Registry mirror, card <-> Registry reconciliation, namespace checks.
-- Portable SQL (SQLite and PostgreSQL); timestamps are RFC 3339 UTC text.

-- Every version of every server a registry lists. source is the registry's
-- base URL (the official one, or a subregistry); a dump file imports under
-- the registry it stands in for. reported_latest is the Registry's isLatest
-- as last received; is_latest is recomputed here, because the Registry flips
-- an old version's flag without bumping its updatedAt.
CREATE TABLE registry_entries (
  source            TEXT NOT NULL,
  name              TEXT NOT NULL,
  version           TEXT NOT NULL,
  status            TEXT NOT NULL DEFAULT '',
  status_message    TEXT NOT NULL DEFAULT '',
  status_changed_at TEXT NOT NULL DEFAULT '',
  published_at      TEXT NOT NULL DEFAULT '',
  updated_at        TEXT NOT NULL DEFAULT '',
  reported_latest   INTEGER NOT NULL DEFAULT 0,
  is_latest         INTEGER NOT NULL DEFAULT 0,
  schema            TEXT NOT NULL DEFAULT '',
  server_json       TEXT NOT NULL,
  meta              TEXT NOT NULL DEFAULT '{}',
  findings          TEXT NOT NULL DEFAULT '[]',
  first_seen        TEXT NOT NULL,
  last_seen         TEXT NOT NULL,
  changed_at        TEXT NOT NULL,
  PRIMARY KEY (source, name, version)
);
CREATE INDEX registry_entries_latest ON registry_entries (is_latest, source, name);

-- Sync progress per registry. A sweep in progress has a kind and, after its
-- first page, a cursor; it resumes from there after an interruption.
CREATE TABLE registry_sync (
  source           TEXT PRIMARY KEY,
  watermark        TEXT NOT NULL DEFAULT '',  -- updated_since for the next delta
  sweep_kind       TEXT NOT NULL DEFAULT '',  -- full, delta; '' when idle
  sweep_since      TEXT NOT NULL DEFAULT '',  -- updated_since of the sweep in progress
  sweep_started_at TEXT NOT NULL DEFAULT '',  -- server Date at the sweep's first response
  cursor           TEXT NOT NULL DEFAULT '',
  pages            INTEGER NOT NULL DEFAULT 0,
  entries          INTEGER NOT NULL DEFAULT 0,
  last_full_at     TEXT NOT NULL DEFAULT '',
  last_done_at     TEXT NOT NULL DEFAULT '',
  last_error       TEXT NOT NULL DEFAULT '',
  updated_at       TEXT NOT NULL
);

-- Reconciliation results, replaced as a whole on each recompute.
-- kind: pair (card_key and an entry), card_only, registry_only.
CREATE TABLE reconcile_results (
  id          INTEGER PRIMARY KEY,
  kind        TEXT NOT NULL,
  card_key    TEXT NOT NULL DEFAULT '',
  card_name   TEXT NOT NULL DEFAULT '',
  source      TEXT NOT NULL DEFAULT '',
  name        TEXT NOT NULL DEFAULT '',
  version     TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT '',  -- the entry's Registry status
  basis       TEXT NOT NULL DEFAULT '',  -- remote_url, name, namespace_domain
  detail      TEXT NOT NULL DEFAULT '',  -- what matched (URL, domain), subdomain notes
  diffs       TEXT NOT NULL DEFAULT '[]',
  computed_at TEXT NOT NULL
);
CREATE INDEX reconcile_results_kind ON reconcile_results (kind, card_key);

-- Namespace verification as an outsider can check it, one row per namespace.
CREATE TABLE namespaces (
  namespace   TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,               -- domain, github, other
  domain      TEXT NOT NULL DEFAULT '',
  method      TEXT NOT NULL DEFAULT '',    -- http, dns, github, none; '' until checked
  result      TEXT NOT NULL DEFAULT '{}',  -- what was seen, as JSON
  checked_at  TEXT NOT NULL DEFAULT ''
);

-- The crawl's memory. Timestamps are RFC 3339 UTC text; JSON is text.
-- Kept close to what PostgreSQL also accepts; see the store package doc for
-- the differences a PostgreSQL dialect will still have to handle.

-- One run of `cardcrawl crawl` (or the crawl inside `demo`).
CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  started_at  TEXT NOT NULL,
  finished_at TEXT,
  status      TEXT NOT NULL,          -- running, done, interrupted, failed
  options     TEXT NOT NULL DEFAULT '{}',
  summary     TEXT NOT NULL DEFAULT '{}'
);

-- The frontier and each domain's last outcome. A domain is "pending" until a
-- crawl finishes it; next_fetch_after is when it may be fetched again.
CREATE TABLE domains (
  domain           TEXT PRIMARY KEY,
  added_at         TEXT NOT NULL,
  state            TEXT NOT NULL,     -- pending, done
  outcome          TEXT,              -- catalog, no_catalog, failed
  class            TEXT,              -- failure class when outcome is failed/no_catalog
  reason           TEXT,
  catalog_url      TEXT,
  cards            INTEGER NOT NULL DEFAULT 0,
  remotes          INTEGER NOT NULL DEFAULT 0,
  last_run_id      INTEGER,
  last_crawled_at  TEXT,
  next_fetch_after TEXT
);

-- Every fetched body once, by content hash.
CREATE TABLE documents (
  sha256       TEXT PRIMARY KEY,
  size         INTEGER NOT NULL,
  content_type TEXT,
  body         BLOB NOT NULL,
  first_seen   TEXT NOT NULL
);

-- Append-only: one row per fetch attempt, successful or not.
CREATE TABLE observations (
  id            INTEGER PRIMARY KEY,
  run_id        INTEGER,
  domain        TEXT NOT NULL,
  kind          TEXT NOT NULL,        -- catalog, card, home_page, legacy
  url           TEXT NOT NULL,
  fetched_at    TEXT NOT NULL,
  status        INTEGER NOT NULL DEFAULT 0,
  class         TEXT NOT NULL DEFAULT '',
  reason        TEXT NOT NULL DEFAULT '',
  content_type  TEXT NOT NULL DEFAULT '',
  etag          TEXT NOT NULL DEFAULT '',
  last_modified TEXT NOT NULL DEFAULT '',
  max_age       INTEGER,              -- Cache-Control max-age, seconds
  sha256        TEXT NOT NULL DEFAULT '',
  size          INTEGER NOT NULL DEFAULT 0,
  duration_ms   INTEGER NOT NULL DEFAULT 0,
  final_url     TEXT NOT NULL DEFAULT '',
  redirects     TEXT NOT NULL DEFAULT '[]',
  not_modified  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX observations_url ON observations (url, id);
CREATE INDEX observations_domain ON observations (domain, id);

-- Catalog documents, by the URL they were requested from. An inline nested
-- catalog gets its parent's URL plus a JSON pointer fragment.
CREATE TABLE catalogs (
  url          TEXT PRIMARY KEY,
  domain       TEXT NOT NULL,
  parent_url   TEXT NOT NULL DEFAULT '',
  depth        INTEGER NOT NULL DEFAULT 0,
  base_url     TEXT NOT NULL DEFAULT '',
  spec_version TEXT NOT NULL DEFAULT '',
  sha256       TEXT NOT NULL DEFAULT '',
  entry_count  INTEGER NOT NULL DEFAULT 0,
  findings     TEXT NOT NULL DEFAULT '[]',
  first_seen   TEXT NOT NULL,
  last_seen    TEXT NOT NULL,
  changed_at   TEXT NOT NULL
);

CREATE TABLE entries (
  catalog_url  TEXT NOT NULL,
  identifier   TEXT NOT NULL,
  version      TEXT NOT NULL DEFAULT '',
  type         TEXT NOT NULL,
  url          TEXT NOT NULL DEFAULT '', -- as written
  resolved_url TEXT NOT NULL DEFAULT '',
  inline       INTEGER NOT NULL DEFAULT 0,
  display_name TEXT NOT NULL DEFAULT '',
  raw          TEXT NOT NULL,
  first_seen   TEXT NOT NULL,
  last_seen    TEXT NOT NULL,
  changed_at   TEXT NOT NULL,
  PRIMARY KEY (catalog_url, identifier, version)
);

-- Server Cards. key is the URL the card was fetched from, or for an inline
-- card the catalog URL plus a JSON pointer fragment.
CREATE TABLE cards (
  key          TEXT PRIMARY KEY,
  source_url   TEXT NOT NULL DEFAULT '',
  inline       INTEGER NOT NULL DEFAULT 0,
  sha256       TEXT NOT NULL,
  schema       TEXT NOT NULL DEFAULT '',
  name         TEXT NOT NULL DEFAULT '',
  title        TEXT NOT NULL DEFAULT '',
  version      TEXT NOT NULL DEFAULT '',
  description  TEXT NOT NULL DEFAULT '',
  website_url  TEXT NOT NULL DEFAULT '',
  grade        TEXT NOT NULL,         -- conformant, near_conformant, non_conformant
  findings     TEXT NOT NULL DEFAULT '[]',
  json         TEXT NOT NULL,         -- the card as parsed (raw bytes are in documents)
  first_seen   TEXT NOT NULL,
  last_seen    TEXT NOT NULL,
  changed_at   TEXT NOT NULL
);

-- Remote endpoints, merged on the normalised URL across cards and domains.
CREATE TABLE remotes (
  url_norm    TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  type        TEXT NOT NULL,
  templated   INTEGER NOT NULL DEFAULT 0,
  card_key    TEXT NOT NULL,          -- the card that last declared it
  json        TEXT NOT NULL,          -- the remote object as declared
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  changed_at  TEXT NOT NULL
);

-- The listing chain: which domain listed which catalog, card and remote.
-- remote_norm is '' for a card that declares no remote.
CREATE TABLE listings (
  domain      TEXT NOT NULL,
  catalog_url TEXT NOT NULL,
  identifier  TEXT NOT NULL,
  card_key    TEXT NOT NULL,
  remote_norm TEXT NOT NULL,
  active      INTEGER NOT NULL DEFAULT 1, -- 0 once the domain stopped listing it
  first_seen  TEXT NOT NULL,
  last_seen   TEXT NOT NULL,
  PRIMARY KEY (domain, catalog_url, identifier, card_key, remote_norm)
);
CREATE INDEX listings_remote ON listings (remote_norm);
CREATE INDEX listings_card ON listings (card_key);

-- One row per probe decision (probed or skipped, and why), append-only.
CREATE TABLE probe_decisions (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER,
  remote_norm TEXT NOT NULL,
  url         TEXT NOT NULL,
  decided_at  TEXT NOT NULL,
  decision    TEXT NOT NULL,          -- probe, skip
  reason      TEXT NOT NULL
);
CREATE INDEX probe_decisions_remote ON probe_decisions (remote_norm, id);

-- One row per probe, append-only; result is the probe's full JSON record.
CREATE TABLE probes (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER,
  remote_norm TEXT NOT NULL,
  url         TEXT NOT NULL,
  probed_at   TEXT NOT NULL,
  outcome     TEXT NOT NULL,
  transport   TEXT NOT NULL DEFAULT '',
  protocol    TEXT NOT NULL DEFAULT '',
  server_name TEXT NOT NULL DEFAULT '',
  server_version TEXT NOT NULL DEFAULT '',
  tool_count  INTEGER,
  card_sha256 TEXT NOT NULL DEFAULT '',
  result      TEXT NOT NULL
);
CREATE INDEX probes_remote ON probes (remote_norm, id);

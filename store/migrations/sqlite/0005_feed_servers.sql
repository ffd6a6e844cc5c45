-- The feed's read model: one row per feed record (a remote endpoint merged
-- on its normalised URL across cards and domains, kind 0, key the URL; or a
-- card that declares no remote, kind 1, key the card key), with what the
-- feed, its filters and its paging need as typed columns. The store keeps it
-- in the same transaction as the writes that change it (SaveDomain, probes,
-- probe decisions) and fills it for an existing database when this
-- migration is applied. The listing chain is not copied here: it grows with
-- a server's popularity and is read from listings by join.
CREATE TABLE feed_servers (
  kind                 INTEGER NOT NULL,
  key                  TEXT NOT NULL,
  endpoint             TEXT NOT NULL DEFAULT '',
  transport            TEXT NOT NULL DEFAULT '',
  templated            INTEGER NOT NULL DEFAULT 0,
  card_key             TEXT NOT NULL DEFAULT '',  -- the card describing it (best grade, then smallest key)
  card_url             TEXT NOT NULL DEFAULT '',
  card_inline          INTEGER NOT NULL DEFAULT 0,
  card_sha256          TEXT NOT NULL DEFAULT '',
  name                 TEXT NOT NULL DEFAULT '',
  title                TEXT NOT NULL DEFAULT '',
  version              TEXT NOT NULL DEFAULT '',
  description          TEXT NOT NULL DEFAULT '',
  website_url          TEXT NOT NULL DEFAULT '',
  repository           TEXT NOT NULL DEFAULT '',  -- the card's repository object as JSON; '' when none
  grade                TEXT NOT NULL DEFAULT '',
  findings             TEXT NOT NULL DEFAULT '[]', -- the card's distinct finding codes, sorted, as JSON
  first_seen           TEXT NOT NULL DEFAULT '',
  last_seen            TEXT NOT NULL DEFAULT '',
  probe_outcome        TEXT NOT NULL DEFAULT '',  -- '' when never probed
  probed_at            TEXT NOT NULL DEFAULT '',
  probe_transport      TEXT NOT NULL DEFAULT '',
  probe_protocol       TEXT NOT NULL DEFAULT '',
  probe_server_name    TEXT NOT NULL DEFAULT '',
  probe_server_version TEXT NOT NULL DEFAULT '',
  probe_tool_count     INTEGER,
  probe_partial        INTEGER NOT NULL DEFAULT 0,
  decision             TEXT NOT NULL DEFAULT '',  -- '' when never decided
  decision_reason      TEXT NOT NULL DEFAULT '',
  -- updated_at moves only on a change of meaning (a new record, version,
  -- card, remote, grade, probe outcome or listing); a re-fetch that found
  -- nothing new leaves it.
  updated_at           TEXT NOT NULL,
  removed_at           TEXT,                      -- NULL while listed; a tombstone after
  removed_reason       TEXT NOT NULL DEFAULT '',  -- not_listed, catalog_gone
  seq                  INTEGER NOT NULL,          -- feed_state.seq of its last change
  -- The Registry-shaped feed has one entry per describing card, in the
  -- order of each card's first record: entry_first is that first record's
  -- kind and key ('0' or '1', then the key) for every live record of the
  -- card, '' for a tombstone, so the entries stream in index order.
  entry_first          TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (kind, key)
);
CREATE INDEX feed_servers_card ON feed_servers (card_key, kind, key);
CREATE INDEX feed_servers_name ON feed_servers (name, card_key);
CREATE INDEX feed_servers_updated ON feed_servers (updated_at);
CREATE INDEX feed_servers_entry ON feed_servers (entry_first, kind, key);

-- One row: the database's identity (random, set when the read model is
-- built) and the change counter, bumped by every transaction that changes
-- what the feed says. ETags are made of the two.
CREATE TABLE feed_state (
  id    INTEGER PRIMARY KEY,
  db_id TEXT NOT NULL,
  seq   INTEGER NOT NULL
);

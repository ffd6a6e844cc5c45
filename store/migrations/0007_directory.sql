-- The directory's view (issue 11): each server's category and where it came
-- from, the tool sets that decide categories, and the remotes of Registry
-- entries, which are probed like card remotes. Portable SQL.

-- One row per server: kind 'endpoint' (subject: a remote's normalised URL),
-- 'card' (a card that declares no remote: its key) or 'registry' (a latest
-- Registry entry: its name; registry is the Registry's base URL).
-- category is '' when no rule matched, and reason says why; source is
-- name, description or tools. inputs is a hash of what the rules read, so a
-- recompute that finds nothing new writes nothing.
CREATE TABLE server_categories (
  kind        TEXT NOT NULL,
  registry    TEXT NOT NULL DEFAULT '',
  subject     TEXT NOT NULL,
  category    TEXT NOT NULL DEFAULT '',
  source      TEXT NOT NULL DEFAULT '',
  reason      TEXT NOT NULL DEFAULT '',
  evidence    TEXT NOT NULL DEFAULT '[]',
  inputs      TEXT NOT NULL DEFAULT '',
  computed_at TEXT NOT NULL,
  PRIMARY KEY (kind, registry, subject)
);
CREATE INDEX server_categories_category ON server_categories (category, kind, registry, subject);

-- The tool names of each endpoint's latest ok probe, and the set's
-- fingerprint, so the tool sets many servers list identically are counted
-- in SQL instead of in memory.
CREATE TABLE endpoint_tools (
  remote_norm TEXT PRIMARY KEY,
  probe_id    INTEGER NOT NULL,
  fingerprint TEXT NOT NULL DEFAULT '',
  tool_names  TEXT NOT NULL DEFAULT '[]',
  tool_count  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX endpoint_tools_fingerprint ON endpoint_tools (fingerprint);
CREATE INDEX probes_outcome ON probes (outcome, remote_norm, id);

-- The remotes of the latest, active version of each Registry server, by
-- normalised URL: what `probe --registry` probes. entry_sha256 is the hash
-- of the declaring server.json (a probe remembers it, as it remembers the
-- card's), entry_changed_at the entry's changed_at when the rows were made.
CREATE TABLE registry_remotes (
  source           TEXT NOT NULL,
  name             TEXT NOT NULL,
  version          TEXT NOT NULL,
  url_norm         TEXT NOT NULL,
  url              TEXT NOT NULL,
  type             TEXT NOT NULL,
  entry_sha256     TEXT NOT NULL,
  entry_changed_at TEXT NOT NULL,
  PRIMARY KEY (source, name, version, url_norm)
);
CREATE INDEX registry_remotes_norm ON registry_remotes (url_norm, source, name, version);

-- Who declared the endpoint a decision is about: 'card:' and the card key,
-- or 'registry:' and name@version ('' in rows from before this migration).
ALTER TABLE probe_decisions ADD COLUMN declared_by TEXT NOT NULL DEFAULT '';

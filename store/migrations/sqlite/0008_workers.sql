-- Many workers on one frontier (`cardcrawl worker`): domain leases, host
-- leases for politeness across processes, the workers themselves, and the
-- schedules the leader keeps.

-- A worker leases a due domain by writing its id as the lease owner;
-- saving the domain's result clears it. The lease holds while its owner's
-- alive_until (moved on by each heartbeat) is ahead: a heartbeat is one
-- row's write however many domains a worker holds, and never locks domain
-- rows the crawl is writing.
ALTER TABLE domains ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
-- Due domains: pending ones, then done ones whose next_fetch_after passed.
CREATE INDEX domains_due ON domains (state, next_fetch_after);
-- A worker's own leases (heartbeat, release), kept small by being partial.
CREATE INDEX domains_leased ON domains (lease_owner) WHERE lease_owner <> '';

-- At most one request in flight per host across all workers: a row while a
-- request is out (owner, lease_until bounds it should its worker die), and
-- not_before when the host asked to be left alone (Retry-After).
CREATE TABLE host_leases (
  host        TEXT PRIMARY KEY,
  owner       TEXT NOT NULL DEFAULT '',
  lease_until TEXT NOT NULL DEFAULT '',
  not_before  TEXT NOT NULL DEFAULT ''
);

-- One row per worker process that ever ran; heartbeat_at says it is alive.
CREATE TABLE workers (
  id           TEXT PRIMARY KEY,           -- host:pid:random
  host         TEXT NOT NULL,
  pid          INTEGER NOT NULL,
  run_id       INTEGER,
  started_at   TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL,
  stopped_at   TEXT NOT NULL DEFAULT '',
  leader       INTEGER NOT NULL DEFAULT 0,
  alive_until  TEXT NOT NULL DEFAULT '',    -- last heartbeat + lease; its leases hold until then
  crawled      INTEGER NOT NULL DEFAULT 0
);

-- Periodic jobs only the leader runs (the Registry sync): when each last
-- started, so a new leader does not run one again before it is due.
CREATE TABLE schedules (
  name            TEXT PRIMARY KEY,
  last_started_at TEXT NOT NULL DEFAULT '',
  last_done_at    TEXT NOT NULL DEFAULT '',
  last_worker     TEXT NOT NULL DEFAULT '',
  last_error      TEXT NOT NULL DEFAULT '',
  runs            INTEGER NOT NULL DEFAULT 0
);

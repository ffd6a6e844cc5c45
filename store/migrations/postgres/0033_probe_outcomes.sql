-- Each endpoint's probes in brief: one row per endpoint and outcome, with
-- how many probes ended on it, when the first and the last of them were
-- made, and the newest one's id. AddProbe keeps it with every probe it
-- writes. Readers that want an endpoint's history (every JSONL record
-- carries it), its latest probe or its latest ok probe read these rows
-- instead of every probe it ever had, which grow with each crawl that
-- probes it (a weekly probe is 52 rows a year).
CREATE TABLE probe_outcomes (
  remote_norm TEXT COLLATE "C" NOT NULL,
  outcome     TEXT COLLATE "C" NOT NULL,
  probe_count BIGINT NOT NULL,
  first_at    TEXT COLLATE "C" NOT NULL,
  last_at     TEXT COLLATE "C" NOT NULL,
  last_id     BIGINT NOT NULL,
  PRIMARY KEY (remote_norm, outcome)
);
CREATE INDEX probe_outcomes_outcome ON probe_outcomes (outcome, remote_norm, last_id);
INSERT INTO probe_outcomes (remote_norm, outcome, probe_count, first_at, last_at, last_id)
  SELECT remote_norm, outcome, COUNT(*), MIN(probed_at), MAX(probed_at), MAX(id) FROM probes
  GROUP BY remote_norm, outcome;
-- Its readers (an outcome's endpoints, the latest ok probes) read the brief
-- histories now, so the index over every probe's outcome has none.
DROP INDEX IF EXISTS probes_outcome;

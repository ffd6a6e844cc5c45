-- The inputs of the last recomputation (reconciliation, namespaces,
-- categories) that found nothing to change, with the build that ran it
-- (RecomputeState): while they are the same, the steps after a crawl or a
-- Registry sync have nothing to do and are skipped.
ALTER TABLE feed_state ADD COLUMN recomputed TEXT NOT NULL DEFAULT '';

-- Which process ran a crawl, so a later run can tell a run that is still
-- going from one that was killed (kill -9 leaves no chance to say so).
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;

-- The status of the entry that declares a remote. A deprecated server stays
-- in the Registry's own list (only deleted ones leave it), so the feed keeps
-- its endpoints too; this column lets the probe pass leave them alone
-- without a join. Rows from before this migration were all of active entries.
ALTER TABLE registry_remotes ADD COLUMN status TEXT NOT NULL DEFAULT 'active';

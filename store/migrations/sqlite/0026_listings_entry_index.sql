-- Which entry of its catalog each listing came from (its index in the
-- catalog's entries), so a server's page reads what the catalog found of
-- that entry (catalog.EntryFindings) from the catalog's stored findings
-- instead of parsing the catalog's document again to find the entry.
-- NULL for listings written before this migration, until their domain is
-- crawled again: the page then still finds the entry in the document.
ALTER TABLE listings ADD COLUMN entry_index INTEGER;

-- The AI Catalog's copy of each inline card (issue 8). An AI Catalog entry
-- of a card that has no URL of its own carries the card inline, as the
-- feed republishes it (servercard.Republished: unsafe links dropped,
-- encoded as the feed encodes JSON); every export decoded and re-encoded
-- ~50,000 such cards. From here on each record of such a card keeps it
-- ('' for a card the catalog points at by URL), written with the record,
-- and the export copies it. The records there are get it from a Go step
-- (store/feed.go, afterMigration: fillCatalogCards).
ALTER TABLE feed_servers ADD COLUMN catalog_card TEXT NOT NULL DEFAULT '';

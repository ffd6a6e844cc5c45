-- PostgreSQL mirror of sqlite/0010_feed_card_parts.sql (BIGINT for INTEGER, text COLLATE "C"); the Go step that
-- fills remote and icons (store/feed.go, afterMigration) runs on both.
-- The feed's read side without its cards (issue 8). An entry of the
-- Registry-shaped feed took its remotes and icons from its describing card,
-- read and decoded for every entry of every export and every list page;
-- each record now carries them, kept with the rest of the record when the
-- crawl writes it and filled here for the records there are:
--   remote: the describing card's remote object whose URL is the record's
--           endpoint, as JSON; '' when none (a card without remotes);
--   icons:  the describing card's icons as JSON; '' when none.
-- Both are what the card decodes to, unfiltered: the feed drops the links it
-- does not republish, as it does for repository.
ALTER TABLE feed_servers ADD COLUMN remote TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE feed_servers ADD COLUMN icons TEXT COLLATE "C" NOT NULL DEFAULT '';

-- How many records are listed (not tombstones), kept by the transactions
-- that list or remove one: the feed's page says how many servers there
-- are without counting them on every request.
ALTER TABLE feed_state ADD COLUMN live BIGINT NOT NULL DEFAULT 0;
UPDATE feed_state SET live = (SELECT COUNT(*) FROM feed_servers WHERE removed_at IS NULL);

-- The feed reads the listing chains of a page of records by endpoint or by
-- card, in chain order: indexes that hold the chain serve those reads
-- alone, in order, without a lookup per listing or a sort. They replace the
-- two narrower ones (a prefix of each), so a listing costs the crawl no
-- more index writes than before.
DROP INDEX listings_remote;
CREATE INDEX listings_remote ON listings (remote_norm, active, domain, catalog_url, identifier, card_key);
DROP INDEX listings_card;
CREATE INDEX listings_card ON listings (card_key, active, domain, catalog_url, identifier, remote_norm);

-- What the listing catalog found of each listing's entry and of its own
-- signature (catalog.EntryFindings: an entry digest that does not match, a
-- signature verified, not an endorsement, invalid or unverifiable, a
-- relative URL, ...): the finding codes, distinct, sorted, space-separated;
-- '' when none. The feed's records carry them in listedBy. Listings written
-- before this migration have none until their domain is crawled again.
ALTER TABLE listings ADD COLUMN entry_codes TEXT NOT NULL DEFAULT '';
-- The feed reads listing chains from these two indexes alone (migration
-- 0010): they hold the new column too.
DROP INDEX listings_remote;
CREATE INDEX listings_remote ON listings (remote_norm, active, domain, catalog_url, identifier, card_key, entry_codes);
DROP INDEX listings_card;
CREATE INDEX listings_card ON listings (card_key, active, domain, catalog_url, identifier, remote_norm, entry_codes);

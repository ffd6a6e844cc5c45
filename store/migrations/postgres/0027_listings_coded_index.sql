-- The listings whose catalog found something of their entry or of its own
-- signature (entry_codes, migration 0024), for the filters on those codes
-- (the site's listing_finding, --listing-finding): they read these rows,
-- in key order, where they would otherwise walk every server. Most
-- listings have no codes and no entry here, so a crawl pays for the few.
CREATE INDEX listings_coded ON listings (remote_norm, card_key, active, entry_codes) WHERE entry_codes <> '';

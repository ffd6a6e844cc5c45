-- The AI Catalog export gives an entry an identifier of its own when an
-- earlier entry already has its publisher's identifier and version. It used
-- to remember every identifier it wrote (memory growing with the catalog);
-- it now asks, a page of entries at a time, which listings carry each
-- identifier, and reads this index for it (store/feedidentifier.go).
CREATE INDEX listings_identifier ON listings (identifier, active, remote_norm, card_key);

-- An endpoint's cards in key order: a feed record's refresh takes the
-- first card of its endpoint's active listings and is done when that card
-- is conformant, where it read every active listing of the endpoint (an
-- endpoint listed by thousands of domains cost that on every save of each).
CREATE INDEX listings_remote_card ON listings (remote_norm, active, card_key);

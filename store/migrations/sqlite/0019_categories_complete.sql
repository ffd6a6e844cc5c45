-- The change number at which every server had a stored category (issue 8).
-- The site's category=none reads the servers whose category row says ''
-- from server_categories_category, which is only the whole answer while
-- no server lacks a row: the recomputation checks that at its end and
-- records feed_state.seq here, and any change since (a new server, a
-- Registry remote) moves seq past it. -1: never.
ALTER TABLE feed_state ADD COLUMN categories_seq INTEGER NOT NULL DEFAULT -1;

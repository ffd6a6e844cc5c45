-- The change number at which every namespace a server's name gives had a
-- row (issue 8), and whether some server's name gave none then. The
-- site's ns=unknown reads the namespaces whose method is '' from
-- namespaces_method, which is only the whole answer while no named
-- namespace lacks a row: a complete namespace pass records feed_state.seq
-- here, and any change since (a new card or Registry entry) moves seq past
-- it. -1: never.
ALTER TABLE feed_state ADD COLUMN namespaces_seq INTEGER NOT NULL DEFAULT -1;
ALTER TABLE feed_state ADD COLUMN namespaces_bare INTEGER NOT NULL DEFAULT 1;

-- What changed since a change number (issue 8). The site's search index
-- (store/searchindex.go) lives in a file of its own, kept by the process
-- that serves the site, which reads this database without writing it; it
-- catches up by reading the feed records written after the last change
-- number it saw. Every write of a record stores the transaction's change
-- number (feed_state.seq, taken in commit order), so this index lists them
-- in the order they were committed.
CREATE INDEX feed_servers_seq ON feed_servers (seq, kind, key);

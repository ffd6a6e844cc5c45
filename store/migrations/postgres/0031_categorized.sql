-- Where the last category pass began: the rules' version, the tool sets
-- counted as common, and the change number it read first (''
-- when no pass recorded one). While rules and common sets are the same, the
-- next pass reads only the servers whose feed record was written after that
-- number, the endpoints whose tool set was stored at or after it (seq, the
-- change number when it was stored) and the Registry's entries, instead of
-- every server.
ALTER TABLE feed_state ADD COLUMN categorized TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE endpoint_tools ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX endpoint_tools_seq ON endpoint_tools (seq, remote_norm);

-- What each card's reconciliation rows were computed from (inputs: a hash
-- of the card's document hash, judgement and listing domains; '' on
-- Registry-only rows and rows of older builds), and what all of them were
-- (reconcile_basis: the build and the Registry's state). A reconciliation
-- under the same basis takes a card's stored rows as they are while its
-- inputs are the same, instead of reading and matching the card again.
ALTER TABLE reconcile_results ADD COLUMN inputs TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE reconcile_staging ADD COLUMN inputs TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE feed_state ADD COLUMN reconcile_basis TEXT COLLATE "C" NOT NULL DEFAULT '';

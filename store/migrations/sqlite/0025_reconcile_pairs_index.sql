-- The cards paired with a Registry entry, few among every card's row
-- (most say card_only). PostgreSQL needs it to answer a feed page's "did
-- this card pair" without hashing every reconcile row once per page
-- (migrations/postgres/0025); SQLite probes reconcile_results_card for
-- that and keeps this one so both schemas have the same indexes. Partial,
-- so it holds the pairs alone.
CREATE INDEX reconcile_results_pair ON reconcile_results (card_key) WHERE kind = 'pair';

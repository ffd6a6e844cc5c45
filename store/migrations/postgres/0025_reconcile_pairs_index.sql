-- The cards paired with a Registry entry, few among every card's row
-- (most say card_only): a feed read asks of each record's card whether it
-- paired (an EXISTS in the page's query). PostgreSQL answered that by
-- hashing every reconcile row once per page, kind = 'pair' being no
-- prefix of reconcile_results_card: 26 ms a page at 100,000 cards, three
-- quarters of a JSONL export's server time. Partial, so it holds the
-- pairs alone.
CREATE INDEX reconcile_results_pair ON reconcile_results (card_key) WHERE kind = 'pair';

-- Which replacement of the stored reconciliation is current: each swap
-- moves it. A computation that found the stored rows unchanged writes
-- nothing, and checks that no other swap came in meanwhile.
ALTER TABLE feed_state ADD COLUMN reconcile_gen BIGINT NOT NULL DEFAULT 0;

-- kassir:no-transaction
--
-- The client_id velocity counted inside the create's own transaction (issue 36 item 2, "cheap
-- enough that npm run bench with rules on keeps its ratio within 5 % of rules off"): the window is
-- the payments themselves, counted under a lock on the payer's key (payment_creation_facts,
-- src/db/functions/payment_creation_facts.sql), instead of entries in risk_velocity written by a
-- transaction of their own before the create. What this needs:
--
-- 1. an index that finds a client_id's payments of the window without reading all its payments
--    of all time: (client_id, created_at), in place of migration 030's (client_id), which the
--    console's search by client_id reads as well. Built CONCURRENTLY (writers go on), the old one
--    dropped the same way once the new one is there. A build a crash left invalid is dropped and
--    made again: every statement here may run again.
-- 2. the functions' new overloads (src/db/functions/): the creation facts and the window cascade
--    take the limit and answer the window's figures. Expand, then contract (docs/operations.md
--    "Upgrades"): the previous release's signatures stay, as wrappers of the new ones with no
--    limit, and so do its batched client_id checks (risk_client_checks) and their window rows in
--    risk_velocity, which this release no longer reads; a later release drops them.

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('payments_client_created') AND NOT indisvalid) THEN
    DROP INDEX payments_client_created;
  END IF;
END
$$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS payments_client_created ON payments (client_id, created_at) WHERE client_id IS NOT NULL;

DROP INDEX CONCURRENTLY IF EXISTS payments_client;

-- Issue 33 item 4: test mode, as Stripe's. A terminal is test or live for its whole life (set when
-- the operator creates it); its payments and payouts are test objects too, marked on the row so
-- that every list, report and check can tell them apart without a join.
--
-- A test payment gets generated requisites from no executor and no provider, holds no deposit and
-- posts nothing to the ledger; a test payout reserves nothing and is taken by no executor. Test
-- money therefore never reaches a balance, a report or the ledger check.
ALTER TABLE terminals ADD COLUMN is_test boolean NOT NULL DEFAULT false;
ALTER TABLE payments ADD COLUMN is_test boolean NOT NULL DEFAULT false;
ALTER TABLE payouts ADD COLUMN is_test boolean NOT NULL DEFAULT false;

-- A live payment is executed by exactly one of a requisite (an executor's) or a provider; a test
-- payment by neither, and it holds nothing.
ALTER TABLE payments DROP CONSTRAINT payments_executed_by;
ALTER TABLE payments ADD CONSTRAINT payments_executed_by CHECK (
  CASE WHEN is_test THEN requisite_id IS NULL AND provider_id IS NULL AND executor_id IS NULL AND hold IS NULL
       ELSE (requisite_id IS NULL) <> (provider_id IS NULL) END);

-- No executor takes a test payout and no provider is sent one.
ALTER TABLE payouts ADD CONSTRAINT payouts_test_touches_no_one CHECK (NOT is_test OR (executor_id IS NULL AND provider_id IS NULL));

-- Lost demand: payment creates refused because the service could not serve them — PAY_004 (no
-- requisites available) and PAY_005 (too many pending payments of one amount on the terminal).
-- Such a create leaves nothing behind (its transaction is rolled back), so the operator could not
-- see how much demand the pool turned away; the dashboard (src/reports/dashboard.*) reads it here.
--
-- Written after the refusal is decided, in batches, outside the create's transaction
-- (src/payments/refusals.ts): a telemetry row, not part of any payment. No foreign keys for the
-- same reason: checking them would lock the terminal's and the merchant's rows for every batch.
CREATE TABLE payment_refusals (
  id          bigserial PRIMARY KEY,
  -- When the create was refused (the service's clock, set by the caller: the batch may be
  -- written a moment later).
  created_at  timestamptz NOT NULL,
  merchant_id uuid NOT NULL,
  terminal_id uuid NOT NULL,
  code        text NOT NULL CHECK (code IN ('PAY_004', 'PAY_005')),
  method      text NOT NULL,
  -- The bank (or mobile operator) the merchant asked for, as its code; null when it named none.
  bank        text,
  currency    text NOT NULL,
  amount      numeric(20, 2) NOT NULL CHECK (amount > 0)
);
-- The dashboard reads the refusals of the last hour or day.
CREATE INDEX payment_refusals_created ON payment_refusals (created_at);

-- The dashboard counts payouts in progress (taken by an executor or sent to a provider) on every
-- refresh; without this it read the whole payouts table each time (pending ones have
-- payouts_available already). An executor's own list of the payouts it took reads it too. Small:
-- a payout is in it only while it is processing, and status changes already rewrite the row's
-- index entries (payouts_available's predicate names status).
CREATE INDEX payouts_processing ON payouts (executor_id) WHERE status = 'processing';

-- What people are told by Telegram (issue 37 item 2): the state an event is "a crossing" of, so
-- that each crossing is told once.

-- An executor's own low-deposit line (PATCH /admin/v1/executors/{id} `low_deposit_threshold`,
-- USDT; null: never told) and whether its available balance is below it now: the minute's sweep
-- flips `deposit_low` and tells the executor only when it goes from false to true.
ALTER TABLE executors
  ADD COLUMN low_deposit_threshold numeric(38, 6) CHECK (low_deposit_threshold IS NULL OR low_deposit_threshold >= 0),
  ADD COLUMN deposit_low boolean NOT NULL DEFAULT false;

-- A merchant's webhook endpoint (its URL) and its failed attempts in a row: a 2xx answer resets
-- it. `failing_since` is the first failure of the current run, so the run names its message once
-- ('webhook_failing:<merchant>:<since>'); the alert rules read the failures.
CREATE TABLE webhook_endpoints (
  merchant_id     uuid NOT NULL REFERENCES merchants (id),
  url             text NOT NULL,
  failures        integer NOT NULL DEFAULT 0,
  failing_since   timestamptz,
  last_attempt_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, url)
);
CREATE INDEX webhook_endpoints_failing ON webhook_endpoints (failures) WHERE failures > 0;

-- Executors' deposits and withdrawals on chain (issue 17 item 5).
--
-- Deposits: each executor gets its own TRC-20 address, derived from the operator's extended public
-- key (KASSIR_TRON_DEPOSIT_XPUB) at child 0/<deposit_index>. Only the index and the (public)
-- address are kept: no key of any kind is stored. The address is kept as it was told to the
-- executor, so that transfers to it are still watched should the configured key change.
ALTER TABLE executors
  ADD COLUMN deposit_index   integer CHECK (deposit_index >= 0 AND deposit_index < 2147483648),
  ADD COLUMN deposit_address text,
  ADD CONSTRAINT executors_deposit_index_key UNIQUE (deposit_index),
  ADD CONSTRAINT executors_deposit_address_key UNIQUE (deposit_address),
  ADD CONSTRAINT executors_deposit_pair CHECK ((deposit_index IS NULL) = (deposit_address IS NULL)),
  -- Where the poller starts looking next time (the block time of transfers already settled).
  ADD COLUMN deposit_scanned_to timestamptz;
CREATE SEQUENCE executor_deposit_index MINVALUE 0 START 0;

-- Every incoming USDT transfer credited to an executor, once: a transfer is one log of one
-- transaction, so (tx_hash, log_index) is unique however many pollers see it. The row and its
-- `executor_deposit` posting (ref_id = id, memo = tx_hash) are written in one transaction.
CREATE TABLE executor_deposits (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  executor_id  uuid NOT NULL REFERENCES executors(id),
  address      text NOT NULL,
  tx_hash      text NOT NULL CHECK (tx_hash ~ '^[0-9a-f]{64}$'),
  log_index    integer NOT NULL CHECK (log_index >= 0),
  from_address text NOT NULL,
  amount       numeric(38, 6) NOT NULL CHECK (amount > 0),
  block_number bigint NOT NULL,
  block_time   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT executor_deposits_transfer_key UNIQUE (tx_hash, log_index)
);
CREATE INDEX executor_deposits_executor_created ON executor_deposits (executor_id, created_at DESC);

-- Withdrawals of an executor's deposit go through the same table, sender and confirmation as the
-- merchants': a withdrawal belongs either to a merchant's terminal or to an executor.
ALTER TABLE withdrawals
  ALTER COLUMN merchant_id DROP NOT NULL,
  ALTER COLUMN terminal_id DROP NOT NULL,
  ADD COLUMN executor_id uuid REFERENCES executors(id),
  ADD CONSTRAINT withdrawals_one_owner CHECK (
    (executor_id IS NULL AND merchant_id IS NOT NULL AND terminal_id IS NOT NULL)
    OR (executor_id IS NOT NULL AND merchant_id IS NULL AND terminal_id IS NULL));
CREATE INDEX withdrawals_executor_created ON withdrawals (executor_id, created_at DESC) WHERE executor_id IS NOT NULL;

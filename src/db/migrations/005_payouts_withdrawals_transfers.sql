-- Money leaving: payouts (RUB to cards and SBP, executed by executors), USDT withdrawals to TRC-20
-- wallets, transfers between a merchant's terminals, and stored answers for Idempotency-Key.

CREATE TABLE payouts (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id    uuid NOT NULL REFERENCES merchants(id),
  terminal_id    uuid NOT NULL REFERENCES terminals(id),
  ext_id         text NOT NULL CHECK (length(ext_id) BETWEEN 1 AND 255),
  amount         numeric(20, 2) NOT NULL CHECK (amount > 0),
  currency       text NOT NULL DEFAULT 'RUB',
  method         text NOT NULL CHECK (method IN ('card', 'sbp')),
  requisites     text NOT NULL,
  holder_name    text NOT NULL,
  bank           text NOT NULL DEFAULT '',
  notify_url     text,
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
  -- Fixed at creation (DESIGN.md decision 12): reserve = amount / rate × (1 + payout_rate / 100).
  rate           numeric(20, 8) NOT NULL CHECK (rate > 0),
  payout_rate    numeric(7, 4) NOT NULL,
  reserve        numeric(38, 6) NOT NULL CHECK (reserve > 0),
  executor_id    uuid REFERENCES executors(id),
  proof_key      text,
  failure_reason text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  taken_at       timestamptz,
  completed_at   timestamptz,
  CONSTRAINT payouts_merchant_ext_id_key UNIQUE (merchant_id, ext_id)
);
CREATE INDEX payouts_merchant_created ON payouts (merchant_id, created_at DESC);
CREATE INDEX payouts_available ON payouts (created_at) WHERE status = 'pending';

CREATE TABLE withdrawals (
  id                       uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id              uuid NOT NULL REFERENCES merchants(id),
  terminal_id              uuid NOT NULL REFERENCES terminals(id),
  amount                   numeric(38, 6) NOT NULL CHECK (amount > 0),
  fee                      numeric(38, 6) NOT NULL CHECK (fee >= 0),
  subtract_fee_from_amount boolean NOT NULL,
  -- What the wallet receives: amount, or amount − fee when the fee is taken from it.
  send_amount              numeric(38, 6) NOT NULL CHECK (send_amount > 0),
  -- What is frozen and, on completion, debited: amount + fee, or amount.
  reserve                  numeric(38, 6) NOT NULL CHECK (reserve > 0),
  address                  text NOT NULL,
  status                   text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
  adapter                  text NOT NULL CHECK (adapter IN ('manual', 'tron')),
  tx_hash                  text,
  -- The signed transaction, stored before it is broadcast: after a crash the same transaction is
  -- looked up and re-broadcast, never a second one (idempotent by withdrawal id).
  signed_tx                jsonb,
  tx_expires_at            timestamptz,
  failure_reason           text,
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX withdrawals_merchant_created ON withdrawals (merchant_id, created_at DESC);
CREATE UNIQUE INDEX withdrawals_tx_hash ON withdrawals (tx_hash) WHERE tx_hash IS NOT NULL;

CREATE TABLE transfers (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id      uuid NOT NULL REFERENCES merchants(id),
  from_terminal_id uuid NOT NULL REFERENCES terminals(id),
  to_terminal_id   uuid NOT NULL REFERENCES terminals(id),
  amount           numeric(38, 6) NOT NULL CHECK (amount > 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  CHECK (from_terminal_id <> to_terminal_id)
);

-- Idempotency-Key (beyond the spec): the first answer to a key is kept for 24 h and replayed.
CREATE TABLE idempotency_keys (
  merchant_id   uuid NOT NULL REFERENCES merchants(id),
  key           text NOT NULL,
  request_hash  bytea NOT NULL,
  status_code   integer,
  response_body text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Kassir foundation schema: merchants and their keys, terminals, rates, the bank directory,
-- executors and their requisites, payments, the double-entry ledger and the operator audit log.
-- Money is numeric everywhere (DESIGN.md decision 10): fiat 2 decimals, USDT 6, rates 8.

CREATE TABLE settings (
  key        text PRIMARY KEY,
  value      text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE merchants (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The Secret Key signs requests, so it must be usable, not only checkable: stored encrypted
-- (AES-256-GCM under the master key). During a rotation the old secret stays valid until
-- expires_at (DESIGN.md decision 2).
CREATE TABLE merchant_secrets (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  secret_enc  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz
);
CREATE INDEX merchant_secrets_merchant ON merchant_secrets (merchant_id);

CREATE TABLE terminals (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id    uuid NOT NULL REFERENCES merchants(id),
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  currency       text NOT NULL CHECK (currency IN ('RUB', 'KZT', 'AZN', 'TJS')),
  payin_rate     numeric(7, 4) NOT NULL DEFAULT 0 CHECK (payin_rate >= 0 AND payin_rate < 100),
  payout_rate    numeric(7, 4) NOT NULL DEFAULT 0 CHECK (payout_rate >= 0 AND payout_rate < 100),
  withdrawal_fee numeric(20, 6) NOT NULL DEFAULT 0 CHECK (withdrawal_fee >= 0),
  is_active      boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX terminals_merchant ON terminals (merchant_id);

-- API keys only need checking: stored as SHA-256 of the (high-entropy, random) key.
CREATE TABLE terminal_api_keys (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  key_hash    bytea NOT NULL UNIQUE,
  key_prefix  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz
);
CREATE INDEX terminal_api_keys_terminal ON terminal_api_keys (terminal_id);

-- Manual USDT rates: the price of 1 USDT in the currency (e.g. RUB 95.5).
CREATE TABLE rates (
  currency   text PRIMARY KEY CHECK (currency ~ '^[A-Z]{3}$'),
  rate       numeric(20, 8) NOT NULL CHECK (rate > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A terminal's own rate for a currency, overriding the manual rate (the terminal's rate source).
CREATE TABLE terminal_rates (
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  currency    text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  rate        numeric(20, 8) NOT NULL CHECK (rate > 0),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (terminal_id, currency)
);

CREATE TABLE banks (
  code       text PRIMARY KEY CHECK (code ~ '^[a-z0-9_]{2,64}$'),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  country    text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  kind       text NOT NULL CHECK (kind IN ('bank', 'operator')),
  is_active  boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE executors (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  token_hash bytea NOT NULL UNIQUE,
  is_active  boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE requisites (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  executor_id  uuid NOT NULL REFERENCES executors(id),
  type         text NOT NULL CHECK (type IN ('card', 'sbp', 'phone', 'sim', 'qr')),
  value        text NOT NULL CHECK (length(value) BETWEEN 1 AND 2000),
  bank_code    text REFERENCES banks(code),
  holder       text NOT NULL DEFAULT '',
  currency     text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  country      text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
  methods      text[] NOT NULL CHECK (cardinality(methods) > 0),
  min_amount   numeric(20, 2) NOT NULL DEFAULT 0 CHECK (min_amount >= 0),
  max_amount   numeric(20, 2) CHECK (max_amount IS NULL OR max_amount >= min_amount),
  is_active    boolean NOT NULL DEFAULT true,
  last_used_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX requisites_pool ON requisites (currency, type, last_used_at NULLS FIRST) WHERE is_active;
CREATE INDEX requisites_executor ON requisites (executor_id);

CREATE TABLE payments (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id        uuid NOT NULL REFERENCES merchants(id),
  terminal_id        uuid NOT NULL REFERENCES terminals(id),
  ext_id             text NOT NULL CHECK (length(ext_id) BETWEEN 1 AND 255),
  amount             numeric(20, 2) NOT NULL CHECK (amount > 0),
  currency           text NOT NULL,
  method             text NOT NULL,
  status             text NOT NULL CHECK (status IN
                       ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL', 'CANCELLED', 'CANCELLED_APPEAL', 'DISPUTE')),
  rate               numeric(20, 8) NOT NULL CHECK (rate > 0),
  payin_rate         numeric(7, 4) NOT NULL,
  -- What the payer was given. A snapshot, not a join: the requisite may be edited or retired
  -- later, and the payment must keep showing what it showed.
  requisite_id       uuid NOT NULL REFERENCES requisites(id),
  req_type           text NOT NULL,
  req_value          text NOT NULL,
  req_bank_code      text,
  req_holder         text NOT NULL,
  req_country        text NOT NULL,
  req_currency       text NOT NULL,
  -- The amount the requisite receives, in req_currency: the order amount for domestic methods,
  -- `requisites.amount_local` for cross-border ones. A notification is matched on it.
  payer_amount       numeric(20, 2) NOT NULL CHECK (payer_amount > 0),
  cross_border       boolean NOT NULL,
  client_id          text,
  notify_url         text,
  notification_token text,
  page_token         text NOT NULL UNIQUE,
  valid_until        timestamptz NOT NULL,
  cancel_reason      text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT payments_merchant_ext_id_key UNIQUE (merchant_id, ext_id)
);
-- The cascade's promise, enforced by the database: one requisite never has two PENDING payments
-- of the same amount, so a transfer notification of an amount always names one payment.
CREATE UNIQUE INDEX payments_pending_requisite_amount ON payments (requisite_id, payer_amount) WHERE status = 'PENDING';
CREATE INDEX payments_pending_terminal_amount ON payments (terminal_id, amount) WHERE status = 'PENDING';
CREATE INDEX payments_pending_valid_until ON payments (valid_until) WHERE status = 'PENDING';
CREATE INDEX payments_terminal_created ON payments (terminal_id, created_at);

-- Double-entry ledger (DESIGN.md decisions 10, 11, 14). Every balance change is one
-- ledger_transactions row whose entries sum to zero; an account's balance is the sum of its
-- entries. Terminal accounts also keep it on the row, updated in the same statement as the
-- entries, so that the CHECK below forbids overdrafts in SQL. System accounts do not: every
-- pay-in touches them, and a running total there would make one row every payment waits on;
-- their balance is summed from the entries when asked for.
CREATE TABLE ledger_accounts (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind        text NOT NULL CHECK (kind IN
                ('terminal_available', 'terminal_frozen', 'system_incoming', 'system_fee_revenue',
                 'system_adjustments', 'system_outgoing')),
  terminal_id uuid REFERENCES terminals(id),
  merchant_id uuid REFERENCES merchants(id),
  currency    text NOT NULL DEFAULT 'USDT',
  balance     numeric(38, 6) NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT ledger_accounts_terminal_nonnegative
    CHECK (kind NOT IN ('terminal_available', 'terminal_frozen') OR balance >= 0),
  CONSTRAINT ledger_accounts_terminal_owner
    CHECK ((kind LIKE 'terminal_%') = (terminal_id IS NOT NULL AND merchant_id IS NOT NULL))
);
CREATE UNIQUE INDEX ledger_accounts_terminal_kind ON ledger_accounts (terminal_id, kind) WHERE terminal_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_accounts_system_kind ON ledger_accounts (kind) WHERE terminal_id IS NULL;

INSERT INTO ledger_accounts (kind) VALUES
  ('system_incoming'), ('system_fee_revenue'), ('system_adjustments'), ('system_outgoing');

CREATE TABLE ledger_transactions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind        text NOT NULL,
  -- What caused the posting; (kind, ref_id) is unique so a cause is posted at most once.
  ref_id      uuid,
  merchant_id uuid REFERENCES merchants(id),
  memo        text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX ledger_transactions_once ON ledger_transactions (kind, ref_id) WHERE ref_id IS NOT NULL;

CREATE TABLE ledger_entries (
  id             bigserial PRIMARY KEY,
  transaction_id uuid NOT NULL REFERENCES ledger_transactions(id),
  account_id     uuid NOT NULL REFERENCES ledger_accounts(id),
  amount         numeric(38, 6) NOT NULL CHECK (amount <> 0),
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ledger_entries_transaction ON ledger_entries (transaction_id);
CREATE INDEX ledger_entries_account ON ledger_entries (account_id);

-- Checked at COMMIT: a ledger transaction whose entries do not sum to zero cannot be committed.
CREATE FUNCTION ledger_assert_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  SELECT coalesce(sum(amount), 0) INTO total FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
  IF total <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', NEW.transaction_id, total
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced
  AFTER INSERT ON ledger_entries DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_assert_balanced();

-- Entries are history: never updated or deleted.
CREATE FUNCTION ledger_forbid_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_forbid_change();

CREATE TABLE audit_log (
  id          bigserial PRIMARY KEY,
  actor       text NOT NULL,
  action      text NOT NULL,
  object_type text NOT NULL,
  object_id   text,
  before      jsonb,
  after       jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_object ON audit_log (object_type, object_id);

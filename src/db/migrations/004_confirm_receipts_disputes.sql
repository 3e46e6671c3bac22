-- Confirmations, receipts and disputes (spec "POST /v1/payments/{id}/confirm", "/receipt",
-- "/dispute", "/dispute/cancel"; DESIGN.md decision 7).

-- A confirm starts verification: without a matching notification by verify_until the payment is
-- CANCELLED ("transfer not found"). Until then it stays PENDING, even past valid_until: the payer
-- says the money is on its way.
ALTER TABLE payments ADD COLUMN verify_until timestamptz;

DROP INDEX payments_pending_valid_until;
CREATE INDEX payments_pending_deadline ON payments ((coalesce(verify_until, valid_until))) WHERE status = 'PENDING';

-- A receipt: an uploaded file in the file store (storage_key, with its detected type, size and
-- SHA-256) or the merchant's own link (url).
CREATE TABLE receipts (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  merchant_id  uuid NOT NULL REFERENCES merchants(id),
  payment_id   uuid NOT NULL REFERENCES payments(id),
  source       text NOT NULL CHECK (source IN ('confirm', 'receipt', 'dispute', 'page')),
  storage_key  text UNIQUE,
  content_type text,
  size_bytes   bigint CHECK (size_bytes >= 0),
  sha256       bytea,
  url          text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  CHECK ((storage_key IS NOT NULL) <> (url IS NOT NULL)),
  CHECK (storage_key IS NULL OR (content_type IS NOT NULL AND size_bytes IS NOT NULL AND sha256 IS NOT NULL))
);
CREATE INDEX receipts_payment ON receipts (payment_id, created_at);

-- "Signal visible in deal card": every confirm, from the merchant or the payment page.
CREATE TABLE payment_confirmations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id  uuid NOT NULL REFERENCES payments(id),
  merchant_id uuid NOT NULL REFERENCES merchants(id),
  source      text NOT NULL CHECK (source IN ('merchant', 'page')),
  receipt_id  uuid REFERENCES receipts(id),
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_confirmations_payment ON payment_confirmations (payment_id, created_at);

CREATE TABLE disputes (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  payment_id     uuid NOT NULL REFERENCES payments(id),
  merchant_id    uuid NOT NULL REFERENCES merchants(id),
  amount         numeric(20, 2) CHECK (amount > 0),
  comment        text,
  -- The dispute card's receipt: set at opening or by the first later receipt, never overwritten.
  receipt_id     uuid REFERENCES receipts(id),
  status         text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'cancelled', 'approved', 'rejected')),
  decided_amount numeric(20, 2),
  decided_by     text,
  decided_at     timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX disputes_one_open ON disputes (payment_id) WHERE status = 'open';
CREATE INDEX disputes_status ON disputes (status, created_at);

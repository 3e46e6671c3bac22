-- Upstream providers: other aggregators (first of all another Kassir) that execute payments and
-- payouts through the same merchant API, with routes that decide the order they are tried in.

CREATE TABLE providers (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name            text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind            text NOT NULL CHECK (kind IN ('kassir')),
  base_url        text NOT NULL,
  -- Credentials of our merchant account at the provider: sealed, they sign our requests and check
  -- the provider's webhook signatures.
  api_key_enc     text NOT NULL,
  secret_key_enc  text NOT NULL,
  is_active       boolean NOT NULL DEFAULT true,
  -- Circuit breaker: consecutive failures, and until when the provider is out of rotation.
  failures        integer NOT NULL DEFAULT 0,
  open_until      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A terminal's routes, in the order tried; a terminal without routes uses the executors only.
CREATE TABLE terminal_routes (
  terminal_id uuid NOT NULL REFERENCES terminals(id),
  position    integer NOT NULL,
  provider_id uuid REFERENCES providers(id),
  -- Optional narrowing: the route applies only to these currencies / methods (null: all).
  currencies  text[],
  methods     text[],
  PRIMARY KEY (terminal_id, position)
);

-- A payment executed by a provider has no requisite of ours.
ALTER TABLE payments ALTER COLUMN requisite_id DROP NOT NULL;
ALTER TABLE payments ADD COLUMN provider_id uuid REFERENCES providers(id);
ALTER TABLE payments ADD COLUMN provider_payment_id text;
-- The token we gave the provider for this payment's callbacks (X-Notification-Token).
ALTER TABLE payments ADD COLUMN provider_token text;
ALTER TABLE payments ADD CONSTRAINT payments_executed_by CHECK ((requisite_id IS NULL) <> (provider_id IS NULL));
CREATE UNIQUE INDEX payments_provider_payment ON payments (provider_id, provider_payment_id) WHERE provider_id IS NOT NULL;
CREATE INDEX payments_provider_open ON payments (provider_id, updated_at) WHERE provider_id IS NOT NULL AND status IN ('PENDING', 'DISPUTE', 'PROCESSING');

ALTER TABLE payouts ADD COLUMN provider_id uuid REFERENCES providers(id);
ALTER TABLE payouts ADD COLUMN provider_payout_id text;
CREATE UNIQUE INDEX payouts_provider_payout ON payouts (provider_id, provider_payout_id) WHERE provider_id IS NOT NULL;

-- Callbacks already applied, by the provider's event id: a replayed callback changes nothing.
CREATE TABLE provider_callbacks (
  provider_id uuid NOT NULL REFERENCES providers(id),
  event_id    text NOT NULL,
  resource_id text NOT NULL,
  event       text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider_id, event_id)
);

-- Work to do at a provider after a local change (open a dispute, forward a receipt, cancel a
-- dispute): written in the same transaction as the change, carried out by a job.
CREATE TABLE provider_actions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  provider_id uuid NOT NULL REFERENCES providers(id),
  payment_id  uuid NOT NULL REFERENCES payments(id),
  action      text NOT NULL CHECK (action IN ('open_dispute', 'send_receipt', 'cancel_dispute')),
  receipt_id  uuid REFERENCES receipts(id),
  params      jsonb NOT NULL DEFAULT '{}',
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
  attempts    integer NOT NULL DEFAULT 0,
  last_error  text,
  seq         bigserial NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  done_at     timestamptz
);
CREATE INDEX provider_actions_pending ON provider_actions (payment_id, seq) WHERE status = 'pending';

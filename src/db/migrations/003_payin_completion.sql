-- Pay-in completion: executor notifications, completed payments, the webhook outbox and its
-- delivery log.

ALTER TABLE payments ADD COLUMN completed_at timestamptz;
-- The amount actually received, in the order currency: the order amount for a normal completion,
-- the operator's amount for COMPLETED_APPEAL (DESIGN.md decision 7). The credit is computed from it.
ALTER TABLE payments ADD COLUMN received_amount numeric(20, 2);

-- Every notification an executor's companion app (or the operator) reported, matched or not.
CREATE TABLE notifications (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  executor_id          uuid NOT NULL REFERENCES executors(id),
  requisite_id         uuid NOT NULL REFERENCES requisites(id),
  amount               numeric(20, 2) NOT NULL CHECK (amount > 0),
  text                 text,
  received_at          timestamptz,
  parsed_bank          text,
  -- matched: completed payment_id; unmatched: kept for the operator; late: arrived after its
  -- payment expired (candidate_payment_id is the payment it probably belongs to).
  status               text NOT NULL CHECK (status IN ('matched', 'unmatched', 'late', 'resolved')),
  payment_id           uuid REFERENCES payments(id),
  candidate_payment_id uuid REFERENCES payments(id),
  -- Identifies repeats of one notification (the companion app retrying): same requisite, amount,
  -- time and text. Null when the app sent neither time nor text and repeats cannot be told apart.
  dedupe_key           bytea UNIQUE,
  resolved_note        text,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_status ON notifications (status, created_at) WHERE status IN ('unmatched', 'late');
CREATE INDEX notifications_payment ON notifications (payment_id);
CREATE UNIQUE INDEX notifications_one_match_per_payment ON notifications (payment_id) WHERE status = 'matched';

-- Where a late notification looks for the payment it probably belongs to.
CREATE INDEX payments_requisite_cancelled ON payments (requisite_id, payer_amount, valid_until) WHERE status = 'CANCELLED';

-- The webhook outbox (DESIGN.md decision 9): one row per event, written in the same transaction as
-- the status change; delivered afterwards by the job queue, in `seq` order per resource.
CREATE TABLE webhook_events (
  id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  seq                bigserial NOT NULL UNIQUE,
  merchant_id        uuid NOT NULL REFERENCES merchants(id),
  resource_type      text NOT NULL CHECK (resource_type IN ('payment', 'payout')),
  resource_id        uuid NOT NULL,
  event              text NOT NULL,
  payload            jsonb NOT NULL,
  url                text NOT NULL,
  notification_token text,
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts           integer NOT NULL DEFAULT 0,
  next_attempt_at    timestamptz NOT NULL DEFAULT now(),
  last_error         text,
  created_at         timestamptz NOT NULL DEFAULT now(),
  delivered_at       timestamptz
);
CREATE INDEX webhook_events_resource ON webhook_events (resource_id, seq);
CREATE INDEX webhook_events_pending ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_merchant ON webhook_events (merchant_id, created_at);

CREATE TABLE webhook_attempts (
  id               bigserial PRIMARY KEY,
  event_id         uuid NOT NULL REFERENCES webhook_events(id),
  attempt          integer NOT NULL,
  started_at       timestamptz NOT NULL,
  status_code      integer,
  latency_ms       integer NOT NULL,
  error            text,
  response_snippet text
);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, attempt);

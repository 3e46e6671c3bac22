-- Executors' phones (DESIGN.md "Devices (contract)"): each forwards its bank SMS and push
-- notifications with a token of its own, revocable apart from the executor's. What a device
-- sends is kept whole (device_messages), matched or not, so nothing is guessed and nothing lost.
CREATE TABLE devices (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  executor_id  uuid NOT NULL REFERENCES executors (id),
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- SHA-256 of the device's bearer token (shown once, at registration).
  token_hash   bytea NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz,
  battery      smallint CHECK (battery BETWEEN 0 AND 100),
  app_version  text CHECK (length(app_version) <= 100),
  revoked_at   timestamptz
);
CREATE INDEX devices_executor ON devices (executor_id, created_at) WHERE revoked_at IS NULL;

-- One message as a device sent it, and what became of it:
--   matched    it completed a payment (notification_id: the matched notification);
--   unmatched  its requisite was found but no PENDING payment had its amount (notification_id:
--              the unmatched or late notification, which a person links or sets aside);
--   ambiguous  an incoming transfer whose requisite cannot be told (no digits in the text and
--              several or no pending payments of that amount; digits naming none or several of
--              the executor's requisites): it waits for a person to link it to a payment;
--   unreadable not a text the parsers can read with certainty: kept for a person;
--   ignored    money going out (a purchase, a transfer out): nothing to match;
--   resolved   a person linked it to a payment, or set it aside with a note.
CREATE TABLE device_messages (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  device_id       uuid NOT NULL REFERENCES devices (id),
  executor_id     uuid NOT NULL REFERENCES executors (id),
  text            text NOT NULL CHECK (length(text) BETWEEN 1 AND 4000),
  sender          text CHECK (length(sender) <= 200),
  received_at     timestamptz,
  status          text NOT NULL CHECK (status IN ('matched', 'unmatched', 'ambiguous', 'unreadable', 'ignored', 'resolved')),
  reason          text,
  amount          numeric(20, 2),
  currency        text,
  digits          text,
  parsed_bank     text,
  requisite_id    uuid REFERENCES requisites (id),
  notification_id uuid REFERENCES notifications (id),
  resolved_note   text,
  -- Repeats of one message (a forwarder retrying): same executor, text, sender and time.
  dedupe_key      bytea NOT NULL UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX device_messages_executor ON device_messages (executor_id, created_at DESC);
CREATE INDEX device_messages_waiting ON device_messages (created_at) WHERE status IN ('ambiguous', 'unreadable');

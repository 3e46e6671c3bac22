-- Risk rules, blocks and velocity (issue 36 items 1, 2 and 5; DESIGN.md "Risk rules (contract)").
--
-- A block names a payer by one of its marks — the merchant's client_id, a card number, a phone,
-- the payer's IP or the payment page's device fingerprint — for every merchant (merchant_id null)
-- or one. The value is kept only as a keyed hash (HMAC-SHA256 with the master key, of the
-- normalised value), so that the table never holds a card number or phone in clear; `value_shown`
-- is what a person reads (a card as first 6 … last 4, a phone masked, the others as given).
CREATE TABLE risk_blocks (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  kind        text NOT NULL CHECK (kind IN ('client_id', 'card', 'phone', 'ip', 'device')),
  value_hash  text NOT NULL,
  value_shown text NOT NULL,
  merchant_id uuid REFERENCES merchants (id),
  reason      text NOT NULL CHECK (reason <> ''),
  expires_at  timestamptz,
  created_by  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  removed_by  text,
  removed_at  timestamptz
);
-- The one look-up every check makes: is this mark blocked, here or everywhere, now.
CREATE INDEX risk_blocks_active ON risk_blocks (kind, value_hash) WHERE removed_at IS NULL;
CREATE INDEX risk_blocks_created ON risk_blocks (created_at DESC);

-- The operator's velocity limits: one per scope (the merchant's client_id, the payer's IP); a
-- later PUT replaces it, a DELETE clears it.
CREATE TABLE risk_limits (
  scope          text PRIMARY KEY CHECK (scope IN ('client_id', 'ip')),
  window_seconds integer NOT NULL CHECK (window_seconds BETWEEN 1 AND 2592000),
  max_payments   integer CHECK (max_payments >= 1),
  max_amount     numeric CHECK (max_amount > 0),
  updated_by     text NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (max_payments IS NOT NULL OR max_amount IS NOT NULL)
);

-- The sliding windows: one row per counted key (a keyed hash of merchant, client_id and currency,
-- or of the IP), holding the moments and amounts of what it counted in the window. A count is one
-- INSERT … ON CONFLICT DO UPDATE that prunes what left the window and adds the new entry only
-- while under the limit: the row lock makes it exact under races, across any number of instances.
CREATE TABLE risk_velocity (
  scope      text NOT NULL,
  key        text NOT NULL,
  ats        timestamptz[] NOT NULL,
  amounts    numeric[] NOT NULL,
  ids        uuid[] NOT NULL,
  PRIMARY KEY (scope, key)
);

-- What the payment page saw of its payer, the first time it was opened: "block from a payment"
-- takes them from here.
ALTER TABLE payments ADD COLUMN payer_ip text, ADD COLUMN payer_device text;

-- Every instance keeps the limits and which kinds of block exist in memory (src/risk/rules.ts),
-- forgotten when either table changes, by any writer.
CREATE FUNCTION notify_risk_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kassir_risk', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
CREATE TRIGGER risk_blocks_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON risk_blocks
  FOR EACH STATEMENT EXECUTE FUNCTION notify_risk_change();
CREATE TRIGGER risk_limits_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON risk_limits
  FOR EACH STATEMENT EXECUTE FUNCTION notify_risk_change();

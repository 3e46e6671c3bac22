-- Risk rules (issue 36; DESIGN.md "Risk rules (contract)"): every refusal or flag a rule makes is
-- kept with its reason — the rule, the inputs it read and the figure it compared — so that a person
-- can see why (the payment's timeline, the console's Risk screen, the export) and the dashboard can
-- count lost demand by rule. The merchant never sees any of it.
CREATE TABLE risk_hits (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at  timestamptz NOT NULL DEFAULT now(),
  -- The rule that decided: 'block', 'velocity', 'traffic_class', 'receipt_reused',
  -- 'reference_reused', 'payer_name' (a rule kind added later adds its name here).
  rule        text NOT NULL CHECK (rule ~ '^[a-z_]+$'),
  -- refused: a create, a payout or a payment page was turned away; flagged: a payment or a
  -- dispute waits for a person with this reason (a flag never decides alone).
  action      text NOT NULL CHECK (action IN ('refused', 'flagged')),
  merchant_id uuid,
  terminal_id uuid,
  -- The object the decision concerns; a refused create has none (nothing was created).
  payment_id  uuid,
  payout_id   uuid,
  dispute_id  uuid,
  -- What the rule read (never a card number or phone in clear: masked or a keyed hash) ...
  inputs      jsonb NOT NULL DEFAULT '{}',
  -- ... and what it compared, in words a person reads: 'velocity client_id 7 in 600 s > 5'.
  figure      text NOT NULL,
  -- A flag is settled by a person (who, when); a refusal is settled when made.
  settled_at  timestamptz,
  settled_by  text
);
-- No foreign keys: a refused create's row is telemetry written beside the refusal, and checking
-- keys would lock the merchant's and terminal's rows on every create.
CREATE INDEX risk_hits_created ON risk_hits (created_at);
CREATE INDEX risk_hits_payment ON risk_hits (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX risk_hits_payout ON risk_hits (payout_id) WHERE payout_id IS NOT NULL;
CREATE INDEX risk_hits_dispute ON risk_hits (dispute_id) WHERE dispute_id IS NOT NULL;
CREATE INDEX risk_hits_open_flags ON risk_hits (created_at) WHERE action = 'flagged' AND settled_at IS NULL;

-- Lost demand by rule: a create a risk rule refused is a refusal like the others (PAY_004), with
-- the rule that made it; null for the pool's own refusals (no requisites, same amount).
ALTER TABLE payment_refusals ADD COLUMN risk_rule text;

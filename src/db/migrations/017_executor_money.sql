-- Executors' money (DESIGN.md "Executors' money (contract)"): each executor works on a USDT
-- deposit kept in the same double-entry ledger as the terminals, in two accounts — available and
-- frozen — and every payment the cascade hands to one of its requisites freezes the payment's USDT
-- value on it until the payment completes (settled) or ends unpaid (released).

ALTER TABLE executors
  ADD COLUMN credit_limit  numeric(38, 6) NOT NULL DEFAULT 0 CHECK (credit_limit >= 0),
  ADD COLUMN payin_reward  numeric(7, 4) NOT NULL DEFAULT 0 CHECK (payin_reward >= 0 AND payin_reward < 100),
  ADD COLUMN payout_reward numeric(7, 4) NOT NULL DEFAULT 0 CHECK (payout_reward >= 0 AND payout_reward < 100);

-- Executor accounts keep their balance on the row, as terminal accounts do, so that the floor is
-- enforced in SQL: frozen never below 0, available never below minus the credit line. The floor
-- is the row's own `min_balance` (a CHECK cannot read the executors table): 0, or for the
-- available account −credit_limit, set together with the limit.
ALTER TABLE ledger_accounts
  ADD COLUMN executor_id uuid REFERENCES executors(id),
  ADD COLUMN min_balance numeric(38, 6) NOT NULL DEFAULT 0;
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN
  ('terminal_available', 'terminal_frozen', 'executor_available', 'executor_frozen', 'system_incoming',
   'system_fee_revenue', 'system_adjustments', 'system_outgoing'));
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_executor_owner
  CHECK ((kind LIKE 'executor_%') = (executor_id IS NOT NULL AND terminal_id IS NULL AND merchant_id IS NULL));
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_executor_floor
  CHECK (kind NOT IN ('executor_available', 'executor_frozen') OR balance >= min_balance);
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_min_balance
  CHECK (min_balance <= 0 AND (min_balance = 0 OR kind = 'executor_available'));
CREATE UNIQUE INDEX ledger_accounts_executor_kind ON ledger_accounts (executor_id, kind) WHERE executor_id IS NOT NULL;
DROP INDEX ledger_accounts_system_kind;
CREATE UNIQUE INDEX ledger_accounts_system_kind ON ledger_accounts (kind) WHERE terminal_id IS NULL AND executor_id IS NULL;

INSERT INTO ledger_accounts (kind, executor_id)
SELECT k.kind, e.id FROM executors e CROSS JOIN (VALUES ('executor_available'), ('executor_frozen')) AS k(kind);

-- The executor whose requisite a payment was handed, and the USDT the hand-out froze on it
-- (amount / rate, 6 decimals half-up). Both null for payments an upstream provider executes:
-- those hold nothing on our executors.
ALTER TABLE payments
  ADD COLUMN executor_id uuid REFERENCES executors(id),
  ADD COLUMN hold numeric(38, 6) CHECK (hold > 0);
UPDATE payments p SET executor_id = r.executor_id FROM requisites r WHERE r.id = p.requisite_id;

-- Every create now updates two balance rows (its executor's available and frozen) and every
-- completion one or two: room on each page for the new versions keeps these updates HOT (no index
-- entries written, dead versions pruned in place) when the page is busy.
ALTER TABLE ledger_accounts SET (fillfactor = 20);

-- Takes a payment's hold on an executor: available −hold (refused, returning false, when
-- available − hold would fall below the floor), frozen +hold, as one balanced posting
-- `payin_hold` for the payment. Called by the payment create (payment_create_window and the
-- cascade statement in payments.repo) in the transaction that inserts the payment.
--
-- Lock order: an executor's available row before its frozen row, in every transaction that
-- changes both (ledger.repo post() locks them in that order too), so that holds, releases and
-- settlements of one executor cannot deadlock. The guarded UPDATE waits for a concurrent hold on
-- the same executor to commit and then re-checks the floor on the balance it left.
CREATE FUNCTION executor_hold_take(p_payment uuid, p_merchant uuid, p_executor uuid, p_hold numeric)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  available_id uuid;
  frozen_id uuid;
  tx_id uuid;
BEGIN
  UPDATE ledger_accounts SET balance = balance - p_hold
   WHERE executor_id = p_executor AND kind = 'executor_available' AND balance - p_hold >= min_balance
  RETURNING id INTO available_id;
  IF available_id IS NULL THEN
    RETURN false;
  END IF;
  UPDATE ledger_accounts SET balance = balance + p_hold
   WHERE executor_id = p_executor AND kind = 'executor_frozen'
  RETURNING id INTO frozen_id;
  INSERT INTO ledger_transactions (kind, ref_id, merchant_id) VALUES ('payin_hold', p_payment, p_merchant) RETURNING id INTO tx_id;
  INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (tx_id, available_id, -p_hold), (tx_id, frozen_id, p_hold);
  RETURN true;
END
$$;

-- payment_create_window (migration 010) with the hold: a requisite is eligible only when its
-- executor's available balance plus credit line covers `p_hold` (read on the walk's snapshot),
-- and the hold is taken (executor_hold_take, which re-checks under the row lock) before the
-- requisite is marked used and the payment inserted.
--
-- The requisite is now locked FOR NO KEY UPDATE (only last_used_at changes), not FOR UPDATE: a
-- completion holds the executor's frozen row and then inserts its notification, whose foreign
-- key takes FOR KEY SHARE on the requisite. FOR UPDATE conflicts with that; a create holding the
-- requisite and waiting for the same executor's frozen row then deadlocked with it. `created` is false, as before, when a rule
-- failed or nothing in the window fits, and also when the executor's balance was taken by a
-- concurrent create between the walk and the hold: the caller then falls back to the whole pool.
DROP FUNCTION payment_create_window(text, text, text, numeric, text, text, uuid, uuid, text, numeric, text, numeric, numeric, boolean,
                                    text, text, text, text, integer, integer, integer);
CREATE FUNCTION payment_create_window(
  p_currency text, p_country text, p_type text, p_payer_amount numeric, p_method text, p_bank text,
  p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_order_currency text,
  p_rate numeric, p_payin_rate numeric, p_cross_border boolean, p_client_id text, p_notify_url text,
  p_notification_token text, p_page_token text, p_ttl_seconds integer, p_same_amount_limit integer,
  p_hold numeric, p_window integer)
RETURNS TABLE (
  same_amount integer, ext_id_taken boolean, created boolean,
  id uuid, ext_id text, terminal_id uuid, amount numeric, currency text, method text, status text,
  rate numeric, payin_rate numeric, req_type text, req_value text, req_bank_code text, req_holder text,
  req_country text, req_currency text, payer_amount numeric, cross_border boolean, page_token text,
  valid_until timestamptz, received_amount numeric, created_at timestamptz, req_bank_name text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  r requisites;
  p payments;
  new_id uuid := gen_random_uuid();
BEGIN
  SELECT f.same_amount, f.ext_id_taken INTO same_amount, ext_id_taken
    FROM payment_creation_facts(p_merchant, p_terminal, p_ext_id, p_amount, p_order_currency) f;
  created := false;
  IF ext_id_taken OR same_amount >= p_same_amount_limit THEN
    RETURN NEXT;
    RETURN;
  END IF;

  SELECT fit.* INTO r
    FROM (SELECT q.id, q.last_used_at FROM requisites q
           WHERE q.is_active AND q.currency = p_currency AND q.type = p_type
           ORDER BY q.last_used_at NULLS FIRST, q.id
           LIMIT p_window) w
   CROSS JOIN LATERAL (
     SELECT c.* FROM requisites c JOIN executors e ON e.id = c.executor_id AND e.is_active
      WHERE c.id = w.id AND c.last_used_at IS NOT DISTINCT FROM w.last_used_at
        AND c.is_active AND c.country = p_country AND c.type = p_type
        AND p_method = ANY(c.methods)
        AND (p_bank IS NULL OR c.bank_code = p_bank)
        AND p_payer_amount >= c.min_amount
        AND (c.max_amount IS NULL OR p_payer_amount <= c.max_amount)
        AND NOT EXISTS (SELECT 1 FROM payments o
                         WHERE o.requisite_id = c.id AND o.status = 'PENDING' AND o.payer_amount = p_payer_amount)
        AND EXISTS (SELECT 1 FROM ledger_accounts a
                     WHERE a.executor_id = c.executor_id AND a.kind = 'executor_available' AND a.balance - p_hold >= a.min_balance)
        FOR NO KEY UPDATE OF c SKIP LOCKED) fit
   LIMIT 1;
  IF r.id IS NULL THEN
    RETURN NEXT;
    RETURN;
  END IF;

  IF NOT executor_hold_take(new_id, p_merchant, r.executor_id, p_hold) THEN
    RETURN NEXT;
    RETURN;
  END IF;
  UPDATE requisites c SET last_used_at = clock_timestamp() WHERE c.id = r.id;
  INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                        requisite_id, executor_id, hold, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
                        payer_amount, cross_border, client_id, notify_url, notification_token, page_token, valid_until)
  VALUES (new_id, p_merchant, p_terminal, p_ext_id, p_amount, p_order_currency, p_method, 'PENDING', p_rate, p_payin_rate,
          r.id, r.executor_id, p_hold, r.type, r.value, r.bank_code, r.holder, r.country, r.currency,
          p_payer_amount, p_cross_border, p_client_id, p_notify_url, p_notification_token, p_page_token,
          now() + make_interval(secs => p_ttl_seconds))
  RETURNING * INTO p;

  created := true;
  id := p.id; ext_id := p.ext_id; terminal_id := p.terminal_id; amount := p.amount; currency := p.currency;
  method := p.method; status := p.status; rate := p.rate; payin_rate := p.payin_rate;
  req_type := p.req_type; req_value := p.req_value; req_bank_code := p.req_bank_code; req_holder := p.req_holder;
  req_country := p.req_country; req_currency := p.req_currency; payer_amount := p.payer_amount;
  cross_border := p.cross_border; page_token := p.page_token; valid_until := p.valid_until;
  received_amount := p.received_amount; created_at := p.created_at;
  req_bank_name := (SELECT b.name FROM banks b WHERE b.code = p.req_bank_code);
  RETURN NEXT;
END
$$;

-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature and the new text goes here.
--
-- A payment's status change and what goes with it (issue 38): src/payments/lifecycle.ts calls these,
-- so that a completion is one round trip as a create is (payment_create_window), where it was six.
-- lifecycle.ts stays the one way a payment's status changes: these are its statements, nobody
-- else's.

-- payment_transition: the guarded status change of lifecycle.ts's `transition` (an event applied
-- only from its `from` statuses; the row locked first, so that two racing paths cannot both win).
-- A completed payment keeps no cancel reason or note of an earlier cancellation (the timeline still
-- tells that one); a new cancellation replaces both. A completion counts towards its payer's history
-- with the merchant (payer_history, migration 048: the traffic classes) in the same statement, so
-- that no completion can pass uncounted; two at once both count (the upsert's row lock). Test
-- payments are no history. No row: the payment was not in a `from` status.
CREATE OR REPLACE FUNCTION payment_transition(p_payment uuid, p_from text[], p_to text, p_reason text, p_received numeric, p_note text)
RETURNS TABLE (
  id uuid, merchant_id uuid, terminal_id uuid, "from" text, "to" text, executor_id uuid, hold numeric, requisite_id uuid,
  method text, cancel_reason text, age_seconds float8, is_test boolean, received_amount numeric, rate numeric, payin_rate numeric,
  notify_url text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH changed AS (
    UPDATE payments p SET status = p_to, updated_at = now(),
           cancel_reason = CASE WHEN p_to IN ('COMPLETED', 'COMPLETED_APPEAL') THEN NULL ELSE coalesce(p_reason, p.cancel_reason) END,
           cancel_note = CASE WHEN p_to IN ('COMPLETED', 'COMPLETED_APPEAL') THEN NULL WHEN p_reason IS NOT NULL THEN p_note ELSE p.cancel_note END,
           completed_at = CASE WHEN p_to IN ('COMPLETED', 'COMPLETED_APPEAL') THEN now() ELSE p.completed_at END,
           received_amount = CASE WHEN p_to IN ('COMPLETED', 'COMPLETED_APPEAL') THEN coalesce(p_received, p.amount) ELSE p.received_amount END
      FROM (SELECT o.id, o.status FROM payments o WHERE o.id = p_payment FOR UPDATE) old
     WHERE p.id = old.id AND old.status = ANY(p_from)
     RETURNING p.id, p.merchant_id, p.terminal_id, old.status AS from_status, p.status AS to_status, p.executor_id, p.hold, p.requisite_id,
               p.method, p.cancel_reason, extract(epoch FROM p.updated_at - p.created_at)::float8 AS age_seconds, p.is_test, p.client_id,
               p.received_amount, p.rate, p.payin_rate, p.notify_url
  ), counted AS (
    INSERT INTO payer_history AS h (merchant_id, client_id, completed)
    SELECT c.merchant_id, c.client_id, 1 FROM changed c
     WHERE c.to_status IN ('COMPLETED', 'COMPLETED_APPEAL') AND c.from_status NOT IN ('COMPLETED', 'COMPLETED_APPEAL')
       AND NOT c.is_test AND c.client_id IS NOT NULL
    ON CONFLICT (merchant_id, client_id) DO UPDATE SET completed = h.completed + 1
  )
  SELECT c.id, c.merchant_id, c.terminal_id, c.from_status::text, c.to_status::text, c.executor_id, c.hold::numeric, c.requisite_id,
         c.method::text, c.cancel_reason::text, c.age_seconds, c.is_test, c.received_amount::numeric, c.rate::numeric, c.payin_rate::numeric,
         c.notify_url::text
    FROM changed c;
END
$$;

-- payment_webhook_payload: a payment as GET /v1/payments/{id} returns it (src/payments/payments.schemas.ts
-- toPayment; DESIGN.md decision 9), for its webhook event. Numbers as JavaScript's Number reads the
-- numeric columns (float8: the same shortest digits), times as Date.toISOString writes them
-- (milliseconds, truncated, UTC). test/webhooks.test.ts compares the two.
CREATE OR REPLACE FUNCTION payment_webhook_payload(p payments, p_page_url text)
RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN jsonb_build_object(
    'id', p.id, 'ext_id', p.ext_id, 'amount', p.amount::float8, 'currency', p.currency, 'rate', p.rate::float8,
    'payin_rate', p.payin_rate::float8, 'terminal_id', p.terminal_id,
    'terminal_name', (SELECT t.name FROM terminals t WHERE t.id = p.terminal_id),
    'status', p.status, 'method', p.method,
    'requisites', jsonb_build_object('type', p.req_type, 'value', p.req_value, 'holder', p.req_holder)
      || CASE WHEN coalesce(p.req_bank_code, '') = '' THEN '{}'::jsonb
              ELSE jsonb_build_object('bank', p.req_bank_code, 'bank_code', p.req_bank_code)
                   || coalesce((SELECT jsonb_build_object('bank_name', b.name)
                                  FROM banks b WHERE b.code = p.req_bank_code AND coalesce(b.name, '') <> ''), '{}'::jsonb) END
      || CASE WHEN p.cross_border
              THEN jsonb_build_object('country', p.req_country, 'currency', p.req_currency, 'amount_local', p.payer_amount::float8)
              ELSE '{}'::jsonb END,
    'payment_url', p_page_url || '/' || p.page_token,
    'valid_until', to_char(p.valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'created_at', to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    || CASE WHEN p.status = 'COMPLETED_APPEAL' AND p.received_amount IS NOT NULL
            THEN jsonb_build_object('received_amount', p.received_amount::float8) ELSE '{}'::jsonb END;
END
$$;

-- payments_changed_events: the outbox side of payment status changes (lifecycle.ts paymentsChanged),
-- in the transaction that changed them: `payment.<status>` with each payment as GET returns it, for
-- the payments that have a notify_url; written from the rows themselves, no read by the service first.
-- PL/pgSQL, as payment_webhook_payload: its statements' plans are kept for the session, where a
-- LANGUAGE sql function that cannot be inlined is planned on every call before PostgreSQL 18.
CREATE OR REPLACE FUNCTION payments_changed_events(p_payments uuid[], p_page_url text)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  -- One payment (a status change of one, the common case) by equality: for `= ANY` the planner
  -- estimates a custom plan cheaper than the generic one and plans the statement on every call.
  IF cardinality(p_payments) = 1 THEN
    INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
    SELECT p.merchant_id, 'payment', p.id, 'payment.' || lower(p.status), payment_webhook_payload(p, p_page_url), p.notify_url, p.notification_token
      FROM payments p
     WHERE p.id = p_payments[1] AND p.notify_url IS NOT NULL AND p.notify_url <> '';
  ELSE
    INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
    SELECT p.merchant_id, 'payment', p.id, 'payment.' || lower(p.status), payment_webhook_payload(p, p_page_url), p.notify_url, p.notification_token
      FROM payments p
     WHERE p.id = ANY(p_payments) AND p.notify_url IS NOT NULL AND p.notify_url <> ''
     ORDER BY p.created_at, p.id;
  END IF;
END
$$;

-- payin_settlement: src/ledger/credit.ts payinSettlement in SQL (DESIGN.md decision 11 and
-- "Executors' money"): v = received / rate, the terminal's net v × (1 − payin_rate / 100), each
-- rounded once half-up to 6 decimals; the executor's reward v × payin_reward / 100 (6 dp half-up);
-- the platform's revenue the rest. The quotient is taken to 40 decimals before rounding, as the
-- service's decimal.js takes it to 40 significant digits (src/lib/money.ts); test/ledger.test.ts
-- compares the two over the domain the service accepts.
CREATE OR REPLACE FUNCTION payin_settlement(p_received numeric, p_rate numeric, p_payin_rate numeric, p_payin_reward numeric,
                                            OUT gross numeric, OUT net numeric, OUT fee numeric, OUT reward numeric, OUT revenue numeric)
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v numeric;
BEGIN
  IF p_received IS NULL OR p_rate IS NULL OR NOT p_received > 0 OR NOT p_rate > 0 THEN
    RAISE EXCEPTION 'payin_settlement: received and rate must be positive (%, %)', p_received, p_rate;
  END IF;
  IF p_payin_rate IS NULL OR p_payin_rate = 'NaN' OR p_payin_rate < 0 OR p_payin_rate >= 100
     OR p_payin_reward IS NULL OR p_payin_reward = 'NaN' OR p_payin_reward < 0 OR p_payin_reward >= 100 THEN
    RAISE EXCEPTION 'payin_settlement: payin_rate and payin_reward must be in [0, 100) (%, %)', p_payin_rate, p_payin_reward;
  END IF;
  -- A quotient's scale is its dividend's at least (select_div_scale): 40 decimals, not the 16
  -- significant digits numeric division keeps by default (rounded there, then to 6 places, a
  -- quotient like …3539674975 became …353968 instead of …353967).
  v := p_received * 1.0000000000000000000000000000000000000000 / p_rate;
  gross := round(v, 6);
  net := round(v * (1 - p_payin_rate / 100), 6);
  fee := gross - net;
  reward := round(gross * p_payin_reward / 100, 6);
  revenue := gross - net - reward;
END
$$;

-- payment_complete: lifecycle.ts changePayment for the events that complete a payment (complete,
-- approveDispute) in one call: the guarded status change (payment_transition), the pay-in's posting
-- (lifecycle.ts completePayment tells it in full: the executor gives up v, from its hold as far as it goes, the rest from
-- its available balance, and gains its reward; the terminal gets the net at COMMIT, migration 012;
-- the platform the remainder; a provider-executed payment's v comes from system_incoming), a hold
-- larger than v returning its remainder by a release of its own, and the webhook event. A dispute's
-- freeze (issue 35: p_dispute, p_dispute_executor, p_dispute_hold) is what an approval settles when
-- the hand-out's hold was released. A test payment posts nothing.
--
-- Returns no row when the payment was not in a `from` status. When the executor's deposit and credit
-- line cannot cover what it owes, returns the change with short_needed (and the deposit's figures)
-- and writes nothing more: the caller refuses with DEPOSIT_SHORT, rolling the change back. The check
-- is made under the executor's rows' lock, against the floor the CHECK holds, so the posting cannot
-- fail it after (ledger_accounts_executor_floor remains the guard). Lock order as postMany's
-- (src/ledger/ledger.repo.ts) and a create's: the executor's kept-balance rows first, available
-- before frozen, then the terminal's at COMMIT.
CREATE OR REPLACE FUNCTION payment_complete(p_payment uuid, p_from text[], p_to text, p_received numeric,
                                            p_dispute uuid, p_dispute_executor uuid, p_dispute_hold numeric, p_page_url text)
RETURNS TABLE (
  id uuid, merchant_id uuid, terminal_id uuid, "from" text, "to" text, executor_id uuid, hold numeric, requisite_id uuid,
  method text, cancel_reason text, age_seconds float8, is_test boolean,
  short_needed numeric, short_balance numeric, short_credit_limit numeric)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  c record;
  s record;
  still_held boolean;
  by_dispute boolean;
  held numeric := 0;
  reward_rate numeric;
  v_credit_limit numeric;
  from_hold numeric;
  from_available numeric;
  remainder numeric;
  available_change numeric;
  available_id uuid;
  frozen_id uuid;
  payin_id uuid := uuid_v7();
  release_id uuid;
  deposit numeric;
  entries integer;
BEGIN
  IF p_to IS NULL OR p_to NOT IN ('COMPLETED', 'COMPLETED_APPEAL') THEN
    RAISE EXCEPTION 'payment_complete: % is no completion', p_to;
  END IF;
  -- payment_transition's guarded change for a completing event (p_to is COMPLETED or
  -- COMPLETED_APPEAL here, whatever the caller), written out rather than called: one function call
  -- and its result's tuplestore fewer for every completion (issue 38, docs/performance.md
  -- "Fewer statements per completion"). Kept equal to payment_transition's text for these two
  -- statuses; test/lifecycles.test.ts and test/webhooks.test.ts cover both ways.
  WITH changed AS (
    UPDATE payments p SET status = p_to, updated_at = now(), cancel_reason = NULL, cancel_note = NULL, completed_at = now(),
           received_amount = coalesce(p_received, p.amount)
      FROM (SELECT o.id, o.status FROM payments o WHERE o.id = p_payment FOR UPDATE) old
     WHERE p.id = old.id AND old.status = ANY(p_from)
     RETURNING p.id, p.merchant_id, p.terminal_id, old.status AS from_status, p.status AS to_status, p.executor_id, p.hold, p.requisite_id,
               p.method, p.cancel_reason, extract(epoch FROM p.updated_at - p.created_at)::float8 AS age_seconds, p.is_test, p.client_id,
               p.received_amount, p.rate, p.payin_rate, p.notify_url
  ), counted AS (
    INSERT INTO payer_history AS h (merchant_id, client_id, completed)
    SELECT x.merchant_id, x.client_id, 1 FROM changed x
     WHERE x.from_status NOT IN ('COMPLETED', 'COMPLETED_APPEAL') AND NOT x.is_test AND x.client_id IS NOT NULL
    ON CONFLICT (merchant_id, client_id) DO UPDATE SET completed = h.completed + 1
  )
  SELECT x.id, x.merchant_id, x.terminal_id, x.from_status::text AS "from", x.to_status::text AS "to", x.executor_id, x.hold::numeric AS hold,
         x.requisite_id, x.method::text AS method, x.cancel_reason::text AS cancel_reason, x.age_seconds, x.is_test,
         x.received_amount::numeric AS received_amount, x.rate::numeric AS rate, x.payin_rate::numeric AS payin_rate, x.notify_url::text AS notify_url
    INTO c FROM changed x;
  IF c.id IS NULL THEN
    RETURN;
  END IF;
  id := c.id; merchant_id := c.merchant_id; terminal_id := c.terminal_id; "from" := c."from"; "to" := c."to";
  executor_id := c.executor_id; hold := c.hold; requisite_id := c.requisite_id; method := c.method;
  cancel_reason := c.cancel_reason; age_seconds := c.age_seconds; is_test := c.is_test;

  IF NOT c.is_test THEN
    still_held := c.hold IS NOT NULL AND c.executor_id IS NOT NULL AND c."from" IN ('PENDING', 'PROCESSING');
    by_dispute := p_dispute IS NOT NULL AND p_dispute_executor = c.executor_id AND NOT still_held;
    held := CASE WHEN still_held THEN c.hold WHEN by_dispute THEN coalesce(p_dispute_hold, 0) ELSE 0 END;

    IF c.executor_id IS NULL THEN
      s := payin_settlement(c.received_amount, c.rate, c.payin_rate, 0);
      INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id) VALUES (payin_id, 'payin', c.id, c.merchant_id);
      -- Each account by its unique index (no join: one over the accounts' IS NOT DISTINCT FROM
      -- could only hash the whole table, every completion).
      INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit)
      SELECT payin_id, x.account, x.amount, x.at_commit
        FROM (VALUES (1, (SELECT a.id FROM ledger_accounts a WHERE a.kind = 'system_incoming' AND a.terminal_id IS NULL AND a.executor_id IS NULL),
                      -s.gross, false),
                     (2, (SELECT a.id FROM ledger_accounts a WHERE a.terminal_id = c.terminal_id AND a.kind = 'terminal_available'), s.net, true),
                     (3, (SELECT a.id FROM ledger_accounts a WHERE a.kind = 'system_fee_revenue' AND a.terminal_id IS NULL AND a.executor_id IS NULL),
                      s.fee, false)) AS x(ord, account, amount, at_commit)
       WHERE (x.amount <> 0 OR x.ord = 1) AND x.account IS NOT NULL
       ORDER BY x.ord;
      GET DIAGNOSTICS entries = ROW_COUNT;
      IF entries <> 1 + (s.net <> 0)::int + (s.fee <> 0)::int THEN
        RAISE EXCEPTION 'ledger posting payin: an account is missing (% entries) for payment %', entries, c.id;
      END IF;
    ELSE
      -- The executor's two kept-balance rows, locked in kind order (available before frozen), and
      -- its reward rate.
      SELECT (array_agg(a.id) FILTER (WHERE a.kind = 'executor_available'))[1],
             (array_agg(a.id) FILTER (WHERE a.kind = 'executor_frozen'))[1],
             max(a.balance) FILTER (WHERE a.kind = 'executor_available'),
             -max(a.min_balance) FILTER (WHERE a.kind = 'executor_available'),
             (SELECT coalesce(e.payin_reward, 0) FROM executors e WHERE e.id = c.executor_id)
        INTO available_id, frozen_id, deposit, v_credit_limit, reward_rate
        FROM (SELECT l.id, l.kind, l.balance, l.min_balance FROM ledger_accounts l
               WHERE l.executor_id = c.executor_id AND l.kind IN ('executor_available', 'executor_frozen')
               ORDER BY l.kind FOR NO KEY UPDATE) a;
      IF available_id IS NULL OR frozen_id IS NULL THEN
        RAISE EXCEPTION 'payment_complete: executor % has no deposit accounts', c.executor_id;
      END IF;
      s := payin_settlement(c.received_amount, c.rate, c.payin_rate, coalesce(reward_rate, 0));
      -- What the available balance gains over both postings: the hold's remainder beyond v (0 for
      -- a full payment) and the reward, less v when nothing was held. Checked against the floor
      -- the CHECK holds (min_balance: minus the credit line) under the rows' lock, so exact.
      available_change := held - s.gross + s.reward;
      IF available_change < 0 AND deposit + coalesce(v_credit_limit, 0) < -available_change THEN
        short_needed := -available_change; short_balance := deposit; short_credit_limit := coalesce(v_credit_limit, 0);
        RETURN NEXT;
        RETURN;
      END IF;
      from_hold := least(held, s.gross);
      from_available := s.gross - from_hold;
      remainder := held - from_hold;
      IF remainder <> 0 THEN
        release_id := uuid_v7();
        INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id)
        VALUES (release_id, CASE WHEN by_dispute THEN 'dispute_release' ELSE 'payin_hold_release' END,
                CASE WHEN by_dispute THEN p_dispute ELSE c.id END, c.merchant_id);
        INSERT INTO ledger_entries (transaction_id, account_id, amount) VALUES (release_id, frozen_id, -remainder), (release_id, available_id, remainder);
      END IF;
      -- The posting's transaction and entries in one statement; the terminal's and the platform's
      -- accounts each by its unique index (no join: one over the accounts' IS NOT DISTINCT FROM
      -- could only hash the whole table, every completion).
      WITH t AS (
        INSERT INTO ledger_transactions (id, kind, ref_id, merchant_id) VALUES (payin_id, 'payin', c.id, c.merchant_id)
      )
      INSERT INTO ledger_entries (transaction_id, account_id, amount, applied_at_commit)
      SELECT payin_id, x.account, x.amount, x.at_commit
        FROM (VALUES (1, frozen_id, -from_hold, false),
                     (2, available_id, -from_available, false),
                     (3, available_id, s.reward, false),
                     (4, (SELECT a.id FROM ledger_accounts a WHERE a.terminal_id = c.terminal_id AND a.kind = 'terminal_available'), s.net, true),
                     (5, (SELECT a.id FROM ledger_accounts a WHERE a.kind = 'system_fee_revenue' AND a.terminal_id IS NULL AND a.executor_id IS NULL),
                      s.revenue, false)) AS x(ord, account, amount, at_commit)
       WHERE x.amount <> 0 AND x.account IS NOT NULL
       ORDER BY x.ord;
      GET DIAGNOSTICS entries = ROW_COUNT;
      IF entries <> (from_hold <> 0)::int + (from_available <> 0)::int + (s.reward <> 0)::int + (s.net <> 0)::int + (s.revenue <> 0)::int THEN
        RAISE EXCEPTION 'ledger posting payin: an account is missing (% entries) for payment %', entries, c.id;
      END IF;
      -- The kept balances now (the terminal's credit comes at COMMIT), both rows in one statement:
      -- the frozen balance gives up what was held, the available one takes its net change (checked
      -- above).
      UPDATE ledger_accounts a SET balance = a.balance + CASE WHEN a.id = frozen_id THEN -held ELSE available_change END
       WHERE a.id = ANY (ARRAY[frozen_id, available_id])
         AND CASE WHEN a.id = frozen_id THEN held ELSE available_change END <> 0;
    END IF;
  END IF;

  -- The webhook event (payments_changed_events' one-payment statement, written here: a call fewer).
  IF coalesce(c.notify_url, '') <> '' THEN
    INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
    SELECT p.merchant_id, 'payment', p.id, 'payment.' || lower(p.status), payment_webhook_payload(p, p_page_url), p.notify_url, p.notification_token
      FROM payments p
     WHERE p.id = c.id;
  END IF;
  RETURN NEXT;
END
$$;

-- payment_complete_transfer: a reported transfer's completion (lifecycle.ts completeTransfer): the one
-- PENDING payment on the requisite for that amount (the cascade guarantees at most one), locked, and
-- completed by payment_complete in the same call, so that matching a notification costs no round
-- trip of its own. No row: no such payment.
CREATE OR REPLACE FUNCTION payment_complete_transfer(p_requisite uuid, p_payer_amount numeric, p_from text[], p_page_url text)
RETURNS TABLE (
  id uuid, merchant_id uuid, terminal_id uuid, "from" text, "to" text, executor_id uuid, hold numeric, requisite_id uuid,
  method text, cancel_reason text, age_seconds float8, is_test boolean,
  short_needed numeric, short_balance numeric, short_credit_limit numeric)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  found_id uuid;
BEGIN
  SELECT p.id INTO found_id FROM payments p
   WHERE p.requisite_id = p_requisite AND p.payer_amount = p_payer_amount AND p.status = 'PENDING' FOR UPDATE;
  IF found_id IS NULL THEN
    RETURN;
  END IF;
  RETURN QUERY SELECT * FROM payment_complete(found_id, p_from, 'COMPLETED', NULL, NULL, NULL, NULL, p_page_url);
END
$$;

-- notification_complete_transfers: executors' reported transfers (src/incoming/notifications.service.ts
-- receiveNotification) completed in one call, and for up to N of them in one statement and one
-- transaction (issue 38 item 1; docs/performance.md "Completion (issue 38)"), as creates are taken
-- together (payment_create_windows). Each item is, in the statement's own transaction: the repeat of
-- a stored notification (its dedupe key), answered as the first was; or the one PENDING payment on
-- the requisite for the amount, completed by payment_complete (the per-item logic every completion
-- uses), with the notification matched to it and the executor's audit row — the money rule's
-- posting, state change and audit row naming who acted, in one transaction.
--
-- Each item runs in a block of its own (a subtransaction), so that one which cannot be done here
-- leaves nothing and does not fail the others:
--   * busy: with p_wait false (a batch), a row it needs is locked by another transaction — the
--     payment, the executor's balance rows, its payer's history row. A batch holding the locks of
--     its earlier items must not wait for another's, or two batches could wait for each other; the
--     item runs again alone once the batch has committed, waiting where it must.
--   * again: no PENDING payment matched (the caller records the notification unmatched or late,
--     which reads the recently expired payments), or the executor's deposit cannot cover it (the
--     caller answers DEPOSIT_SHORT with its figures): both as the caller does alone, in full.
-- With p_wait true (one item alone) the locks are waited for, as payment_complete_transfer does.
--
-- An item whose requisite the caller did not read (p_places[i] not null: a report that sent its
-- amount, issue 38) has it checked here first, where it was a round trip of its own before: the
-- requisite is the executor's, and the amount has no more decimal places (p_places[i]) than the
-- requisite's currency takes (p_minor_units: the ISO 4217 table of src/lib/money.ts, 2 for a
-- currency not in it). An item that fails this is `again`: the caller reads the requisite and
-- answers what it answered before (not found, too many decimal places), writing nothing here. This
-- comes before the dedupe key's lookup: a repeat is answered only to the requisite's executor.
-- An error the items' blocks do not catch (two of one dedupe key racing, a deadlock) fails the
-- whole statement, which then did nothing: the caller sends each item again alone.
CREATE OR REPLACE FUNCTION notification_complete_transfers(
  p_executor uuid[], p_requisite uuid[], p_amount numeric[], p_text text[], p_received_at timestamptz[], p_parsed_bank text[],
  p_dedupe_key bytea[], p_actor text[], p_user uuid[], p_ip text[], p_wait boolean, p_from text[], p_page_url text,
  p_places integer[], p_minor_units jsonb)
RETURNS TABLE (
  item integer, outcome text, notification_id uuid, notification_status text, notification_payment_id uuid,
  id uuid, merchant_id uuid, terminal_id uuid, "from" text, "to" text, executor_id uuid, hold numeric, requisite_id uuid,
  method text, cancel_reason text, age_seconds float8, is_test boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  pending record;
  c record;
  n record;
  r record;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(p_requisite), 0) LOOP
    item := i; outcome := NULL; notification_id := NULL; notification_status := NULL; notification_payment_id := NULL;
    id := NULL; merchant_id := NULL; terminal_id := NULL; "from" := NULL; "to" := NULL; executor_id := NULL; hold := NULL;
    requisite_id := NULL; method := NULL; cancel_reason := NULL; age_seconds := NULL; is_test := NULL;
    BEGIN
      -- The requisite (when the caller did not read it) and the stored notification of the same
      -- dedupe key, in one statement; the latter counts only once the former passed.
      SELECT q.executor_id, q.currency, s.id AS notification_id, s.status, s.payment_id INTO r
        FROM (SELECT 1) one
        LEFT JOIN requisites q ON p_places[i] IS NOT NULL AND q.id = p_requisite[i]
        LEFT JOIN notifications s ON s.dedupe_key = p_dedupe_key[i];
      IF p_places[i] IS NOT NULL
         AND (r.executor_id IS DISTINCT FROM p_executor[i] OR p_places[i] > coalesce((p_minor_units ->> r.currency)::integer, 2)) THEN
        outcome := 'again';
      ELSIF r.notification_id IS NOT NULL THEN
        outcome := 'duplicate'; notification_id := r.notification_id; notification_status := r.status; notification_payment_id := r.payment_id;
      END IF;
      IF outcome IS NULL THEN
        -- The payment first, then the executor's kept-balance rows (available before frozen), then its
        -- payer's history row: the order payment_complete takes them in, so that taking them here
        -- first changes no lock order.
        IF p_wait THEN
          SELECT p.id, p.executor_id, p.merchant_id, p.client_id, p.is_test INTO pending FROM payments p
           WHERE p.requisite_id = p_requisite[i] AND p.payer_amount = p_amount[i] AND p.status = 'PENDING' FOR UPDATE;
        ELSE
          SELECT p.id, p.executor_id, p.merchant_id, p.client_id, p.is_test INTO pending FROM payments p
           WHERE p.requisite_id = p_requisite[i] AND p.payer_amount = p_amount[i] AND p.status = 'PENDING' FOR UPDATE NOWAIT;
          IF pending.id IS NOT NULL AND pending.executor_id IS NOT NULL THEN
            PERFORM 1 FROM ledger_accounts l
             WHERE l.executor_id = pending.executor_id AND l.kind IN ('executor_available', 'executor_frozen')
             ORDER BY l.kind FOR NO KEY UPDATE NOWAIT;
          END IF;
          IF pending.id IS NOT NULL AND NOT pending.is_test AND pending.client_id IS NOT NULL THEN
            PERFORM 1 FROM payer_history h WHERE h.merchant_id = pending.merchant_id AND h.client_id = pending.client_id FOR UPDATE NOWAIT;
          END IF;
        END IF;
        IF pending.id IS NULL THEN
          outcome := 'again';
        ELSE
          SELECT * INTO c FROM payment_complete(pending.id, p_from, 'COMPLETED', NULL, NULL, NULL, NULL, p_page_url) t;
          IF c.id IS NULL OR c.short_needed IS NOT NULL THEN
            -- Undoes this item's status change (the block's subtransaction rolls back).
            RAISE EXCEPTION 'notification_complete_transfers: item % not completed here', i USING ERRCODE = 'KS001';
          END IF;
          -- The notification, and the executor's report as its act: the row receiveNotification's
          -- audit call writes. One statement for both.
          WITH m AS (
            INSERT INTO notifications AS s (executor_id, requisite_id, amount, text, received_at, parsed_bank, status, payment_id, dedupe_key)
            VALUES (p_executor[i], p_requisite[i], p_amount[i], p_text[i], p_received_at[i], p_parsed_bank[i], 'matched', c.id, p_dedupe_key[i])
            RETURNING s.id, s.status, s.payment_id, s.amount
          ), a AS (
            INSERT INTO audit_log (actor, user_id, ip, action, object_type, object_id, before, after)
            SELECT p_actor[i], p_user[i], p_ip[i], 'notification.receive', 'notification', m.id::text, NULL,
                   jsonb_build_object('status', m.status, 'amount', m.amount::text, 'requisite_id', p_requisite[i], 'payment_id', m.payment_id)
              FROM m
          )
          SELECT m.id, m.status, m.payment_id INTO n FROM m;
          outcome := 'matched'; notification_id := n.id; notification_status := n.status; notification_payment_id := n.payment_id;
        END IF;
      END IF;
    EXCEPTION
      WHEN lock_not_available THEN
        outcome := 'busy';
      WHEN SQLSTATE 'KS001' THEN
        outcome := 'again';
    END;
    IF outcome = 'matched' THEN
      id := c.id; merchant_id := c.merchant_id; terminal_id := c.terminal_id; "from" := c."from"; "to" := c."to";
      executor_id := c.executor_id; hold := c.hold; requisite_id := c.requisite_id; method := c.method;
      cancel_reason := c.cancel_reason; age_seconds := c.age_seconds; is_test := c.is_test;
    ELSIF outcome <> 'duplicate' THEN
      notification_id := NULL; notification_status := NULL; notification_payment_id := NULL;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

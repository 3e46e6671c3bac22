-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- payment_create_window: the current text (migration 057 changed its signature; before, 038_rate_sources.sql).
-- payment_create_window of migration 034, with the rate refresh that gave p_rate (p_rate_refresh),
-- the risk rules of the pool (migration 048): the payer's class, which a requisite must take
-- (its own classes and its executor's), and the requisite velocity; and the payer's client_id
-- velocity (migration 057: p_client_window, p_client_max_count, p_client_max_amount, as
-- payment_creation_facts counts it). In a batch (NOT p_wait) the payer's lock is tried like the
-- terminal-and-amount lock: held by another transaction, the create comes back busy.
CREATE OR REPLACE FUNCTION payment_create_window(
  p_currency text, p_country text, p_type text, p_payer_amount numeric, p_method text, p_bank text,
  p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_order_currency text,
  p_rate numeric, p_payin_rate numeric, p_cross_border boolean, p_client_id text, p_notify_url text,
  p_notification_token text, p_page_token text, p_ttl_seconds integer, p_same_amount_limit integer,
  p_hold numeric, p_window integer, p_wait boolean, p_rate_refresh bigint,
  p_client_window integer, p_client_max_count integer, p_client_max_amount numeric)
RETURNS TABLE (
  same_amount integer, ext_id_taken boolean, client_count integer, client_sum numeric, client_refused boolean,
  created boolean, busy boolean,
  id uuid, ext_id text, terminal_id uuid, amount numeric, currency text, method text, status text,
  rate numeric, payin_rate numeric, req_type text, req_value text, req_bank_code text, req_holder text,
  req_country text, req_currency text, payer_amount numeric, cross_border boolean, page_token text,
  valid_until timestamptz, received_amount numeric, created_at timestamptz, req_bank_name text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  r requisites;
  p payments;
  new_id uuid := uuid_v7();
  cls text;
  rules risk_pool_rules;
BEGIN
  created := false;
  client_refused := false;
  busy := NOT p_wait AND (NOT pg_try_advisory_xact_lock(payment_creation_lock_key(p_terminal, p_amount))
                          OR p_client_id IS NOT NULL AND p_client_window IS NOT NULL
                             AND NOT pg_try_advisory_xact_lock(payment_client_lock_key(p_merchant, p_client_id, p_order_currency)));
  IF busy THEN
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT f.same_amount, f.ext_id_taken, f.client_count, f.client_sum, f.client_refused
    INTO same_amount, ext_id_taken, client_count, client_sum, client_refused
    FROM payment_creation_facts(p_merchant, p_terminal, p_ext_id, p_amount, p_order_currency,
                                p_client_id, p_client_window, p_client_max_count, p_client_max_amount) f;
  IF ext_id_taken OR client_refused OR same_amount >= p_same_amount_limit THEN
    RETURN NEXT;
    RETURN;
  END IF;
  -- Two probes by primary key, no round trip: the payer's class (stored on the payment) and the
  -- velocity rules.
  cls := payer_class(p_merchant, p_client_id);
  SELECT * INTO rules FROM risk_pool_rules;

  SELECT c.* INTO r
    FROM (SELECT q.id, q.last_used_at, q.executor_priority, q.executor_score FROM requisites q
           WHERE q.is_active AND q.executor_open AND q.currency = p_currency AND q.type = p_type
           ORDER BY q.executor_priority DESC, q.executor_score DESC, q.last_used_at NULLS FIRST, q.id
           LIMIT p_window) w
   CROSS JOIN LATERAL (
     SELECT l.* FROM requisites l
      WHERE l.id = w.id AND l.last_used_at IS NOT DISTINCT FROM w.last_used_at
        AND l.executor_priority = w.executor_priority AND l.executor_score = w.executor_score
        AND l.is_active AND l.executor_open AND l.country = p_country AND l.type = p_type
        AND p_method = ANY(l.methods)
        AND (p_bank IS NULL OR l.bank_code = p_bank)
        AND p_payer_amount >= l.min_amount
        AND (l.max_amount IS NULL OR p_payer_amount <= l.max_amount)
        AND requisite_takes_class(l.traffic_classes, l.executor_traffic_classes, cls)
      LIMIT 1
        FOR NO KEY UPDATE OF l SKIP LOCKED) c
   WHERE NOT EXISTS (SELECT 1 FROM payments o
                      WHERE o.requisite_id = c.id AND o.status = 'PENDING' AND o.payer_amount = p_payer_amount
                     OFFSET 0)
     AND (NOT c.limited OR requisite_limits_allow(c.id, p_payer_amount))
     -- Exact on this statement's snapshot: a requisite handed out since then fails the
     -- last_used_at guard above once locked, and one another create holds is skipped.
     AND (rules.requisite_max_count IS NULL AND rules.requisite_max_amount IS NULL
          OR requisite_velocity_allows(c.id, c.executor_id, p_payer_amount, rules.requisite_max_count, rules.requisite_count_seconds,
                                       rules.requisite_max_amount, rules.requisite_amount_seconds))
     AND CASE WHEN p_wait
              THEN (SELECT a.balance - a.min_balance FROM ledger_accounts a
                     WHERE a.executor_id = c.executor_id AND a.kind = 'executor_available') >= p_hold
              ELSE (SELECT a.balance - a.min_balance FROM ledger_accounts a
                     WHERE a.executor_id = c.executor_id AND a.kind = 'executor_available'
                       FOR NO KEY UPDATE SKIP LOCKED) >= p_hold
         END
   LIMIT 1;
  IF r.id IS NULL THEN
    -- In a batch, nothing the walk could take without waiting: alone, the create looks again.
    busy := NOT p_wait;
    RETURN NEXT;
    RETURN;
  END IF;

  IF NOT executor_hold_take(new_id, p_merchant, r.executor_id, p_hold) THEN
    RETURN NEXT;
    RETURN;
  END IF;
  IF r.limited THEN
    PERFORM requisite_usage_take(r.id, p_payer_amount);
  END IF;
  UPDATE requisites c SET last_used_at = clock_timestamp() WHERE c.id = r.id;
  INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                        requisite_id, executor_id, hold, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
                        payer_amount, cross_border, client_id, notify_url, notification_token, page_token, valid_until,
                        rate_refresh_id, payer_class)
  VALUES (new_id, p_merchant, p_terminal, p_ext_id, p_amount, p_order_currency, p_method, 'PENDING', p_rate, p_payin_rate,
          r.id, r.executor_id, p_hold, r.type, r.value, r.bank_code, r.holder, r.country, r.currency,
          p_payer_amount, p_cross_border, p_client_id, p_notify_url, p_notification_token, p_page_token,
          now() + make_interval(secs => p_ttl_seconds), p_rate_refresh, cls)
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

-- payment_create_windows: the current text (migration 057 changed its signature; before, 038_rate_sources.sql).
-- payment_create_windows of migration 034, passing each create's rate refresh and client_id limit on.
CREATE OR REPLACE FUNCTION payment_create_windows(
  p_currency text[], p_country text[], p_type text[], p_payer_amount numeric[], p_method text[], p_bank text[],
  p_merchant uuid[], p_terminal uuid[], p_ext_id text[], p_amount numeric[], p_order_currency text[],
  p_rate numeric[], p_payin_rate numeric[], p_cross_border boolean[], p_client_id text[], p_notify_url text[],
  p_notification_token text[], p_page_token text[], p_ttl_seconds integer[], p_same_amount_limit integer,
  p_hold numeric[], p_window integer, p_rate_refresh bigint[],
  p_client_window integer[], p_client_max_count integer[], p_client_max_amount numeric[])
RETURNS TABLE (
  item integer, same_amount integer, ext_id_taken boolean, client_count integer, client_sum numeric, client_refused boolean,
  created boolean, busy boolean,
  id uuid, ext_id text, terminal_id uuid, amount numeric, currency text, method text, status text,
  rate numeric, payin_rate numeric, req_type text, req_value text, req_bank_code text, req_holder text,
  req_country text, req_currency text, payer_amount numeric, cross_border boolean, page_token text,
  valid_until timestamptz, received_amount numeric, created_at timestamptz, req_bank_name text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  FOR n IN 1 .. cardinality(p_currency) LOOP
    RETURN QUERY
      SELECT n, w.* FROM payment_create_window(
        p_currency[n], p_country[n], p_type[n], p_payer_amount[n], p_method[n], p_bank[n],
        p_merchant[n], p_terminal[n], p_ext_id[n], p_amount[n], p_order_currency[n],
        p_rate[n], p_payin_rate[n], p_cross_border[n], p_client_id[n], p_notify_url[n],
        p_notification_token[n], p_page_token[n], p_ttl_seconds[n], p_same_amount_limit,
        p_hold[n], p_window, false, p_rate_refresh[n],
        p_client_window[n], p_client_max_count[n], p_client_max_amount[n]) w;
  END LOOP;
END
$$;

-- The previous release's signatures (expand, then contract: docs/operations.md "Upgrades"): the
-- window cascade and its batch with no client_id limit, answering as before. A later release drops them.
CREATE OR REPLACE FUNCTION payment_create_window(
  p_currency text, p_country text, p_type text, p_payer_amount numeric, p_method text, p_bank text,
  p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_order_currency text,
  p_rate numeric, p_payin_rate numeric, p_cross_border boolean, p_client_id text, p_notify_url text,
  p_notification_token text, p_page_token text, p_ttl_seconds integer, p_same_amount_limit integer,
  p_hold numeric, p_window integer, p_wait boolean, p_rate_refresh bigint)
RETURNS TABLE (
  same_amount integer, ext_id_taken boolean, created boolean, busy boolean,
  id uuid, ext_id text, terminal_id uuid, amount numeric, currency text, method text, status text,
  rate numeric, payin_rate numeric, req_type text, req_value text, req_bank_code text, req_holder text,
  req_country text, req_currency text, payer_amount numeric, cross_border boolean, page_token text,
  valid_until timestamptz, received_amount numeric, created_at timestamptz, req_bank_name text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY
    SELECT w.same_amount, w.ext_id_taken, w.created, w.busy,
           w.id, w.ext_id, w.terminal_id, w.amount, w.currency, w.method, w.status, w.rate, w.payin_rate,
           w.req_type, w.req_value, w.req_bank_code, w.req_holder, w.req_country, w.req_currency, w.payer_amount,
           w.cross_border, w.page_token, w.valid_until, w.received_amount, w.created_at, w.req_bank_name
      FROM payment_create_window(p_currency, p_country, p_type, p_payer_amount, p_method, p_bank, p_merchant, p_terminal, p_ext_id,
             p_amount, p_order_currency, p_rate, p_payin_rate, p_cross_border, p_client_id, p_notify_url, p_notification_token,
             p_page_token, p_ttl_seconds, p_same_amount_limit, p_hold, p_window, p_wait, p_rate_refresh, NULL, NULL, NULL) w;
END
$$;

CREATE OR REPLACE FUNCTION payment_create_windows(
  p_currency text[], p_country text[], p_type text[], p_payer_amount numeric[], p_method text[], p_bank text[],
  p_merchant uuid[], p_terminal uuid[], p_ext_id text[], p_amount numeric[], p_order_currency text[],
  p_rate numeric[], p_payin_rate numeric[], p_cross_border boolean[], p_client_id text[], p_notify_url text[],
  p_notification_token text[], p_page_token text[], p_ttl_seconds integer[], p_same_amount_limit integer,
  p_hold numeric[], p_window integer, p_rate_refresh bigint[])
RETURNS TABLE (
  item integer, same_amount integer, ext_id_taken boolean, created boolean, busy boolean,
  id uuid, ext_id text, terminal_id uuid, amount numeric, currency text, method text, status text,
  rate numeric, payin_rate numeric, req_type text, req_value text, req_bank_code text, req_holder text,
  req_country text, req_currency text, payer_amount numeric, cross_border boolean, page_token text,
  valid_until timestamptz, received_amount numeric, created_at timestamptz, req_bank_name text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  none integer[] := array_fill(NULL::integer, ARRAY[cardinality(p_currency)]);
BEGIN
  RETURN QUERY
    SELECT w.item, w.same_amount, w.ext_id_taken, w.created, w.busy,
           w.id, w.ext_id, w.terminal_id, w.amount, w.currency, w.method, w.status, w.rate, w.payin_rate,
           w.req_type, w.req_value, w.req_bank_code, w.req_holder, w.req_country, w.req_currency, w.payer_amount,
           w.cross_border, w.page_token, w.valid_until, w.received_amount, w.created_at, w.req_bank_name
      FROM payment_create_windows(p_currency, p_country, p_type, p_payer_amount, p_method, p_bank, p_merchant, p_terminal, p_ext_id,
             p_amount, p_order_currency, p_rate, p_payin_rate, p_cross_border, p_client_id, p_notify_url, p_notification_token,
             p_page_token, p_ttl_seconds, p_same_amount_limit, p_hold, p_window, p_rate_refresh, none, none,
             array_fill(NULL::numeric, ARRAY[cardinality(p_currency)])) w;
END
$$;

-- The window walk locks a candidate before it checks it (issue 17, item 7).
--
-- Under load a create walks about nine candidates before it gets one: the creates in flight hold
-- the first few (skipped, SKIP LOCKED) and the ones committed since its snapshot moved on (their
-- last_used_at changed). The walk of migration 019 ran every check on every candidate before
-- trying its lock: the join with the executor (a scan of the executors table per candidate, the
-- table being small), the probe for a PENDING payment of the amount, the limits function and the
-- deposit probe — and ran them again on the new version of a candidate that had moved. About
-- 0.2 ms of PostgreSQL time per create went there, a quarter of it.
--
-- The walk now tries the lock after the checks on the requisite's own row (type, country,
-- method, bank, min/max, open, unchanged since the window read it), and runs the others only on
-- the one it holds. A candidate that then fails them stays locked until the create commits: other
-- creates pass over it meanwhile, as over any candidate a create holds.
--
-- For that the requisite row says what the executor join said:
--   * executor_open (migration 019) is whether its executor takes payments, kept by the triggers
--     under the requisites' row locks — the same locks the walk takes, so the locked row's copy
--     is the truth as of the executor's last committed change;
--   * limited (below) is whether any limit applies to it, its own or its executor's default.
--     Only then are the usage counters read (requisite_limits_allow) and written
--     (requisite_usage_take); the limits themselves are looked up there.

ALTER TABLE requisites ADD COLUMN limited boolean NOT NULL DEFAULT false;

UPDATE requisites r
   SET limited = coalesce(r.daily_turnover_limit, e.default_daily_turnover_limit, r.monthly_turnover_limit, e.default_monthly_turnover_limit) IS NOT NULL
              OR coalesce(r.daily_count_limit, e.default_daily_count_limit, r.monthly_count_limit, e.default_monthly_count_limit) IS NOT NULL
  FROM executors e
 WHERE e.id = r.executor_id;

CREATE FUNCTION requisites_mark_limited() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT coalesce(NEW.daily_turnover_limit, e.default_daily_turnover_limit, NEW.monthly_turnover_limit, e.default_monthly_turnover_limit) IS NOT NULL
      OR coalesce(NEW.daily_count_limit, e.default_daily_count_limit, NEW.monthly_count_limit, e.default_monthly_count_limit) IS NOT NULL
    INTO NEW.limited
    FROM executors e WHERE e.id = NEW.executor_id;
  RETURN NEW;
END
$$;
CREATE TRIGGER requisites_mark_limited
  BEFORE INSERT OR UPDATE OF executor_id, daily_turnover_limit, monthly_turnover_limit, daily_count_limit, monthly_count_limit
  ON requisites FOR EACH ROW EXECUTE FUNCTION requisites_mark_limited();

-- An executor's default limits changed: its requisites' flags follow, locked in id order like
-- executors_copy_to_requisites (migration 019), in the operator's transaction (which then
-- recounts their usage, requisites.repo recountUsage).
CREATE FUNCTION executors_mark_requisites_limited() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requisites r
     SET limited = coalesce(r.daily_turnover_limit, NEW.default_daily_turnover_limit, r.monthly_turnover_limit, NEW.default_monthly_turnover_limit) IS NOT NULL
                OR coalesce(r.daily_count_limit, NEW.default_daily_count_limit, r.monthly_count_limit, NEW.default_monthly_count_limit) IS NOT NULL
   WHERE r.id IN (SELECT q.id FROM requisites q WHERE q.executor_id = NEW.id ORDER BY q.id FOR NO KEY UPDATE);
  RETURN NULL;
END
$$;
CREATE TRIGGER executors_mark_requisites_limited
  AFTER UPDATE OF default_daily_turnover_limit, default_monthly_turnover_limit, default_daily_count_limit, default_monthly_count_limit
  ON executors FOR EACH ROW
  WHEN (OLD.default_daily_turnover_limit IS DISTINCT FROM NEW.default_daily_turnover_limit
     OR OLD.default_monthly_turnover_limit IS DISTINCT FROM NEW.default_monthly_turnover_limit
     OR OLD.default_daily_count_limit IS DISTINCT FROM NEW.default_daily_count_limit
     OR OLD.default_monthly_count_limit IS DISTINCT FROM NEW.default_monthly_count_limit)
  EXECUTE FUNCTION executors_mark_requisites_limited();

-- The requisite has room for a hand-out of p_amount under its effective limits (its own, else its
-- executor's defaults): one probe of each limited period's counter. Called for limited
-- requisites only. Replaces the form of migration 019 that took the limits from the caller's join.
DROP FUNCTION requisite_limits_allow(uuid, numeric, numeric, numeric, integer, integer);
CREATE FUNCTION requisite_limits_allow(p_requisite uuid, p_amount numeric)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
  l record;
  d_amount numeric := 0;
  d_count integer := 0;
  m_amount numeric := 0;
  m_count integer := 0;
BEGIN
  SELECT coalesce(r.daily_turnover_limit, e.default_daily_turnover_limit) AS dt,
         coalesce(r.monthly_turnover_limit, e.default_monthly_turnover_limit) AS mt,
         coalesce(r.daily_count_limit, e.default_daily_count_limit) AS dc,
         coalesce(r.monthly_count_limit, e.default_monthly_count_limit) AS mc
    INTO l FROM requisites r JOIN executors e ON e.id = r.executor_id WHERE r.id = p_requisite;
  IF l.dt IS NOT NULL OR l.dc IS NOT NULL THEN
    SELECT u.amount, u.count INTO d_amount, d_count FROM requisite_usage u
     WHERE u.requisite_id = p_requisite AND u.period = 'day' AND u.starts = (now() AT TIME ZONE 'UTC')::date;
  END IF;
  IF l.mt IS NOT NULL OR l.mc IS NOT NULL THEN
    SELECT u.amount, u.count INTO m_amount, m_count FROM requisite_usage u
     WHERE u.requisite_id = p_requisite AND u.period = 'month' AND u.starts = date_trunc('month', now() AT TIME ZONE 'UTC')::date;
  END IF;
  RETURN (l.dt IS NULL OR coalesce(d_amount, 0) + p_amount <= l.dt)
     AND (l.dc IS NULL OR coalesce(d_count, 0) + 1 <= l.dc)
     AND (l.mt IS NULL OR coalesce(m_amount, 0) + p_amount <= l.mt)
     AND (l.mc IS NULL OR coalesce(m_count, 0) + 1 <= l.mc);
END
$$;

-- payment_create_window (migration 019), walking lock-first. The same choice as payments.repo's
-- cascadeSql (test/cascade.fit.test.ts compares them). The checks after the lock are kept from
-- being turned into joins over the whole table: the PENDING probe by OFFSET 0 (else the planner
-- may scan the pending index for the amount once, across all requisites), the deposit by a
-- scalar subquery on the executor's account.
CREATE OR REPLACE FUNCTION payment_create_window(
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
      LIMIT 1
        FOR NO KEY UPDATE OF l SKIP LOCKED) c
   WHERE NOT EXISTS (SELECT 1 FROM payments o
                      WHERE o.requisite_id = c.id AND o.status = 'PENDING' AND o.payer_amount = p_payer_amount
                     OFFSET 0)
     AND (NOT c.limited OR requisite_limits_allow(c.id, p_payer_amount))
     AND (SELECT a.balance - a.min_balance FROM ledger_accounts a
           WHERE a.executor_id = c.executor_id AND a.kind = 'executor_available') >= p_hold
   LIMIT 1;
  IF r.id IS NULL THEN
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

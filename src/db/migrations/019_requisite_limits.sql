-- Limits and automatic care of requisites (issue 17 item 6): turnover and count limits per day and
-- per month, an executor's pause, the operator's priority and a periodic score that order the
-- cascade, and requisites switched off after a streak of hand-outs that expired unpaid.
--
-- Days and months are UTC (the project has no timezone setting).

-- Limits: a requisite's own, else its executor's default (null on both: no limit). Turnover is in
-- the requisite's currency, on the payer_amount of its hand-outs; an executor's default turnover
-- applies in each of its requisites' own currency.
ALTER TABLE executors
  ADD COLUMN default_daily_turnover_limit   numeric(20, 2) CHECK (default_daily_turnover_limit >= 0),
  ADD COLUMN default_monthly_turnover_limit numeric(20, 2) CHECK (default_monthly_turnover_limit >= 0),
  ADD COLUMN default_daily_count_limit      integer CHECK (default_daily_count_limit >= 0),
  ADD COLUMN default_monthly_count_limit    integer CHECK (default_monthly_count_limit >= 0),
  -- Switch a requisite off after this many consecutive hand-outs ended unpaid (0: never).
  ADD COLUMN disable_after_expired integer NOT NULL DEFAULT 5 CHECK (disable_after_expired BETWEEN 0 AND 1000),
  -- The executor's own pause: its requisites are not handed out while it is set.
  ADD COLUMN is_paused boolean NOT NULL DEFAULT false,
  -- The operator's priority: higher first in the cascade.
  ADD COLUMN priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000000 AND 1000000),
  -- The score (executors_score job, every minute) from the last 24 hours: conversion × speed,
  -- in tenths so that equals tie and the least recently used spread among them stays. 0.5 for an
  -- executor with no ended hand-out in the window. The figures behind it are kept beside it.
  ADD COLUMN score numeric(2, 1) NOT NULL DEFAULT 0.5 CHECK (score BETWEEN 0 AND 1),
  ADD COLUMN score_handed_out integer NOT NULL DEFAULT 0,
  ADD COLUMN score_completed integer NOT NULL DEFAULT 0,
  ADD COLUMN score_median_minutes numeric(10, 1),
  ADD COLUMN score_updated_at timestamptz;

ALTER TABLE requisites
  ADD COLUMN daily_turnover_limit   numeric(20, 2) CHECK (daily_turnover_limit >= 0),
  ADD COLUMN monthly_turnover_limit numeric(20, 2) CHECK (monthly_turnover_limit >= 0),
  ADD COLUMN daily_count_limit      integer CHECK (daily_count_limit >= 0),
  ADD COLUMN monthly_count_limit    integer CHECK (monthly_count_limit >= 0),
  -- Why the requisite was switched off automatically (null when on, or switched off by hand).
  ADD COLUMN disabled_reason text,
  -- Hand-outs before this moment do not count towards the expired streak (set on re-enabling).
  ADD COLUMN care_since timestamptz,
  -- The cascade's order, copied from the executor (triggers below) so that the window walk reads
  -- it from the pool index: priority, score, and whether the executor takes payments at all
  -- (active and not paused). The executor's row stays the truth; the cascade checks both.
  ADD COLUMN executor_priority integer NOT NULL DEFAULT 0,
  ADD COLUMN executor_score numeric(2, 1) NOT NULL DEFAULT 0.5,
  ADD COLUMN executor_open boolean NOT NULL DEFAULT true;

UPDATE requisites r SET executor_open = e.is_active FROM executors e WHERE e.id = r.executor_id;

CREATE FUNCTION requisites_copy_executor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT e.priority, e.score, e.is_active AND NOT e.is_paused INTO NEW.executor_priority, NEW.executor_score, NEW.executor_open
    FROM executors e WHERE e.id = NEW.executor_id;
  RETURN NEW;
END
$$;
CREATE TRIGGER requisites_copy_executor BEFORE INSERT OR UPDATE OF executor_id ON requisites
  FOR EACH ROW EXECUTE FUNCTION requisites_copy_executor();

-- An executor's change reaches its requisites in the same transaction: the executor's row, then
-- its requisites in id order (two such changes of one executor queue on the executor's row).
-- No ledger row is locked before them here (lock order: requisites before ledger rows).
CREATE FUNCTION executors_copy_to_requisites() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE requisites r SET executor_priority = NEW.priority, executor_score = NEW.score, executor_open = NEW.is_active AND NOT NEW.is_paused
   WHERE r.id IN (SELECT q.id FROM requisites q WHERE q.executor_id = NEW.id ORDER BY q.id FOR NO KEY UPDATE);
  RETURN NULL;
END
$$;
CREATE TRIGGER executors_copy_to_requisites AFTER UPDATE OF priority, score, is_active, is_paused ON executors
  FOR EACH ROW WHEN (OLD.priority IS DISTINCT FROM NEW.priority OR OLD.score IS DISTINCT FROM NEW.score
                     OR OLD.is_active IS DISTINCT FROM NEW.is_active OR OLD.is_paused IS DISTINCT FROM NEW.is_paused)
  EXECUTE FUNCTION executors_copy_to_requisites();

-- The pool in the cascade's order: priority, score, then least recently used. Requisites of
-- executors that take no payments are left out of the index (the window walks only this).
-- Requisites at a limit stay in it (the limits depend on the amount): a window whose every
-- requisite is at its limit falls back to the whole pool, as one full of held requisites does.
DROP INDEX requisites_pool;
CREATE INDEX requisites_pool ON requisites (currency, type, executor_priority DESC, executor_score DESC, last_used_at NULLS FIRST, id)
  WHERE is_active AND executor_open;
-- No index of a requisite's latest hand-outs for the unpaid streak: one more index on payments
-- would cost every create; the switch-off (after an expiry batch, off the hot path) walks the
-- executor's latest payments backwards on payments_executor_created instead.

-- What each requisite has taken in a day and in a month: the hand-outs not cancelled (PENDING,
-- PROCESSING, COMPLETED, COMPLETED_APPEAL — a hold handed out counts from the moment it is handed
-- out). A cancellation frees its room (lifecycle.ts releaseHolds); a cancelled payment approved
-- later on dispute is not counted again (the limit governs hand-outs, an approval is not one).
--
-- Every create counts its hand-out, limits or not, so that a limit set later starts from the
-- period's true figures.
--
-- Why counters and not a sum over payments: the limits are checked for every candidate a create
-- walks, on the hot path, and a requisite's history grows without bound. A counter row per
-- requisite and period is one index probe per candidate (and none when no limit applies), kept
-- exact by the create's own statement (requisite_usage_take) and by the release.
--
-- Exact under concurrency: the cascade reads the counters on its snapshot, and the take
-- re-checks on the locked row — the row carries the limits it was last taken under, and the CHECK
-- refuses a take past them, failing the create's statement (the caller looks again, like a taken
-- requisite-and-amount). Lock order: requisite row → executor's ledger rows (the hold) → usage
-- rows (day before month); a release locks ledger rows and then usage rows (sorted), never a
-- requisite.
CREATE TABLE requisite_usage (
  requisite_id uuid NOT NULL REFERENCES requisites(id),
  period       text NOT NULL CHECK (period IN ('day', 'month')),
  starts       date NOT NULL,
  amount       numeric(20, 2) NOT NULL DEFAULT 0,
  count        integer NOT NULL DEFAULT 0,
  amount_limit numeric(20, 2),
  count_limit  integer,
  PRIMARY KEY (requisite_id, period, starts),
  CONSTRAINT requisite_usage_within_limit CHECK ((amount_limit IS NULL OR amount <= amount_limit) AND (count_limit IS NULL OR count <= count_limit))
) WITH (fillfactor = 50);  -- every hand-out updates two rows: room on their pages keeps the updates HOT

INSERT INTO requisite_usage (requisite_id, period, starts, amount, count)
SELECT p.requisite_id, k.period, k.starts, sum(p.payer_amount), count(*)
  FROM payments p
 CROSS JOIN LATERAL (VALUES ('day', (p.created_at AT TIME ZONE 'UTC')::date),
                            ('month', date_trunc('month', p.created_at AT TIME ZONE 'UTC')::date)) AS k(period, starts)
 WHERE p.requisite_id IS NOT NULL AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')
   AND p.created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
 GROUP BY p.requisite_id, k.period, k.starts;

-- The requisite has room for a hand-out of p_amount under the (effective) limits: nothing read
-- when it has no limit, else one probe of each period's counter. Used by both forms of the
-- cascade, per candidate walked. PL/pgSQL, not SQL: PostgreSQL 15 cannot inline a SQL function
-- with a subquery and would plan its body anew in every create; PL/pgSQL keeps the plans for the
-- session. STABLE: it reads the calling statement's snapshot, as the rest of the walk does.
CREATE FUNCTION requisite_limits_allow(p_requisite uuid, p_amount numeric, p_day_turnover numeric, p_month_turnover numeric,
                                       p_day_count integer, p_month_count integer)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
  d_amount numeric := 0;
  d_count integer := 0;
  m_amount numeric := 0;
  m_count integer := 0;
BEGIN
  IF p_day_turnover IS NULL AND p_month_turnover IS NULL AND p_day_count IS NULL AND p_month_count IS NULL THEN
    RETURN true;
  END IF;
  IF p_day_turnover IS NOT NULL OR p_day_count IS NOT NULL THEN
    SELECT u.amount, u.count INTO d_amount, d_count FROM requisite_usage u
     WHERE u.requisite_id = p_requisite AND u.period = 'day' AND u.starts = (now() AT TIME ZONE 'UTC')::date;
  END IF;
  IF p_month_turnover IS NOT NULL OR p_month_count IS NOT NULL THEN
    SELECT u.amount, u.count INTO m_amount, m_count FROM requisite_usage u
     WHERE u.requisite_id = p_requisite AND u.period = 'month' AND u.starts = date_trunc('month', now() AT TIME ZONE 'UTC')::date;
  END IF;
  RETURN (p_day_turnover IS NULL OR coalesce(d_amount, 0) + p_amount <= p_day_turnover)
     AND (p_day_count IS NULL OR coalesce(d_count, 0) + 1 <= p_day_count)
     AND (p_month_turnover IS NULL OR coalesce(m_amount, 0) + p_amount <= p_month_turnover)
     AND (p_month_count IS NULL OR coalesce(m_count, 0) + 1 <= p_month_count);
END
$$;

-- Counts a hand-out of p_amount on the requisite (day, then month), under its effective limits
-- at this moment: a take past them fails on requisite_usage_within_limit. Called after the hold.
CREATE FUNCTION requisite_usage_take(p_requisite uuid, p_amount numeric) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  l record;
BEGIN
  SELECT coalesce(r.daily_turnover_limit, e.default_daily_turnover_limit) AS dt,
         coalesce(r.monthly_turnover_limit, e.default_monthly_turnover_limit) AS mt,
         coalesce(r.daily_count_limit, e.default_daily_count_limit) AS dc,
         coalesce(r.monthly_count_limit, e.default_monthly_count_limit) AS mc
    INTO l FROM requisites r JOIN executors e ON e.id = r.executor_id WHERE r.id = p_requisite;
  INSERT INTO requisite_usage AS u (requisite_id, period, starts, amount, count, amount_limit, count_limit)
  VALUES (p_requisite, 'day', (now() AT TIME ZONE 'UTC')::date, p_amount, 1, l.dt, l.dc),
         (p_requisite, 'month', date_trunc('month', now() AT TIME ZONE 'UTC')::date, p_amount, 1, l.mt, l.mc)
  ON CONFLICT (requisite_id, period, starts) DO UPDATE
     SET amount = u.amount + excluded.amount, count = u.count + 1, amount_limit = excluded.amount_limit, count_limit = excluded.count_limit;
  RETURN true;
END
$$;

-- payment_create_window (migration 017) with the new rules, the same as payments.repo's
-- cascadeSql (test/cascade.fit.test.ts compares them): the walk in the pool index's order
-- (priority, score, least recently used) over requisites of executors that take payments; a
-- requisite unchanged since the walk read it (its order columns too); its executor active and not
-- paused; room under its limits. After the hold, the hand-out is counted (requisite_usage_take).
DROP FUNCTION payment_create_window(text, text, text, numeric, text, text, uuid, uuid, text, numeric, text, numeric, numeric, boolean,
                                    text, text, text, text, integer, integer, numeric, integer);
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
    FROM (SELECT q.id, q.last_used_at, q.executor_priority, q.executor_score FROM requisites q
           WHERE q.is_active AND q.executor_open AND q.currency = p_currency AND q.type = p_type
           ORDER BY q.executor_priority DESC, q.executor_score DESC, q.last_used_at NULLS FIRST, q.id
           LIMIT p_window) w
   CROSS JOIN LATERAL (
     SELECT c.* FROM requisites c JOIN executors e ON e.id = c.executor_id AND e.is_active AND NOT e.is_paused
      WHERE c.id = w.id AND c.last_used_at IS NOT DISTINCT FROM w.last_used_at
        AND c.executor_priority = w.executor_priority AND c.executor_score = w.executor_score
        AND c.is_active AND c.country = p_country AND c.type = p_type
        AND p_method = ANY(c.methods)
        AND (p_bank IS NULL OR c.bank_code = p_bank)
        AND p_payer_amount >= c.min_amount
        AND (c.max_amount IS NULL OR p_payer_amount <= c.max_amount)
        AND NOT EXISTS (SELECT 1 FROM payments o
                         WHERE o.requisite_id = c.id AND o.status = 'PENDING' AND o.payer_amount = p_payer_amount)
        AND requisite_limits_allow(c.id, p_payer_amount,
              coalesce(c.daily_turnover_limit, e.default_daily_turnover_limit), coalesce(c.monthly_turnover_limit, e.default_monthly_turnover_limit),
              coalesce(c.daily_count_limit, e.default_daily_count_limit), coalesce(c.monthly_count_limit, e.default_monthly_count_limit))
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
  PERFORM requisite_usage_take(r.id, p_payer_amount);
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

-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- requisite_limits_allow: the current text (was last written by migration 025_cascade_lock_first.sql).
CREATE OR REPLACE FUNCTION requisite_limits_allow(p_requisite uuid, p_amount numeric)
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

-- requisite_usage_take: the current text (was last written by migration 024_usage_when_limited.sql).
-- Usage counters (migration 019) only for requisites under a limit.
--
-- Counting every hand-out, limit or not, cost each create two counter upserts (about 0.11 ms of
-- its 0.75–0.95 ms of PostgreSQL time, and their WAL) for the few requisites an operator limits.
-- A create now counts its hand-out only when the requisite has an effective limit (its own, else
-- its executor's default); when a limit is set or changed the operator's transaction recounts the
-- requisite's current day and month from its payments (requisite_usage_recount), after locking
-- the requisite — so that a create holding it has committed and is counted, and the creates after
-- it see the limit and count themselves. The usage the operator reads comes from the payments.
CREATE OR REPLACE FUNCTION requisite_usage_take(p_requisite uuid, p_amount numeric) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  l record;
BEGIN
  SELECT coalesce(r.daily_turnover_limit, e.default_daily_turnover_limit) AS dt,
         coalesce(r.monthly_turnover_limit, e.default_monthly_turnover_limit) AS mt,
         coalesce(r.daily_count_limit, e.default_daily_count_limit) AS dc,
         coalesce(r.monthly_count_limit, e.default_monthly_count_limit) AS mc
    INTO l FROM requisites r JOIN executors e ON e.id = r.executor_id WHERE r.id = p_requisite;
  IF l.dt IS NULL AND l.mt IS NULL AND l.dc IS NULL AND l.mc IS NULL THEN
    RETURN true;
  END IF;
  INSERT INTO requisite_usage AS u (requisite_id, period, starts, amount, count, amount_limit, count_limit)
  VALUES (p_requisite, 'day', (now() AT TIME ZONE 'UTC')::date, p_amount, 1, l.dt, l.dc),
         (p_requisite, 'month', date_trunc('month', now() AT TIME ZONE 'UTC')::date, p_amount, 1, l.mt, l.mc)
  ON CONFLICT (requisite_id, period, starts) DO UPDATE
     SET amount = u.amount + excluded.amount, count = u.count + 1, amount_limit = excluded.amount_limit, count_limit = excluded.count_limit;
  RETURN true;
END
$$;

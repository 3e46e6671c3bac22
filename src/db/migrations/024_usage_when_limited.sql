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

-- The requisites' counters of the current UTC day and month, recounted from their payments (the
-- hand-outs not cancelled). Updated in place, not deleted and inserted, so that a release waiting
-- on a counter row applies its decrement to the recounted figure. The limits stored on the rows
-- are cleared: the next take writes the limits then in force. The caller holds the requisites' locks.
CREATE FUNCTION requisite_usage_recount(p_requisites uuid[]) RETURNS void
LANGUAGE sql VOLATILE AS $$
  UPDATE requisite_usage SET amount = 0, count = 0, amount_limit = NULL, count_limit = NULL
   WHERE requisite_id = ANY(p_requisites)
     AND ((period = 'day' AND starts = (now() AT TIME ZONE 'UTC')::date)
       OR (period = 'month' AND starts = date_trunc('month', now() AT TIME ZONE 'UTC')::date));
  INSERT INTO requisite_usage AS u (requisite_id, period, starts, amount, count)
  SELECT p.requisite_id, k.period, k.starts, sum(p.payer_amount), count(*)::int
    FROM requisites r
    JOIN payments p ON p.executor_id = r.executor_id AND p.requisite_id = r.id
                   AND p.created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
   CROSS JOIN LATERAL (VALUES ('day', (p.created_at AT TIME ZONE 'UTC')::date),
                              ('month', date_trunc('month', p.created_at AT TIME ZONE 'UTC')::date)) AS k(period, starts)
   WHERE r.id = ANY(p_requisites) AND p.status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL')
     AND (k.period = 'month' OR k.starts = (now() AT TIME ZONE 'UTC')::date)
   GROUP BY p.requisite_id, k.period, k.starts
  ON CONFLICT (requisite_id, period, starts) DO UPDATE SET amount = excluded.amount, count = excluded.count, amount_limit = NULL, count_limit = NULL;
$$;

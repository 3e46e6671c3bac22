-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- payer_class: the class of a payer with a merchant (migration 048): 'new' below returning_from
-- completed payments (and always without a client_id), 'trusted' from trusted_from on,
-- 'returning' between. One probe of payer_history's primary key and one of the one-row
-- risk_pool_rules. PL/pgSQL so that its plans are kept for the session (see requisite_limits_allow).
CREATE OR REPLACE FUNCTION payer_class(p_merchant uuid, p_client_id text)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  n integer;
  rules risk_pool_rules;
BEGIN
  IF p_client_id IS NULL THEN
    RETURN 'new';
  END IF;
  SELECT h.completed INTO n FROM payer_history h WHERE h.merchant_id = p_merchant AND h.client_id = p_client_id;
  IF n IS NULL OR n = 0 THEN
    RETURN 'new';
  END IF;
  SELECT * INTO rules FROM risk_pool_rules;
  RETURN CASE WHEN n >= rules.trusted_from THEN 'trusted' WHEN n >= rules.returning_from THEN 'returning' ELSE 'new' END;
END
$$;

-- requisite_velocity_allows: the requisite has room for one more hand-out of p_amount in its
-- sliding windows (migration 048): fewer than p_max_count hand-outs in the last p_count_seconds,
-- and p_amount more keeps the last p_amount_seconds' total within p_max_amount. Every hand-out
-- counts, whatever became of it: the rule limits how often a card is shown, not what it earned.
-- Reads the calling statement's snapshot (STABLE), over payments_executor_created (no index on
-- payments of its own: one more would cost every create, velocity or not).
CREATE OR REPLACE FUNCTION requisite_velocity_allows(p_requisite uuid, p_executor uuid, p_amount numeric,
                                                     p_max_count integer, p_count_seconds integer,
                                                     p_max_amount numeric, p_amount_seconds integer)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
  n integer;
  total numeric;
BEGIN
  IF p_max_count IS NULL AND p_max_amount IS NULL THEN
    RETURN true;
  END IF;
  SELECT count(*) FILTER (WHERE p.created_at > now() - make_interval(secs => p_count_seconds)),
         coalesce(sum(p.payer_amount) FILTER (WHERE p.created_at > now() - make_interval(secs => p_amount_seconds)), 0)
    INTO n, total
    FROM payments p
   WHERE p.executor_id = p_executor
     AND p.created_at > now() - make_interval(secs => greatest(coalesce(p_count_seconds, 0), coalesce(p_amount_seconds, 0)))
     AND p.requisite_id = p_requisite;
  RETURN (p_max_count IS NULL OR n + 1 <= p_max_count)
     AND (p_max_amount IS NULL OR total + p_amount <= p_max_amount);
END
$$;

-- requisite_velocity_take: requisite_velocity_allows again once the caller holds the requisite's
-- row, on a snapshot of its own (VOLATILE): every other hand-out of the requisite has committed
-- by then, and none can start until the caller ends. A requisite past its velocity fails the
-- statement as a requisite past its limit does (check_violation on requisite_usage_within_limit,
-- migration 019): the caller looks again, and its new snapshot passes the requisite over.
CREATE OR REPLACE FUNCTION requisite_velocity_take(p_requisite uuid, p_executor uuid, p_amount numeric,
                                                   p_max_count integer, p_count_seconds integer,
                                                   p_max_amount numeric, p_amount_seconds integer)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_max_count IS NULL AND p_max_amount IS NULL THEN
    RETURN true;
  END IF;
  IF NOT requisite_velocity_allows(p_requisite, p_executor, p_amount, p_max_count, p_count_seconds, p_max_amount, p_amount_seconds) THEN
    RAISE EXCEPTION 'requisite % is past its velocity', p_requisite
      USING ERRCODE = 'check_violation', CONSTRAINT = 'requisite_usage_within_limit';
  END IF;
  RETURN true;
END
$$;

-- requisite_takes_class: the requisite (its own classes, and its executor's copied onto it)
-- takes payers of class p_class. Null classes take every class.
CREATE OR REPLACE FUNCTION requisite_takes_class(p_own text[], p_executor text[], p_class text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT (p_own IS NULL OR p_class = ANY(p_own)) AND (p_executor IS NULL OR p_class = ANY(p_executor))
$$;

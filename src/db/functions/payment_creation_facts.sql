-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- payment_creation_lock_key: the current text (was last written by migration 034_payment_create_batches.sql).
-- The key of the terminal-and-amount lock, in one place for the lock and its try.
CREATE OR REPLACE FUNCTION payment_creation_lock_key(p_terminal uuid, p_amount numeric) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT hashtextextended(p_terminal::text || ':' || p_amount::text, 7461)
$$;

-- payment_creation_facts: the current text (was last written by migration 034_payment_create_batches.sql).
CREATE OR REPLACE FUNCTION payment_creation_facts(p_merchant uuid, p_terminal uuid, p_ext_id text, p_amount numeric, p_currency text)
RETURNS TABLE (same_amount integer, ext_id_taken boolean)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(payment_creation_lock_key(p_terminal, p_amount));
  RETURN QUERY
    SELECT (SELECT count(*)::integer FROM payments p
             WHERE p.terminal_id = p_terminal AND p.status = 'PENDING' AND p.amount = p_amount AND p.currency = p_currency),
           EXISTS (SELECT 1 FROM payments p WHERE p.merchant_id = p_merchant AND p.ext_id = p_ext_id);
END
$$;

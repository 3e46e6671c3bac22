-- Repeatable (src/db/functions/): src/db/migrate.ts applies every file here, in name order, after the
-- migrations on every start, in one transaction under the migrations' lock. So this is the one current
-- text of these functions: change it here, never in a new migration (old migrations keep the history).
-- CREATE OR REPLACE cannot change a function's arguments or result: for that, a migration DROPs the old
-- signature (as 038 did) and the new text goes here.

-- executor_hold_take: the current text (was last written by migration 026_hold_one_statement.sql).
CREATE OR REPLACE FUNCTION executor_hold_take(p_payment uuid, p_merchant uuid, p_executor uuid, p_hold numeric)
RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  WITH a AS (
    UPDATE ledger_accounts SET balance = balance - p_hold
     WHERE executor_id = p_executor AND kind = 'executor_available' AND balance - p_hold >= min_balance
    RETURNING id
  ), f AS (
    UPDATE ledger_accounts SET balance = balance + p_hold
     WHERE executor_id = p_executor AND kind = 'executor_frozen' AND EXISTS (SELECT 1 FROM a)
    RETURNING id
  ), t AS (
    INSERT INTO ledger_transactions (kind, ref_id, merchant_id) SELECT 'payin_hold', p_payment, p_merchant FROM f
    RETURNING id
  )
  INSERT INTO ledger_entries (transaction_id, account_id, amount)
  SELECT t.id, a.id, -p_hold FROM t, a
  UNION ALL
  SELECT t.id, f.id, p_hold FROM t, f;
  RETURN FOUND;
END
$$;

-- A create's hold in fewer statements and lighter checks (issue 17, item 7).
--
-- 1. executor_hold_take (migration 017) as one statement: four statements of PL/pgSQL each paid
--    the executor's start-up and shut-down. The order of the row locks stays available before
--    frozen: the frozen row's UPDATE is gated on the available row's (EXISTS (SELECT 1 FROM a)),
--    which therefore runs, and locks, first; when the available balance cannot take the hold
--    nothing is written and the function returns false, as before.
--
-- 2. The account rows' shape rules run where the shape can change. PostgreSQL reads back and
--    prepares every CHECK constraint of a table for every statement that updates a row of it,
--    whatever the columns updated; every create updates two account rows (the hold) and every
--    completion one to three, while kind, owner and floor of an account are set when it is opened
--    and the floor again only when the credit line changes. The kind list, the owner rules and the
--    floor's own rule are now checked by a trigger that fires on INSERT and on UPDATE of those
--    columns only, raising the same check_violation under the same constraint names. What every
--    balance change must pass stays a CHECK, in shorter, equivalent form (the owner rules make
--    `terminal_id IS NOT NULL` the terminal accounts and `executor_id IS NOT NULL` the executor
--    accounts).

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

CREATE FUNCTION ledger_accounts_shape() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.kind NOT IN ('terminal_available', 'terminal_frozen', 'executor_available', 'executor_frozen', 'system_incoming',
                      'system_fee_revenue', 'system_adjustments', 'system_outgoing') THEN
    RAISE EXCEPTION 'ledger account kind % is not one of the ledger''s kinds', NEW.kind
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_kind_check', TABLE = 'ledger_accounts';
  END IF;
  IF (NEW.kind LIKE 'terminal_%') IS DISTINCT FROM (NEW.terminal_id IS NOT NULL AND NEW.merchant_id IS NOT NULL) THEN
    RAISE EXCEPTION 'ledger account % of kind %: a terminal account has a terminal and a merchant, no other account has', NEW.id, NEW.kind
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_terminal_owner', TABLE = 'ledger_accounts';
  END IF;
  IF (NEW.kind LIKE 'executor_%') IS DISTINCT FROM (NEW.executor_id IS NOT NULL AND NEW.terminal_id IS NULL AND NEW.merchant_id IS NULL) THEN
    RAISE EXCEPTION 'ledger account % of kind %: an executor account has an executor and nothing else, no other account has one', NEW.id, NEW.kind
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_executor_owner', TABLE = 'ledger_accounts';
  END IF;
  IF NOT (NEW.min_balance <= 0 AND (NEW.min_balance = 0 OR NEW.kind = 'executor_available')) THEN
    RAISE EXCEPTION 'ledger account % of kind %: floor % is not allowed (0, or at most 0 for an executor''s available account)', NEW.id, NEW.kind, NEW.min_balance
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_accounts_min_balance', TABLE = 'ledger_accounts';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER ledger_accounts_shape
  BEFORE INSERT OR UPDATE OF kind, terminal_id, merchant_id, executor_id, min_balance ON ledger_accounts
  FOR EACH ROW EXECUTE FUNCTION ledger_accounts_shape();

ALTER TABLE ledger_accounts
  DROP CONSTRAINT ledger_accounts_kind_check,
  DROP CONSTRAINT ledger_accounts_terminal_owner,
  DROP CONSTRAINT ledger_accounts_executor_owner,
  DROP CONSTRAINT ledger_accounts_min_balance,
  DROP CONSTRAINT ledger_accounts_terminal_nonnegative,
  DROP CONSTRAINT ledger_accounts_executor_floor,
  ADD CONSTRAINT ledger_accounts_terminal_nonnegative CHECK (terminal_id IS NULL OR balance >= 0),
  ADD CONSTRAINT ledger_accounts_executor_floor CHECK (executor_id IS NULL OR balance >= min_balance);

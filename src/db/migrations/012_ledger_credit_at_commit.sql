-- Pay-in credits reach the terminal's balance row at COMMIT.
--
-- Every completion on a terminal credits that terminal's one available-balance row, and the row
-- lock is held from the UPDATE to the end of the transaction. Updated by a statement of the
-- transaction, it stayed locked through a round trip to the service and back (the statement's
-- answer, then COMMIT) — under load, milliseconds each, during which every other completion of the
-- terminal waited: issue 4's benchmark found completions of one terminal committing one at a time,
-- ~300 a second, their backends mostly waiting on that lock.
--
-- An entry written with applied_at_commit is added to its account's balance by this deferred
-- trigger instead, as part of COMMIT: the lock is then held only for the commit itself. Credits
-- only (the CHECK below): a credit cannot overdraw, so nothing needs to know the new balance
-- before COMMIT; a debit is still applied by its own statement, where an overdraft is refused at
-- once (ledger_accounts_terminal_nonnegative).
ALTER TABLE ledger_entries ADD COLUMN applied_at_commit boolean NOT NULL DEFAULT false;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_commit_credit CHECK (NOT applied_at_commit OR amount > 0);

CREATE FUNCTION ledger_apply_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts SET balance = balance + NEW.amount WHERE id = NEW.account_id AND kind LIKE 'terminal_%';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger entry % of transaction %: account % keeps no balance', NEW.id, NEW.transaction_id, NEW.account_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_commit_credit';
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER ledger_entries_apply_at_commit
  AFTER INSERT ON ledger_entries DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.applied_at_commit) EXECUTE FUNCTION ledger_apply_at_commit();

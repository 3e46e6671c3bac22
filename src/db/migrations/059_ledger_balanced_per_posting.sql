-- kassir:locks ACCESS EXCLUSIVE: ledger_entries
--
-- A posting's balance checked once per posting, at a cost that does not grow with the months of
-- ledger_entries kept (issue 38; docs/performance.md "The balancing check once per posting").
--
-- Until now (migrations 001 and 055) a deferred row trigger summed, at COMMIT and once for every
-- entry, the entries of the entry's ledger transaction (and created_at) in ledger_entries: four
-- entries, four identical sums. On the partitioned table each sum's generic plan locks every
-- partition and sets up their pruning: ~15 µs an entry with 2 partitions, 80–95 µs with 26, and
-- ledger_entries gains 12 partitions a year, kept for ever.
--
-- Now an AFTER INSERT statement trigger reads the statement's own new entries (its transition
-- table, no look-up into ledger_entries at all) and groups them as the old check did, by ledger
-- transaction and created_at. Every path writes a posting's entries in one INSERT (payment_complete,
-- executor_hold_take, migrations 017 and 026's holds, src/ledger/ledger.repo.ts post(), the
-- operator's adjustments through it): their groups sum to zero, and that is the whole check.
--
-- A group that does not sum to zero within its statement is not refused there: a posting may still
-- be written across statements of one transaction. Its (transaction, created_at) is put in
-- ledger_postings_to_check, whose deferred constraint trigger — named ledger_entries_balanced, as
-- the old one, so SET CONSTRAINTS names it as before — sums that group over ledger_entries at
-- COMMIT (or at SET CONSTRAINTS … IMMEDIATE) and refuses it unless it balances, as before, once
-- for all the group's rows there: the table holds only the groups of transactions in progress.
--
-- Exactness: a group's entries written by this transaction are the sum of its statements' parts.
-- Every part zero: the whole is zero. A part not zero: the whole is summed at COMMIT, the old
-- check. So a transaction commits exactly when the old check would have let it (entries of other,
-- committed transactions in the same group balanced already when they committed).
--
-- Locks: ACCESS EXCLUSIVE on ledger_entries (the runner takes it first, the header above) for the
-- catalog changes only: the old trigger dropped from the parent and its partitions, the new one
-- created; no row is read. ledger_postings_to_check is new and empty.
SET LOCAL lock_timeout = '1500ms';

-- Unlogged: a row lives only inside the transaction that wrote it (removed before COMMIT, or
-- rolled back with it), so there is nothing to keep across a crash and no WAL to write.
CREATE UNLOGGED TABLE IF NOT EXISTS ledger_postings_to_check (
  transaction_id uuid NOT NULL,
  created_at     timestamptz NOT NULL
);
COMMENT ON TABLE ledger_postings_to_check IS
  'Ledger transactions (and created_at) a statement left unbalanced, summed again at COMMIT (migration 059); empty outside transactions in progress.';

CREATE OR REPLACE FUNCTION ledger_assert_statement_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_new_entries GROUP BY transaction_id, created_at HAVING sum(amount) <> 0) THEN
    INSERT INTO ledger_postings_to_check (transaction_id, created_at)
    SELECT transaction_id, created_at FROM ledger_new_entries GROUP BY transaction_id, created_at HAVING sum(amount) <> 0;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION ledger_assert_balanced_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  -- Every row of this group the transaction has put here so far, this one among them: all were
  -- put by statements that have ended, so the one sum below covers their entries. None left: an
  -- earlier row of the group took them, and its sum covered this row's statement.
  DELETE FROM ledger_postings_to_check WHERE transaction_id = NEW.transaction_id AND created_at = NEW.created_at;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  SELECT coalesce(sum(amount), 0) INTO total FROM ledger_entries
   WHERE transaction_id = NEW.transaction_id AND created_at = NEW.created_at;
  IF total <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', NEW.transaction_id, total
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_postings_to_check;
CREATE CONSTRAINT TRIGGER ledger_entries_balanced
  AFTER INSERT ON ledger_postings_to_check DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_assert_balanced_at_commit();

-- Both in this one transaction: there is no moment without a check.
DROP TRIGGER IF EXISTS ledger_entries_balanced_statement ON ledger_entries;
CREATE TRIGGER ledger_entries_balanced_statement
  AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS ledger_new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_assert_statement_balanced();
-- PostgreSQL fires a statement trigger for the table the statement names only, and does not clone
-- one onto partitions: each month gets its own, so that an INSERT naming a month is checked too
-- (a statement through the parent fires the parent's alone). The months created later get it from
-- src/db/partitions.ts, which gives a new month the parent's statement triggers.
DO $$
DECLARE
  part regclass;
BEGIN
  FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'ledger_entries'::regclass LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS ledger_entries_balanced_statement ON %s', part);
    EXECUTE format('CREATE TRIGGER ledger_entries_balanced_statement AFTER INSERT ON %s REFERENCING NEW TABLE AS ledger_new_entries '
                   'FOR EACH STATEMENT EXECUTE FUNCTION ledger_assert_statement_balanced()', part);
  END LOOP;
END
$$;
DROP TRIGGER IF EXISTS ledger_entries_balanced ON ledger_entries;
DROP FUNCTION IF EXISTS ledger_assert_balanced();

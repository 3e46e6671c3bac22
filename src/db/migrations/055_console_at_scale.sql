-- The system accounts' balances without summing every entry ever made (issue 38: the console at
-- 10^7 payments). Terminal and executor accounts keep their balance on their row; the system's
-- accounts keep none (migration 001: a running total would be one row every pay-in waits on), so
-- the dashboard's platform revenue summed every system_fee_revenue entry of all time: 0.4 s at
-- 10^6 payments, seconds at 10^7, and growing with every pay-in.
--
-- Instead a job (ledger_totals, every minute: src/ledger/system-totals.ts) rolls the entries up:
-- `total` is the sum of the account's entries whose ledger transaction was created before `upto`,
-- an instant before which no transaction that could still write the ledger began (the oldest
-- open transaction's start, see there), so no entry can appear behind it later. A balance is then
-- `total` plus the entries of the transactions created since `upto` (ledger_transactions_created
-- finds them): a minute or so of postings. Every row has the same `upto`; the job advances them
-- together, under their row locks.
--
-- A new, empty table: nothing to lock for long. Until the job's first run (its first run sums the
-- whole ledger once, in the background) a balance is summed from the entries as before.
CREATE TABLE ledger_account_totals (
  account_id uuid PRIMARY KEY REFERENCES ledger_accounts (id),
  upto timestamptz NOT NULL,
  total numeric(38, 6) NOT NULL
);

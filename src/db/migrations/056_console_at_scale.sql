-- The operator console at 10^7 payments (issue 38: dashboard, search, timeline with p95 ≤ 200 ms).
--
-- 1. The system accounts' balances without summing every entry ever made. Terminal and executor
-- accounts keep their balance on their row; the system's accounts keep none (migration 001: a
-- running total would be one row every pay-in waits on), so the dashboard's platform revenue
-- summed every system_fee_revenue entry of all time: 4 · 10^6 entries at 10^7 payments, spread
-- over every page of ledger_entries (4 GB and more), growing with every pay-in.
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

-- 2. The search by a card's (or a phone's) last digits (GET /admin/v1/payments?q=1234): 4 digits
-- match one payment in a thousand, 10 000 of 10^7, which the search read from the table twice, for
-- the page and for the count: twice ten thousand pages of a table far larger than memory, and
-- growing with it. This index replaces migration 030's payments_requisite_tail
-- (the same key) and also holds what the search needs of each match — its time, for the order and
-- the page, its id, and the value, which longer digit strings are checked on — so the matches are
-- counted and ordered from the index alone (an index-only scan: the table's pages all-visible, as
-- vacuum leaves them), and only the page's 50 payments are read. A create writes one entry here
-- as it wrote one in the index it replaces, some 30 bytes longer.
--
-- Built inside the migration's transaction, which blocks writes to payments while it is built: a
-- minute or so per 10^7 payments. An operator with a big table builds it first, without blocking,
-- and this statement then finds it there:
--   CREATE INDEX CONCURRENTLY payments_requisite_tail_created ON payments
--     (right(regexp_replace(req_value, '\D', '', 'g'), 4), created_at) INCLUDE (id, req_value);
CREATE INDEX IF NOT EXISTS payments_requisite_tail_created ON payments
  (right(regexp_replace(req_value, '\D', '', 'g'), 4), created_at) INCLUDE (id, req_value);
-- The index it replaces goes in the same release, against the expand-then-contract rule's letter
-- (docs/operations.md "Upgrades") but not its point: the previous release's search spells the same
-- expression, which is this index's first column, so an old instance still serving during the
-- upgrade finds its matches through this index as fast.
DROP INDEX IF EXISTS payments_requisite_tail;

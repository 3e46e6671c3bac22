-- kassir:no-transaction
--
-- The hourly ledger check since its watermark reads no table whole (issue 38; docs/performance.md
-- "The whole check in pieces, and the hourly one bounded"). Two of its reads had no index to take:
--
-- executor_deposits_created: the deposits recorded since the watermark ("deposits credited once",
-- ledger.repo.ts miscreditedDeposits). executor_deposits_executor_created leads with the executor:
-- every run read every transfer ever recorded.
--
-- withdrawals_open: the withdrawals still in progress, whose reserves the frozen balances must equal
-- ("frozen equals open holds", frozenApartFromOpenHolds and executorFrozenApartFromHolds: the
-- present state, read whole by every run, hourly or daily — but only the open rows of it). No index
-- held the status: every run read every withdrawal ever made. Its predicate is the check's own
-- (status IN ('pending', 'processing')); the dashboard's counts per status and the chain
-- adapters' scan of withdrawals in progress (withdrawals.repo.ts) read it too.
--
-- Locks: none beyond the builds' own SHARE UPDATE EXCLUSIVE (CONCURRENTLY: writers go on). A build
-- a crash left invalid is dropped and made again: every statement here may run again. The
-- previous release reads neither index and is not slowed by either (two small tables).

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('executor_deposits_created') AND NOT indisvalid) THEN
    DROP INDEX executor_deposits_created;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('withdrawals_open') AND NOT indisvalid) THEN
    DROP INDEX withdrawals_open;
  END IF;
END
$$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS executor_deposits_created ON executor_deposits (created_at);

CREATE INDEX CONCURRENTLY IF NOT EXISTS withdrawals_open ON withdrawals (status) WHERE status IN ('pending', 'processing');

-- kassir:no-transaction
--
-- History that does not slow the present (issue 38 item 3), step 1 of 2: what migration 055 needs
-- so that it can turn the tables that only grow into monthly partitions in a moment, without
-- reading them under a lock. Statement by statement, outside a transaction (src/db/migrate.ts):
-- nothing here blocks a writer for longer than a catalog change.
--
-- The tables (docs/performance.md "History in monthly partitions" says why these and not others):
--   ledger_entries    by created_at   postings: money history, kept forever
--   audit_log         by created_at   kept forever
--   webhook_attempts  by started_at   kept WEBHOOK_ATTEMPTS_RETENTION_DAYS, then dropped a month at a time
--   payment_refusals  by created_at   lost-demand telemetry, kept forever (small rows)
--
-- For each, while the service keeps writing:
-- 1. a CHECK that every row is older than the bound (the start of next month, or of the month after
--    when this month ends within a week), added NOT VALID (a catalog change) and then VALIDATEd
--    (one read of the table under SHARE UPDATE EXCLUSIVE: inserts go on). Migration 055 attaches
--    the table as the partition of everything before the bound; with this constraint PostgreSQL
--    knows the rows fit and does not read them again under its exclusive lock;
-- 2. the unique index (id, partition column) built CONCURRENTLY: a partitioned table's primary
--    key must hold its partition column, and 055 makes this index the old table's primary key.
-- Each statement may run again after a crash: an index a failed CONCURRENTLY build left invalid is
-- dropped and built again; a bound already there is kept.

DO $$
DECLARE
  t record;
  -- Month arithmetic in UTC (a timestamp without zone): a summer-time change moves no bound.
  bound timestamptz := (date_trunc('month', (now() + interval '7 days') AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
BEGIN
  FOR t IN SELECT * FROM (VALUES ('ledger_entries', 'created_at'), ('audit_log', 'created_at'),
                                 ('webhook_attempts', 'started_at'), ('payment_refusals', 'created_at')) AS x(name, col)
  LOOP
    CONTINUE WHEN (SELECT relkind FROM pg_class WHERE oid = t.name::regclass) = 'p';
    IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(t.name || '_history_pkey') AND NOT indisvalid) THEN
      EXECUTE format('DROP INDEX %I', t.name || '_history_pkey');
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = t.name::regclass AND conname = t.name || '_history_bound') THEN
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %L) NOT VALID', t.name, t.name || '_history_bound', t.col, bound);
    END IF;
  END LOOP;
END
$$;

ALTER TABLE ledger_entries VALIDATE CONSTRAINT ledger_entries_history_bound;
ALTER TABLE audit_log VALIDATE CONSTRAINT audit_log_history_bound;
ALTER TABLE webhook_attempts VALIDATE CONSTRAINT webhook_attempts_history_bound;
ALTER TABLE payment_refusals VALIDATE CONSTRAINT payment_refusals_history_bound;

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ledger_entries_history_pkey ON ledger_entries (id, created_at);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS audit_log_history_pkey ON audit_log (id, created_at);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_attempts_history_pkey ON webhook_attempts (id, started_at);
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS payment_refusals_history_pkey ON payment_refusals (id, created_at);

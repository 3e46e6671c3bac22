-- kassir:locks ACCESS EXCLUSIVE: ledger_entries, audit_log, webhook_attempts, payment_refusals
--
-- History that does not slow the present (issue 38 item 3), step 2 of 2: ledger_entries,
-- audit_log, webhook_attempts and payment_refusals become tables partitioned by month on their
-- time column, in one short transaction that reads none of their rows:
--
-- 1. the table is renamed <name>_history; its primary key becomes the (id, time) index 054 built;
--    its other indexes are renamed <index>_history, its triggers dropped (the new parent's are
--    cloned onto it);
-- 2. the partitioned parent is created under the old name, with the same columns, defaults (the
--    same id sequence), CHECKs, indexes and triggers, so that every query, insert and prepared
--    statement of this release and of the previous one (still running during a rolling upgrade:
--    docs/operations.md "Upgrades") reads and writes it as before;
-- 3. <name>_history is attached as the partition FROM (MINVALUE) TO (the bound 054 validated):
--    the validated CHECK proves its rows fit and its indexes match the parent's and are adopted,
--    so nothing is read or built.
--
-- Foreign keys are each partition's own, not the parent's: <name>_history keeps the ones it has,
-- and the maintenance job (src/db/partitions.ts, at every worker start and hourly) creates the
-- coming months with the same ones, two months ahead (the first is the bound's month, at least a
-- week away). A foreign key on the parent would need SHARE ROW EXCLUSIVE on every table it points
-- at (ledger_accounts, ledger_transactions, users, webhook_events) in this transaction, and the
-- service's writers take those together with these tables in orders of their own: a lock set
-- that always met a writer halfway (test/partitions.test.ts found it never complete under load).
--
-- Locks (the header above): ACCESS EXCLUSIVE on the four tables, all taken by the runner before
-- this text runs, so that this migration can never be in a deadlock with a writer and win it
-- (src/db/migrate.ts: each lock waited for a slice of deadlock_timeout while others are held; a
-- busy one waited for alone, then all tried again). Writers wait only for what follows: catalog
-- changes, no row read. Anything else this needs is waited for at most 1.5 s.
SET LOCAL lock_timeout = '1500ms';

-- A posting's balance is checked at COMMIT over the entries of its transaction that share the
-- inserted entry's created_at: on the partitioned table that names one partition instead of
-- searching every month's index. The entries of one ledger transaction are written in one
-- database transaction (created_at = now(), the same for all), so the sum is theirs; a group of
-- entries of one ledger transaction with another created_at must balance on its own — stricter
-- than before, never looser: every group balanced means the transaction balanced.
CREATE OR REPLACE FUNCTION ledger_assert_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  total numeric;
BEGIN
  SELECT coalesce(sum(amount), 0) INTO total FROM ledger_entries
   WHERE transaction_id = NEW.transaction_id AND created_at = NEW.created_at;
  IF total <> 0 THEN
    RAISE EXCEPTION 'ledger transaction % is unbalanced by %', NEW.transaction_id, total
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_transaction_balanced';
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION pg_temp.kassir_partition_history(p_table text, p_column text) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  hist text := p_table || '_history';
  bound timestamptz;
  seq text;
  r record;
  ddl text[] := '{}';
  stmt text;
BEGIN
  IF (SELECT relkind FROM pg_class WHERE oid = p_table::regclass) = 'p' THEN
    RETURN;
  END IF;
  SELECT (regexp_match(pg_get_constraintdef(oid), '''([^'']+)'''))[1]::timestamptz INTO bound
    FROM pg_constraint WHERE conrelid = p_table::regclass AND conname = p_table || '_history_bound' AND convalidated;
  IF bound IS NULL OR to_regclass(hist || '_pkey') IS NULL THEN
    RAISE EXCEPTION '%: migration 054 left no validated bound or no (id, %) index', p_table, p_column;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = p_table::regclass AND contype IN ('u', 'x')) THEN
    RAISE EXCEPTION '%: a unique constraint without % cannot hold on monthly partitions', p_table, p_column;
  END IF;

  -- 1. The old table steps aside as the history partition.
  EXECUTE format('ALTER TABLE %I RENAME TO %I', p_table, hist);
  SELECT conname INTO stmt FROM pg_constraint WHERE conrelid = hist::regclass AND contype = 'p';
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I, ADD CONSTRAINT %I PRIMARY KEY USING INDEX %I', hist, stmt, hist || '_pkey', hist || '_pkey');
  FOR r IN SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisunique
             FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = hist::regclass AND NOT i.indisprimary
  LOOP
    IF r.indisunique THEN
      RAISE EXCEPTION '%: unique index % cannot hold on monthly partitions', p_table, r.name;
    END IF;
    EXECUTE format('ALTER INDEX %I RENAME TO %I', r.name, left(r.name, 55) || '_history');
    ddl := ddl || regexp_replace(r.def, '^CREATE INDEX \S+ ON \S+ ', format('CREATE INDEX %I ON %I ', r.name, p_table));
  END LOOP;

  -- 2. The partitioned parent, under the old name.
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY RANGE (%I)',
                 p_table, hist, p_column);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', p_table, p_table || '_history_bound');
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id, %I)', p_table, p_table || '_pkey', p_column);
  seq := pg_get_serial_sequence(hist, 'id');
  IF seq IS NOT NULL THEN
    EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.id', seq, p_table);
  END IF;
  FOREACH stmt IN ARRAY ddl LOOP
    EXECUTE stmt;
  END LOOP;
  FOR r IN SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = hist::regclass AND NOT tgisinternal LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', r.tgname, hist);
    EXECUTE regexp_replace(r.def, ' ON (\S+\.)?' || hist || ' ', format(' ON %I ', p_table));
  END LOOP;
  EXECUTE format('COMMENT ON TABLE %I IS %L', p_table,
                 'Partitioned by month on ' || p_column || ' (migration 055); partitions are kept two months ahead by src/db/partitions.ts.');

  -- 3. The history attached: the bound proves its rows fit, nothing is read.
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', p_table, hist, bound);
END
$f$;

SELECT pg_temp.kassir_partition_history('ledger_entries', 'created_at');
SELECT pg_temp.kassir_partition_history('audit_log', 'created_at');
SELECT pg_temp.kassir_partition_history('webhook_attempts', 'started_at');
SELECT pg_temp.kassir_partition_history('payment_refusals', 'created_at');
DROP FUNCTION pg_temp.kassir_partition_history(text, text);

import type { Db, Queryable } from './pool.js';

/*
 * Monthly partitions of the tables that only grow (migration 055: ledger_entries, audit_log,
 * webhook_attempts, payment_refusals; docs/performance.md "History in monthly partitions"). Kept
 * ahead of time by the hourly maintenance job (src/jobs.ts), and, for the tables that have a
 * retention, dropped a whole month at a time once every row in it is older than the retention.
 *
 * Every change here takes its locks with a short lock_timeout: creating a month (a new empty table
 * attached under SHARE UPDATE EXCLUSIVE on the parent, which writers do not wait for) and dropping
 * one (a detach, ACCESS EXCLUSIVE on the parent for a moment) never queue the service's writers
 * behind a long query; a run that could not lock fails and the next run does it.
 */

/** Money history and the audit trail: kept for ever, whatever a caller asks. */
const KEPT_FOREVER = new Set(['ledger_entries', 'ledger_transactions', 'payments', 'audit_log']);

/**
 * How long a maintenance statement waits for a lock before it gives up until the next run: above
 * PostgreSQL's default deadlock_timeout (1 s), after which a lock request blocked by autovacuum
 * (vacuuming the partition being dropped) cancels it.
 */
const LOCK_TIMEOUT = '1500ms';

export interface Partition {
  name: string;
  /** Lower bound; null: MINVALUE (the history partition migration 055 attached). */
  from: Date | null;
  /** Upper bound (exclusive); null: MAXVALUE. */
  to: Date | null;
}

export interface PartitionedTable {
  table: string;
  column: string;
  partitions: Partition[];
}

/** The tables of this schema partitioned by range on one timestamptz column, with their partitions in order. */
export async function partitionedTables(db: Queryable): Promise<PartitionedTable[]> {
  const { rows } = await db.query<{ table: string; column: string; name: string | null; from: Date | null; to: Date | null }>(
    `SELECT parent.relname AS table, a.attname AS column, child.relname AS name,
            (regexp_match(pg_get_expr(child.relpartbound, child.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS from,
            (regexp_match(pg_get_expr(child.relpartbound, child.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS to
       FROM pg_partitioned_table p
       JOIN pg_class parent ON parent.oid = p.partrelid AND parent.relnamespace = current_schema()::regnamespace
       JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
       LEFT JOIN pg_inherits i ON i.inhparent = p.partrelid
       LEFT JOIN pg_class child ON child.oid = i.inhrelid
      WHERE p.partstrat = 'r' AND p.partnatts = 1 AND a.atttypid = 'timestamptz'::regtype
      ORDER BY parent.relname, 4 NULLS FIRST`,
  );
  const tables = new Map<string, PartitionedTable>();
  for (const row of rows) {
    const entry = tables.get(row.table) ?? { table: row.table, column: row.column, partitions: [] };
    tables.set(row.table, entry);
    if (row.name) entry.partitions.push({ name: row.name, from: row.from, to: row.to });
  }
  return [...tables.values()];
}

/** The first instant of the UTC month `months` after the one `at` is in. */
export function monthStart(at: Date, months = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}

/** `<table>_pYYYYMM`, the partition of the UTC month starting at `month`. */
export function partitionName(table: string, month: Date): string {
  return `${table}_p${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

function covers(partition: Partition, from: Date, to: Date): boolean {
  return (partition.from === null || partition.from <= from) && (partition.to === null || partition.to >= to);
}

function overlaps(partition: Partition, from: Date, to: Date): boolean {
  return (partition.from === null || partition.from < to) && (partition.to === null || partition.to > from);
}

async function inTransactionWithLockTimeout(db: Db, statements: string[]): Promise<void> {
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      for (const statement of statements) await client.query(statement);
      await client.query('COMMIT');
    } catch (err) {
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (rollbackErr: Error) => rollbackErr,
      );
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Months of partitions kept ready beyond the current one (docs/operations.md "History: partitions and retention"). */
export const PARTITION_MONTHS_AHEAD = 2;

/**
 * The parent's statement-level triggers each of `partitions` lacks, as statements creating them on
 * it (one query for them all; a name not yet a table lacks every one). PostgreSQL clones a parent's
 * row triggers onto its partitions but not its statement triggers, and fires a statement trigger
 * for the table a statement names only: without its own copy, an INSERT naming a month would skip
 * the parent's (ledger_entries' balance check, migration 059).
 */
async function missingStatementTriggers(db: Queryable, table: string, partitions: string[]): Promise<Map<string, string[]>> {
  const { rows } = await db.query<{ partition: string; def: string }>(
    `SELECT part.name AS partition, pg_get_triggerdef(t.oid) AS def
       FROM unnest($2::text[]) AS part(name)
       JOIN pg_trigger t ON t.tgrelid = $1::regclass AND NOT t.tgisinternal AND t.tgtype & 1 = 0
      WHERE NOT EXISTS (SELECT 1 FROM pg_trigger p WHERE p.tgrelid = to_regclass(part.name) AND p.tgname = t.tgname)
      ORDER BY part.name, t.tgname`,
    [ident(table), partitions.map(ident)],
  );
  const on = new RegExp(` ON (\\S+\\.)?("?)${table}\\2 `);
  const missing = new Map<string, string[]>();
  for (const row of rows) {
    if (!on.test(row.def)) throw new Error(`${table}: cannot read the trigger ${row.def}`);
    const partition = partitions.find((name) => ident(name) === row.partition)!;
    missing.set(partition, [...(missing.get(partition) ?? []), row.def.replace(on, ` ON ${row.partition} `)]);
  }
  return missing;
}

/**
 * Makes sure every partitioned history table has a partition for the month of `now` and the
 * `monthsAhead` months after it (UTC months). A month is created as an empty table shaped like
 * the parent, given the partitions' foreign keys and the parent's statement triggers, and attached
 * (SHARE UPDATE EXCLUSIVE on the parent: inserts go on meanwhile). A partition that lacks one of
 * the parent's statement triggers (a month a release before migration 059 created) is given it
 * (SHARE ROW EXCLUSIVE on that partition for a moment). Returns the partitions created.
 */
export async function ensureMonthsAhead(db: Db, now: Date, monthsAhead: number): Promise<string[]> {
  const created: string[] = [];
  for (const { table, partitions } of await partitionedTables(db)) {
    for (const triggers of (
      await missingStatementTriggers(
        db,
        table,
        partitions.map((p) => p.name),
      )
    ).values()) {
      await inTransactionWithLockTimeout(db, triggers);
    }
    for (let m = 0; m <= monthsAhead; m++) {
      const from = monthStart(now, m);
      const to = monthStart(now, m + 1);
      if (partitions.some((p) => covers(p, from, to))) continue;
      // A partition reaching into the month from either side: not one of ours; leave it to a person.
      if (partitions.some((p) => overlaps(p, from, to))) {
        throw new Error(`${table}: the month from ${from.toISOString()} is partly covered by another partition; create it by hand`);
      }
      const name = partitionName(table, from);
      // The foreign keys a month needs, from the partition that has the most of its own (migration
      // 055 keeps them per partition, not on the parent: see its header). Added while the table is
      // not attached yet: no query of the parent can be waiting for it while this waits for the
      // SHARE ROW EXCLUSIVE lock a foreign key takes on the table it points at.
      const { rows: keys } = await db.query<{ name: string; def: string }>(
        `SELECT c.conname AS name, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
          WHERE c.contype = 'f' AND c.conparentid = 0 AND c.conrelid = (
                SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = $1::regclass
                 ORDER BY (SELECT count(*) FROM pg_constraint f WHERE f.conrelid = i.inhrelid AND f.contype = 'f' AND f.conparentid = 0) DESC,
                          i.inhrelid DESC
                 LIMIT 1)
          ORDER BY c.conname`,
        [ident(table)],
      );
      await inTransactionWithLockTimeout(db, [
        `CREATE TABLE ${ident(name)} (LIKE ${ident(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`,
        ...keys.map((key) => `ALTER TABLE ${ident(name)} ADD CONSTRAINT ${ident(key.name)} ${key.def}`),
        ...((await missingStatementTriggers(db, table, [name])).get(name) ?? []),
        `ALTER TABLE ${ident(table)} ATTACH PARTITION ${ident(name)} FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`,
      ]);
      partitions.push({ name, from, to });
      created.push(name);
    }
  }
  return created;
}

/**
 * Drops the partitions of `table` whose every row is older than `cutoff` (upper bound at or
 * before it): detached (a moment of ACCESS EXCLUSIVE on the parent, bounded by lock_timeout), then
 * dropped. Refuses the money and audit tables. Returns the partitions dropped.
 */
export async function dropPartitionsBefore(db: Db, table: string, cutoff: Date): Promise<string[]> {
  if (KEPT_FOREVER.has(table)) throw new Error(`${table} is money or audit history: it is never dropped`);
  const found = (await partitionedTables(db)).find((t) => t.table === table);
  if (!found) return [];
  const dropped: string[] = [];
  for (const partition of found.partitions) {
    if (partition.to === null || partition.to > cutoff) continue;
    await inTransactionWithLockTimeout(db, [`ALTER TABLE ${ident(table)} DETACH PARTITION ${ident(partition.name)}`, `DROP TABLE ${ident(partition.name)}`]);
    dropped.push(partition.name);
  }
  return dropped;
}

/**
 * ANALYZE of each partitioned parent that has no statistics of its own (autovacuum analyzes the
 * partitions but never a partitioned parent; the planner reads the parent's for joins across
 * months), or that just gained or lost a partition. ANALYZE takes SHARE UPDATE EXCLUSIVE: writes
 * go on. Returns the tables analyzed.
 */
export async function analyzeParents(db: Db, changed: Iterable<string>): Promise<string[]> {
  const { rows } = await db.query<{ table: string }>(
    `SELECT c.relname AS table FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid
      WHERE c.relnamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_statistic s WHERE s.starelid = p.partrelid AND s.stainherit)`,
  );
  const tables = new Set([...rows.map((r) => r.table), ...changed]);
  for (const table of tables) await db.query(`ANALYZE ${ident(table)}`);
  return [...tables];
}

import type { Queryable } from '../db/pool.js';

/** What a backup records of the database it read, and a restore compares against. */
export interface DatabaseFacts {
  /** PostgreSQL's major version (server_version_num / 10000). */
  serverMajor: number;
  serverVersion: string;
  sizeBytes: number;
  /** The newest applied migration (schema_migrations), null on a database Kassir never migrated. */
  schemaMigration: string | null;
}

export async function databaseFacts(db: Queryable): Promise<DatabaseFacts> {
  const { rows } = await db.query<{ num: string; version: string; size: number; migration: string | null }>(
    `SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version,
            pg_database_size(current_database()) AS size,
            (SELECT max(name) FROM schema_migrations WHERE to_regclass('schema_migrations') IS NOT NULL) AS migration`,
  );
  const row = rows[0]!;
  return { serverMajor: Math.floor(Number(row.num) / 10000), serverVersion: row.version, sizeBytes: Number(row.size), schemaMigration: row.migration };
}

/** The server's major version alone (works on any database, migrated or not). */
export async function serverMajor(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ num: string }>(`SELECT current_setting('server_version_num') AS num`);
  return Math.floor(Number(rows[0]!.num) / 10000);
}

/** Tables in the database outside PostgreSQL's own schemas: a restore needs none. */
export async function userTables(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
      ORDER BY 1`,
  );
  return rows.map((row) => row.name);
}

/** Every file-store key the database points at: receipts, payout proofs, executors' dispute files. */
export async function storedFileKeys(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(
    `SELECT storage_key AS key FROM receipts WHERE storage_key IS NOT NULL
     UNION SELECT proof_key FROM payouts WHERE proof_key IS NOT NULL
     UNION SELECT executor_file_key FROM disputes WHERE executor_file_key IS NOT NULL
     ORDER BY 1`,
  );
  return rows.map((row) => row.key);
}

/** The ledger in figures: accounts and their balances by kind, transactions and entries. */
export interface LedgerFigures {
  accounts: { kind: string; count: number; balance: string }[];
  transactions: number;
  entries: number;
  entriesTotal: string;
  payments: number;
  payouts: number;
  withdrawals: number;
  disputes: number;
}

export async function ledgerFigures(db: Queryable): Promise<LedgerFigures> {
  const accounts = await db.query<{ kind: string; count: number; balance: string }>(
    `SELECT kind, count(*) AS count, sum(balance)::text AS balance FROM ledger_accounts GROUP BY kind ORDER BY kind`,
  );
  const { rows } = await db.query<Omit<LedgerFigures, 'accounts'>>(
    `SELECT (SELECT count(*) FROM ledger_transactions) AS transactions,
            (SELECT count(*) FROM ledger_entries) AS entries,
            (SELECT coalesce(sum(amount), 0)::text FROM ledger_entries) AS "entriesTotal",
            (SELECT count(*) FROM payments) AS payments,
            (SELECT count(*) FROM payouts) AS payouts,
            (SELECT count(*) FROM withdrawals) AS withdrawals,
            (SELECT count(*) FROM disputes) AS disputes`,
  );
  return { accounts: accounts.rows, ...rows[0]! };
}

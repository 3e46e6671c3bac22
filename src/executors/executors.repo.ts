import { prepared, type Queryable, type Tx } from '../db/pool.js';
import { createExecutorAccounts } from '../ledger/ledger.repo.js';

export interface ExecutorRow {
  id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
  /** USDT the executor may go below zero on its available balance (DESIGN.md "Executors' money"). */
  credit_limit: string;
  /** Percent of a completed pay-in's USDT value credited to the executor. */
  payin_reward: string;
  /** Percent added to a completed payout's USDT value credited to the executor who paid it. */
  payout_reward: string;
  /** The deposit's available balance (USDT; below zero down to −credit_limit). */
  balance: string;
  /** USDT frozen by the holds of the executor's open payments and withdrawals. */
  balance_frozen: string;
}

const COLUMNS = `e.id, e.name, e.is_active, e.created_at, e.credit_limit, e.payin_reward, e.payout_reward,
  coalesce((SELECT a.balance FROM ledger_accounts a WHERE a.executor_id = e.id AND a.kind = 'executor_available'), 0) AS balance,
  coalesce((SELECT a.balance FROM ledger_accounts a WHERE a.executor_id = e.id AND a.kind = 'executor_frozen'), 0) AS balance_frozen`;

/** Inserts an executor with its two ledger accounts (available and frozen), in the caller's transaction. */
export async function insertExecutor(tx: Tx, name: string, tokenHash: Buffer): Promise<ExecutorRow> {
  const { rows } = await tx.query<{ id: string }>('INSERT INTO executors (name, token_hash) VALUES ($1, $2) RETURNING id', [name, tokenHash]);
  const id = rows[0]!.id;
  await createExecutorAccounts(tx, id);
  return (await findExecutor(tx, id))!;
}

export async function findExecutor(db: Queryable, id: string): Promise<ExecutorRow | undefined> {
  const { rows } = await db.query<ExecutorRow>(prepared(`SELECT ${COLUMNS} FROM executors e WHERE e.id = $1`, [id]));
  return rows[0];
}

/** Who an executor-API request comes from (executor auth). */
export type ExecutorIdentity = Pick<ExecutorRow, 'id' | 'name' | 'is_active' | 'created_at'>;

export async function findExecutorByToken(db: Queryable, tokenHash: Buffer): Promise<ExecutorIdentity | undefined> {
  const { rows } = await db.query<ExecutorIdentity>(prepared('SELECT id, name, is_active, created_at FROM executors WHERE token_hash = $1', [tokenHash]));
  return rows[0];
}

export async function listExecutors(db: Queryable): Promise<(ExecutorRow & { requisites: number })[]> {
  const { rows } = await db.query<ExecutorRow & { requisites: number }>(
    `SELECT ${COLUMNS}, (SELECT count(*) FROM requisites r WHERE r.executor_id = e.id) AS requisites
       FROM executors e ORDER BY e.created_at`,
  );
  return rows;
}

export interface ExecutorPatch {
  name?: string;
  isActive?: boolean;
  creditLimit?: string;
  payinReward?: string;
  payoutReward?: string;
}

/**
 * Updates an executor in the caller's transaction. A new credit line moves the floor of its
 * available account with it (min_balance = −credit_limit): refused by the account's CHECK
 * (ledger_accounts_executor_floor) when the balance is already below the new floor.
 */
export async function updateExecutor(tx: Tx, id: string, patch: ExecutorPatch): Promise<ExecutorRow | undefined> {
  const { rowCount } = await tx.query(
    `UPDATE executors SET name = coalesce($2, name), is_active = coalesce($3, is_active), credit_limit = coalesce($4, credit_limit),
            payin_reward = coalesce($5, payin_reward), payout_reward = coalesce($6, payout_reward), updated_at = now()
      WHERE id = $1`,
    [id, patch.name ?? null, patch.isActive ?? null, patch.creditLimit ?? null, patch.payinReward ?? null, patch.payoutReward ?? null],
  );
  if (!rowCount) return undefined;
  if (patch.creditLimit !== undefined) {
    await tx.query(`UPDATE ledger_accounts SET min_balance = -$2::numeric WHERE executor_id = $1 AND kind = 'executor_available'`, [id, patch.creditLimit]);
  }
  return findExecutor(tx, id);
}

/** Locks an executor's available account (before a check-then-post in the same transaction) and returns its balance. */
export async function lockAvailable(tx: Tx, id: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ balance: string }>(
    `SELECT balance FROM ledger_accounts WHERE executor_id = $1 AND kind = 'executor_available' FOR NO KEY UPDATE`,
    [id],
  );
  return rows[0]?.balance;
}

export async function replaceToken(db: Queryable, id: string, tokenHash: Buffer): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE executors SET token_hash = $2, updated_at = now() WHERE id = $1', [id, tokenHash]);
  return (rowCount ?? 0) > 0;
}

import { PgCode, pgConstraint, pgErrorCode, type Queryable, type Tx } from '../db/pool.js';

/** A withdrawal: a merchant's (from a terminal) or an executor's (from its deposit), never both. */
export interface WithdrawalRow {
  id: string;
  merchant_id: string | null;
  terminal_id: string | null;
  executor_id: string | null;
  /** The Idempotency-Key of the executor's request that made it (unique per executor). */
  executor_key: string | null;
  amount: string;
  fee: string;
  subtract_fee_from_amount: boolean;
  send_amount: string;
  reserve: string;
  address: string;
  status: WithdrawalStatus;
  adapter: 'manual' | 'tron';
  tx_hash: string | null;
  signed_tx: unknown;
  tx_expires_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A withdrawal's statuses; the events that move it between them are lifecycle.ts's TRANSITIONS. */
export const WITHDRAWAL_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export interface NewWithdrawal {
  merchantId: string;
  terminalId: string;
  amount: string;
  fee: string;
  subtractFee: boolean;
  sendAmount: string;
  reserve: string;
  address: string;
  adapter: string;
  idempotencyRequest: string | null;
}

export async function insertWithdrawal(tx: Tx, w: NewWithdrawal): Promise<WithdrawalRow> {
  const { rows } = await tx.query<WithdrawalRow>(
    `INSERT INTO withdrawals (merchant_id, terminal_id, amount, fee, subtract_fee_from_amount, send_amount, reserve, address, adapter, idempotency_request)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
    [w.merchantId, w.terminalId, w.amount, w.fee, w.subtractFee, w.sendAmount, w.reserve, w.address, w.adapter, w.idempotencyRequest],
  );
  return rows[0]!;
}

/** Inserts an executor's withdrawal of its deposit (no fee: what is frozen is what is sent). */
export async function insertExecutorWithdrawal(
  tx: Tx,
  w: { executorId: string; amount: string; address: string; adapter: string; key: string | null },
): Promise<WithdrawalRow> {
  const { rows } = await tx.query<WithdrawalRow>(
    `INSERT INTO withdrawals (executor_id, amount, fee, subtract_fee_from_amount, send_amount, reserve, address, adapter, executor_key)
     VALUES ($1, $2, 0, false, $2, $2, $3, $4, $5) RETURNING *`,
    [w.executorId, w.amount, w.address, w.adapter, w.key],
  );
  return rows[0]!;
}

/** The withdrawal an executor's request with this Idempotency-Key made, if any. */
export async function findExecutorWithdrawalByKey(db: Queryable, executorId: string, key: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE executor_id = $1 AND executor_key = $2', [executorId, key]);
  return rows[0];
}

/** A second withdrawal with an executor's Idempotency-Key already used (two requests raced). */
export function isExecutorKeyTaken(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'withdrawals_executor_key';
}

/** An executor's withdrawal by id; another executor's (or a merchant's) is not found. */
export async function findExecutorWithdrawal(db: Queryable, executorId: string, id: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE executor_id = $1 AND id = $2', [executorId, id]);
  return rows[0];
}

export async function listExecutorWithdrawals(db: Queryable, executorId: string, limit: number, offset: number): Promise<WithdrawalRow[]> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE executor_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
    executorId,
    limit,
    offset,
  ]);
  return rows;
}

/** A unique violation of the withdrawal made for one Idempotency-Key request. */
export function isIdempotencyRequestTaken(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'withdrawals_idempotency_request_key';
}

/** The withdrawal an earlier attempt at this Idempotency-Key request made. */
export async function findByIdempotencyRequest(db: Queryable, merchantId: string, idempotencyRequest: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE merchant_id = $1 AND idempotency_request = $2', [
    merchantId,
    idempotencyRequest,
  ]);
  return rows[0];
}

/** A merchant's withdrawal by id; another merchant's is not found. */
export async function findMerchantWithdrawal(db: Queryable, merchantId: string, id: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE merchant_id = $1 AND id = $2', [merchantId, id]);
  return rows[0];
}

export async function listMerchantWithdrawals(db: Queryable, merchantId: string, limit: number, offset: number): Promise<WithdrawalRow[]> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE merchant_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
    merchantId,
    limit,
    offset,
  ]);
  return rows;
}

/** Operator and job paths only: no owner scope. */
export async function findWithdrawal(db: Queryable, id: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE id = $1', [id]);
  return rows[0];
}

/** Operator path: every merchant's and executor's withdrawals, optionally of one status, of merchants' or executors' only, or of one executor. */
export async function listWithdrawals(
  db: Queryable,
  filter: { status?: string; owner?: 'merchant' | 'executor'; executorId?: string },
  limit: number,
  offset: number,
): Promise<WithdrawalRow[]> {
  const { rows } = await db.query<WithdrawalRow>(
    `SELECT * FROM withdrawals
      WHERE ($1::text IS NULL OR status = $1)
        AND ($2::text IS NULL OR ($2 = 'executor') = (executor_id IS NOT NULL))
        AND ($3::uuid IS NULL OR executor_id = $3)
      ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
    [filter.status ?? null, filter.owner ?? null, filter.executorId ?? null, limit, offset],
  );
  return rows;
}

/** Ids of the automatic withdrawals still open (their send job must be running). */
export async function openAutomaticWithdrawalIds(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM withdrawals WHERE adapter <> 'manual' AND status IN ('pending', 'processing')`);
  return rows.map((row) => row.id);
}

/** Schedules (or re-schedules) the send job `task` of a withdrawal; one job per withdrawal at a time. */
export async function addSendJob(db: Queryable, task: string, id: string, runAt: Date | null): Promise<void> {
  await db.query(`SELECT graphile_worker.add_job($1, json_build_object('id', $2::text), job_key => $3, run_at => coalesce($4, now()), max_attempts => 1000)`, [
    task,
    id,
    `withdrawal:${id}`,
    runAt,
  ]);
}

/**
 * Takes the session advisory lock of one withdrawal's sending on `session` (a connection of its
 * own): false when another run holds it. PostgreSQL releases it if the process dies.
 */
export async function tryLockSending(session: Queryable, id: string): Promise<boolean> {
  const { rows } = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 7462)) AS ok', [id]);
  return rows[0]!.ok;
}

export async function unlockSending(session: Queryable, id: string): Promise<void> {
  await session.query('SELECT pg_advisory_unlock(hashtextextended($1, 7462))', [id]);
}

/** The signed transaction a `send` records before broadcasting it. */
export interface SignedTransfer {
  signedTx: unknown;
  txHash: string;
  expiresAt: Date;
  /** The transaction recorded before, if any: the record is refused if another replaced it meanwhile. */
  previousTxHash: string | null;
}

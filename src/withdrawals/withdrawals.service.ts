import type { AppContext } from '../context.js';
import { pgConstraint, pgErrorCode, PgCode, transaction, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { checkDecimal, Money, toNumber, USDT_DECIMALS } from '../lib/money.js';
import { isInsufficientFunds, release, reserve, settle, type Hold } from '../ledger/holds.js';
import { isUuid } from '../payments/payments.service.js';
import { findMerchantTerminal } from '../terminals/terminals.repo.js';
import { tronAddressProblem } from './address.js';

export const SEND_TASK = 'withdrawals_send';

export interface WithdrawalRow {
  id: string;
  merchant_id: string;
  terminal_id: string;
  amount: string;
  fee: string;
  subtract_fee_from_amount: boolean;
  send_amount: string;
  reserve: string;
  address: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  adapter: 'manual' | 'tron';
  tx_hash: string | null;
  signed_tx: unknown;
  tx_expires_at: Date | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The spec's Withdrawal object. */
export function toWithdrawal(row: WithdrawalRow) {
  return {
    id: row.id,
    amount: toNumber(row.amount)!,
    fee: toNumber(row.fee)!,
    currency: 'USDT',
    address: row.address,
    // A hash is shown once the transaction went out or was recorded by the operator.
    tx_hash: row.status === 'pending' ? null : row.tx_hash,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function holdOf(w: WithdrawalRow): Hold {
  return { kind: 'withdrawal', refId: w.id, merchantId: w.merchant_id, terminalId: w.terminal_id, amount: new Money(w.reserve) };
}

export interface CreateWithdrawalInput {
  terminal_id: unknown;
  amount: unknown;
  address: unknown;
  subtract_fee_from_amount?: unknown;
}

/**
 * Creates a withdrawal (spec "POST /v1/withdrawals"; DESIGN.md decision 13): freezes amount + fee
 * (or amount, the wallet then receiving amount − fee) on the merchant's terminal in the same
 * transaction, and schedules the send when a chain adapter sends automatically. With
 * `idempotencyRequest` (an Idempotency-Key's request id) the withdrawal records it: when an
 * earlier attempt at that request already made one, that one is returned and nothing is frozen again.
 */
export async function createWithdrawal(ctx: AppContext, merchantId: string, input: CreateWithdrawalInput, idempotencyRequest?: string): Promise<WithdrawalRow> {
  if (typeof input.terminal_id !== 'string' || !isUuid(input.terminal_id)) throw new DomainError('WDR_001', 'terminal_id must be a terminal id (UUID)');
  const amount = checkDecimal(input.amount, { field: 'amount', places: USDT_DECIMALS, min: 0, minExclusive: true, max: '1e20', maxExclusive: true });
  if (typeof amount === 'string') throw new DomainError('WDR_001', amount);
  if (typeof input.address !== 'string') throw new DomainError('WDR_001', 'address must be a TRC-20 wallet address');
  const addressProblem = tronAddressProblem(input.address);
  if (addressProblem) throw new DomainError('WDR_001', `address is not a valid TRC-20 address: ${addressProblem}`, { address: input.address });
  const subtract = input.subtract_fee_from_amount ?? false;
  if (typeof subtract !== 'boolean') throw new DomainError('WDR_001', 'subtract_fee_from_amount must be true or false');
  const terminal = await findMerchantTerminal(ctx.db, merchantId, input.terminal_id);
  if (!terminal) throw new DomainError('WDR_001', `Terminal ${input.terminal_id} is not one of your terminals`, { terminal_id: input.terminal_id });

  const fee = new Money(terminal.withdrawal_fee);
  const sendAmount = subtract ? amount.minus(fee) : amount;
  const toHold = subtract ? amount : amount.plus(fee);
  if (sendAmount.lte(0)) {
    throw new DomainError('WDR_001', `amount must exceed the withdrawal fee of ${fee.toFixed()} USDT when the fee is subtracted from it`, { fee: fee.toNumber() });
  }
  try {
    return await transaction(ctx.db, async (tx) => {
      const { rows } = await tx.query<WithdrawalRow>(
        `INSERT INTO withdrawals (merchant_id, terminal_id, amount, fee, subtract_fee_from_amount, send_amount, reserve, address, adapter, idempotency_request)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
        [merchantId, terminal.id, amount.toFixed(), fee.toFixed(), subtract, sendAmount.toFixed(), toHold.toFixed(), input.address, ctx.config.withdrawalAdapter, idempotencyRequest ?? null],
      );
      const withdrawal = rows[0]!;
      await reserve(tx, holdOf(withdrawal));
      if (withdrawal.adapter !== 'manual') await scheduleSend(tx, withdrawal.id, null);
      return withdrawal;
    });
  } catch (err) {
    if (idempotencyRequest && pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'withdrawals_idempotency_request_key') {
      const { rows } = await ctx.db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE merchant_id = $1 AND idempotency_request = $2', [merchantId, idempotencyRequest]);
      if (rows[0]) return rows[0];
    }
    if (isInsufficientFunds(err)) {
      throw new DomainError('WDR_002', `Insufficient funds: the withdrawal needs ${toHold.toFixed()} USDT`, { available: Number(terminal.balance), required: toHold.toNumber() });
    }
    throw err;
  }
}

/** Schedules (or re-schedules) the send job of a withdrawal; one job per withdrawal at a time. */
export async function scheduleSend(db: Queryable, id: string, runAt: Date | null): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job($1, json_build_object('id', $2::text), job_key => $3, run_at => coalesce($4, now()), max_attempts => 1000)`,
    [SEND_TASK, id, `withdrawal:${id}`, runAt],
  );
}

export async function getWithdrawal(ctx: AppContext, merchantId: string, id: string): Promise<WithdrawalRow> {
  const { rows } = isUuid(id)
    ? await ctx.db.query<WithdrawalRow>('SELECT * FROM withdrawals WHERE merchant_id = $1 AND id = $2', [merchantId, id])
    : { rows: [] };
  if (!rows[0]) throw new DomainError('WDR_003', `Withdrawal ${id} not found`);
  return rows[0];
}

export async function listWithdrawals(ctx: AppContext, merchantId: string, limit: number, offset: number): Promise<WithdrawalRow[]> {
  const { rows } = await ctx.db.query<WithdrawalRow>(
    'SELECT * FROM withdrawals WHERE merchant_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3',
    [merchantId, limit, offset],
  );
  return rows;
}

/**
 * Completes a withdrawal: records the transaction hash and debits the frozen funds (the fee to
 * revenue, the rest out), guarded on the status so it happens once.
 */
export async function completeWithdrawal(tx: Tx, id: string, txHash: string): Promise<WithdrawalRow | undefined> {
  const { rows } = await tx.query<WithdrawalRow>(
    `UPDATE withdrawals SET status = 'completed', tx_hash = $2, updated_at = now()
      WHERE id = $1 AND status IN ('pending', 'processing') RETURNING *`,
    [id, txHash],
  );
  const withdrawal = rows[0];
  if (withdrawal) await settle(tx, holdOf(withdrawal), new Money(withdrawal.fee));
  return withdrawal;
}

/**
 * Fails a withdrawal and releases its frozen funds, guarded on the status. By hand (`byChain`
 * false) an automatic withdrawal can only be failed while nothing is signed for it: once a
 * transaction exists, only the chain's verdict may release the funds.
 */
export async function failWithdrawal(tx: Tx, id: string, reason: string, byChain = false): Promise<WithdrawalRow | undefined> {
  const { rows } = await tx.query<WithdrawalRow>(
    `UPDATE withdrawals SET status = 'failed', failure_reason = $2, updated_at = now()
      WHERE id = $1 AND status IN ('pending', 'processing') AND ($3 OR adapter = 'manual' OR tx_hash IS NULL) RETURNING *`,
    [id, reason, byChain],
  );
  const withdrawal = rows[0];
  if (withdrawal) await release(tx, holdOf(withdrawal));
  return withdrawal;
}

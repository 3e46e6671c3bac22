import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { lockAvailable } from '../executors/executors.repo.js';
import { isInsufficientFunds, reserve } from '../ledger/holds.js';
import { checkDecimal, Money, toNumber, USDT_DECIMALS } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { findMerchantTerminal } from '../terminals/terminals.repo.js';
import { tronAddressProblem } from './address.js';
import { withdrawalHold } from './lifecycle.js';
import type { WithdrawalRow } from './withdrawals.repo.js';
import * as repo from './withdrawals.repo.js';

export const SEND_TASK = 'withdrawals_send';

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

/** The checks both kinds of withdrawal make of `amount` and `address`. */
function checkAmountAndAddress(input: { amount: unknown; address: unknown }): { amount: Money; address: string } {
  const amount = checkDecimal(input.amount, { field: 'amount', places: USDT_DECIMALS, min: 0, minExclusive: true, max: '1e20', maxExclusive: true });
  if (typeof amount === 'string') throw new DomainError('WDR_001', amount);
  const address = input.address;
  if (typeof address !== 'string') throw new DomainError('WDR_001', 'address must be a TRC-20 wallet address');
  const addressProblem = tronAddressProblem(address);
  if (addressProblem) throw new DomainError('WDR_001', `address is not a valid TRC-20 address: ${addressProblem}`, { address });
  return { amount, address };
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
 * `audit` (a merchant's person in the cabinet) writes its row in the transaction of the freeze.
 */
export async function createWithdrawal(
  ctx: AppContext,
  merchantId: string,
  input: CreateWithdrawalInput,
  idempotencyRequest?: string,
  audit?: AuditRecorder,
): Promise<WithdrawalRow> {
  if (typeof input.terminal_id !== 'string' || !isUuid(input.terminal_id)) throw new DomainError('WDR_001', 'terminal_id must be a terminal id (UUID)');
  const { amount, address } = checkAmountAndAddress(input);
  const subtract = input.subtract_fee_from_amount ?? false;
  if (typeof subtract !== 'boolean') throw new DomainError('WDR_001', 'subtract_fee_from_amount must be true or false');
  const terminal = await findMerchantTerminal(ctx.db, merchantId, input.terminal_id);
  if (!terminal) throw new DomainError('WDR_001', `Terminal ${input.terminal_id} is not one of your terminals`, { terminal_id: input.terminal_id });

  const fee = new Money(terminal.withdrawal_fee);
  const sendAmount = subtract ? amount.minus(fee) : amount;
  const toHold = subtract ? amount : amount.plus(fee);
  if (sendAmount.lte(0)) {
    throw new DomainError('WDR_001', `amount must exceed the withdrawal fee of ${fee.toFixed()} USDT when the fee is subtracted from it`, {
      fee: fee.toNumber(),
    });
  }
  const insufficient = () =>
    new DomainError('WDR_002', `Insufficient funds: the withdrawal needs ${toHold.toFixed()} USDT`, {
      available: Number(terminal.balance),
      required: toHold.toNumber(),
    });
  // The balance read above is the committed one: when it already falls short, the answer is given
  // without taking the balance row's lock. A refusal that took it would hold it for a round trip
  // (the failed UPDATE, then ROLLBACK), and a burst of refusals would queue every withdrawal,
  // payout and completion of the terminal behind one another.
  if (new Money(terminal.balance).lt(toHold)) {
    const earlier = idempotencyRequest && (await repo.findByIdempotencyRequest(ctx.db, merchantId, idempotencyRequest));
    if (earlier) return earlier;
    throw insufficient();
  }
  try {
    return await transaction(ctx.db, async (tx) => {
      const withdrawal = await repo.insertWithdrawal(tx, {
        merchantId,
        terminalId: terminal.id,
        amount: amount.toFixed(),
        fee: fee.toFixed(),
        subtractFee: subtract,
        sendAmount: sendAmount.toFixed(),
        reserve: toHold.toFixed(),
        address,
        adapter: ctx.config.withdrawalAdapter,
        idempotencyRequest: idempotencyRequest ?? null,
      });
      await reserve(tx, withdrawalHold(withdrawal));
      if (withdrawal.adapter !== 'manual') await scheduleSend(tx, withdrawal.id, null);
      await audit?.(tx, 'withdrawal.create', 'withdrawal', withdrawal.id, null, toWithdrawal(withdrawal));
      return withdrawal;
    });
  } catch (err) {
    if (idempotencyRequest && repo.isIdempotencyRequestTaken(err)) {
      const earlier = await repo.findByIdempotencyRequest(ctx.db, merchantId, idempotencyRequest);
      if (earlier) return earlier;
    }
    if (isInsufficientFunds(err)) throw insufficient();
    throw err;
  }
}

/**
 * An executor withdraws from its deposit (issue 17): `amount` USDT to a TRC-20 address, sent by
 * the same adapter, job and confirmation as merchants' withdrawals. The amount is frozen from the
 * AVAILABLE balance — executor_available −amount, executor_frozen +amount — never into the credit
 * line: when available is less than the amount it is refused and nothing changes. No fee.
 */
/**
 * An executor's withdrawal of its deposit. With an Idempotency-Key, a repeat of the request (an
 * app retrying after a lost answer) gets the withdrawal the first one made — `repeated` true —
 * and a different request under a used key is refused; two racing repeats make one withdrawal.
 */
export async function createExecutorWithdrawal(
  ctx: AppContext,
  executorId: string,
  input: { amount: unknown; address: unknown },
  key: string | null,
  audit: AuditRecorder,
): Promise<{ withdrawal: WithdrawalRow; repeated: boolean }> {
  const { amount, address } = checkAmountAndAddress(input);
  const earlier = async () => {
    const found = key === null ? undefined : await repo.findExecutorWithdrawalByKey(ctx.db, executorId, key);
    if (found && (!new Money(found.amount).eq(amount) || found.address !== address)) {
      throw new DomainError(
        'CONFLICT',
        'This Idempotency-Key was used for another withdrawal (another amount or address); use a new key for a new withdrawal',
        {
          withdrawal_id: found.id,
        },
      );
    }
    return found;
  };
  const before = await earlier();
  if (before) return { withdrawal: before, repeated: true };
  try {
    return { withdrawal: await createReserved(ctx, executorId, amount, address, key, audit), repeated: false };
  } catch (err) {
    const raced = repo.isExecutorKeyTaken(err) ? await earlier() : undefined;
    if (raced) return { withdrawal: raced, repeated: true };
    throw err;
  }
}

async function createReserved(
  ctx: AppContext,
  executorId: string,
  amount: Money,
  address: string,
  key: string | null,
  audit: AuditRecorder,
): Promise<WithdrawalRow> {
  return transaction(ctx.db, async (tx) => {
    const withdrawal = await repo.insertExecutorWithdrawal(tx, { executorId, amount: amount.toFixed(), address, adapter: ctx.config.withdrawalAdapter, key });
    // Locked, so that the balance compared is the one the reserve takes from (available before frozen).
    const available = new Money((await lockAvailable(tx, executorId)) ?? '0');
    if (available.lt(amount)) {
      throw new DomainError(
        'WDR_002',
        `Insufficient funds: the withdrawal needs ${amount.toFixed()} USDT but ${available.toFixed()} USDT is available (a credit line cannot be withdrawn); nothing was changed`,
        { available: toNumber(available.toFixed()), required: toNumber(amount.toFixed()) },
      );
    }
    await reserve(tx, withdrawalHold(withdrawal));
    if (withdrawal.adapter !== 'manual') await scheduleSend(tx, withdrawal.id, null);
    await audit(tx, 'withdrawal.create', 'withdrawal', withdrawal.id, null, toWithdrawal(withdrawal));
    return withdrawal;
  });
}

export async function getExecutorWithdrawal(ctx: AppContext, executorId: string, id: string): Promise<WithdrawalRow> {
  const withdrawal = isUuid(id) ? await repo.findExecutorWithdrawal(ctx.db, executorId, id) : undefined;
  if (!withdrawal) throw new DomainError('WDR_003', `Withdrawal ${id} not found`);
  return withdrawal;
}

export async function listExecutorWithdrawals(ctx: AppContext, executorId: string, limit: number, offset: number): Promise<WithdrawalRow[]> {
  return repo.listExecutorWithdrawals(ctx.db, executorId, limit, offset);
}

/** Schedules (or re-schedules) the send job of a withdrawal; one job per withdrawal at a time. */
export async function scheduleSend(db: Queryable, id: string, runAt: Date | null): Promise<void> {
  await repo.addSendJob(db, SEND_TASK, id, runAt);
}

export async function getWithdrawal(ctx: AppContext, merchantId: string, id: string): Promise<WithdrawalRow> {
  const withdrawal = isUuid(id) ? await repo.findMerchantWithdrawal(ctx.db, merchantId, id) : undefined;
  if (!withdrawal) throw new DomainError('WDR_003', `Withdrawal ${id} not found`);
  return withdrawal;
}

export async function listWithdrawals(ctx: AppContext, merchantId: string, limit: number, offset: number): Promise<WithdrawalRow[]> {
  return repo.listMerchantWithdrawals(ctx.db, merchantId, limit, offset);
}

import type { Decimal } from 'decimal.js';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isDepositShort } from '../ledger/holds.js';
import { aboutOf, accountStatement, hasPosting, post } from '../ledger/ledger.repo.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import { checkDecimal, money, toNumber, USDT_DECIMALS } from '../lib/money.js';
import { deriveTronAddress } from '../lib/tron-hd.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import { countLimit, turnoverLimit } from '../requisites/limits.js';
import { executorRequisiteIds, recountUsage } from '../requisites/requisites.repo.js';
import type { TrafficClass } from '../risk/pool-rules.repo.js';
import { listExecutorDeposits } from './deposits.repo.js';
import * as repo from './executors.repo.js';

/** An executor as the operator API shows it: its settings and its deposit (DESIGN.md "Executors' money"). */
export function toExecutor(row: repo.ExecutorRow) {
  return {
    id: row.id,
    name: row.name,
    is_active: row.is_active,
    created_at: row.created_at,
    ...toDeposit(row),
    priority: row.priority,
    ...toScore(row),
    default_daily_turnover_limit: toNumber(row.default_daily_turnover_limit),
    default_monthly_turnover_limit: toNumber(row.default_monthly_turnover_limit),
    default_daily_count_limit: row.default_daily_count_limit,
    default_monthly_count_limit: row.default_monthly_count_limit,
    disable_after_expired: row.disable_after_expired,
    traffic_classes: row.traffic_classes,
    device_silence_minutes: row.device_silence_minutes,
    devices_silent: row.devices_silent,
    max_open_disputes: row.max_open_disputes,
    open_disputes: row.open_disputes,
    uncovered_disputes: row.uncovered_disputes,
    off_reason: row.off_reason,
    low_deposit_threshold: toNumber(row.low_deposit_threshold),
    takes_payments: notHandedOutBecause(row).length === 0,
    why_not: notHandedOutBecause(row),
  };
}

/** The deposit and the terms it works on, as the executor itself reads them (GET /executor/v1/balance) and the operator too. */
export function toDeposit(row: repo.ExecutorRow) {
  return {
    ...toBalance(row),
    deposit_address: row.deposit_address,
    credit_limit: toNumber(row.credit_limit),
    payin_reward: toNumber(row.payin_reward),
    payout_reward: toNumber(row.payout_reward),
    is_paused: row.is_paused,
  };
}

/** The cascade's score and the figures behind it (the last 24 hours, executors_score job). */
export function toScore(row: repo.ExecutorRow) {
  return {
    score: Number(row.score),
    score_figures: {
      handed_out: row.score_handed_out,
      completed: row.score_completed,
      conversion: row.score_handed_out > 0 ? Math.round((row.score_completed / row.score_handed_out) * 1000) / 1000 : null,
      median_minutes_to_complete: toNumber(row.score_median_minutes),
      disputes_7d: row.score_disputes,
      disputes_lost_7d: row.score_disputes_lost,
      disputes_late_7d: row.score_disputes_late,
      handed_out_7d: row.score_handed_out_7d,
      dispute_ratio_7d: row.score_handed_out_7d > 0 ? Math.round((row.score_disputes / row.score_handed_out_7d) * 1000) / 1000 : null,
      computed_at: row.score_updated_at,
    },
  };
}

/** Whether the executor takes payments, as it sees it (GET /executor/v1/status). */
export function toStatus(row: repo.ExecutorRow) {
  return {
    is_active: row.is_active,
    is_paused: row.is_paused,
    devices_silent: row.devices_silent,
    takes_payments: notHandedOutBecause(row).length === 0,
    why_not: notHandedOutBecause(row),
    off_reason: row.off_reason,
    open_disputes: row.open_disputes,
    max_open_disputes: row.max_open_disputes,
    uncovered_disputes: row.uncovered_disputes,
    priority: row.priority,
    score: Number(row.score),
  };
}

/**
 * Why the executor's requisites are not handed out, each reason a word (none: they are):
 * `switched_off` (by the operator, or `dispute_ratio` when the dispute rule did it), `paused`,
 * `devices_silent`, `dispute_cap` (max_open_disputes disputes open), `dispute_uncovered` (an open
 * dispute its deposit could not cover). The same rule as executor_takes_payments (migration 044).
 */
export function notHandedOutBecause(row: repo.ExecutorRow): string[] {
  const why: string[] = [];
  if (!row.is_active) why.push(row.off_reason ?? 'switched_off');
  if (row.is_paused) why.push('paused');
  if (row.devices_silent) why.push('devices_silent');
  if (row.open_disputes >= row.max_open_disputes) why.push('dispute_cap');
  if (row.uncovered_disputes > 0) why.push('dispute_uncovered');
  return why;
}

/** Pauses (`paused`) or resumes the executor's hand-outs. */
/** The executor pauses or resumes itself, audited with the change. */
export async function setPaused(ctx: AppContext, id: string, paused: boolean, audit: AuditRecorder): Promise<repo.ExecutorRow> {
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findExecutor(tx, id);
    const executor = before && (await repo.setPaused(tx, id, paused));
    if (!executor) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
    await audit(tx, paused ? 'executor.pause' : 'executor.resume', 'executor', id, { is_paused: before.is_paused }, { is_paused: executor.is_paused });
    return executor;
  });
}

/** The deposit as both the operator and the executor see it. */
export function toBalance(row: Pick<repo.ExecutorRow, 'balance' | 'balance_frozen'>) {
  return { balance: toNumber(row.balance), balance_frozen: toNumber(row.balance_frozen), currency: 'USDT' as const };
}

/**
 * Creates an executor with its deposit accounts (and, with KASSIR_TRON_DEPOSIT_XPUB, its TRC-20
 * deposit address); its bearer token is returned once and stored as a hash.
 */
export async function createExecutor(ctx: AppContext, name: string, record: AuditRecorder): Promise<repo.ExecutorRow & { token: string }> {
  const token = randomToken('ex_', 32);
  const executor = await transaction(ctx.db, async (tx) => {
    const row = await repo.insertExecutor(tx, name, hashToken(token));
    await record(tx, 'executor.create', 'executor', row.id, null, { id: row.id, name: row.name });
    return (await withDepositAddress(ctx, tx, row)) ?? row;
  });
  return { ...executor, token };
}

/**
 * Gives an executor its TRC-20 deposit address when deposits on chain are configured and it has
 * none yet (executors created before): the next index of a sequence, child 0/index of the
 * operator's xpub. Returns the executor again when it assigned one.
 */
async function withDepositAddress(ctx: AppContext, db: Queryable, row: repo.ExecutorRow): Promise<repo.ExecutorRow | undefined> {
  const deposits = ctx.config.tronDeposits;
  if (!deposits || row.deposit_address) return undefined;
  const index = await repo.nextDepositIndex(db);
  // A concurrent request may have assigned one meanwhile: its address stays, this index is skipped.
  await repo.assignDepositAddress(db, row.id, index, deriveTronAddress(deposits.xpub, index));
  return repo.findExecutor(db, row.id);
}

export async function getExecutor(ctx: AppContext, id: string): Promise<repo.ExecutorRow> {
  const executor = await repo.findExecutor(ctx.db, id);
  if (!executor) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
  return (await withDepositAddress(ctx, ctx.db, executor)) ?? executor;
}

export interface ExecutorUpdate {
  name?: string;
  is_active?: boolean;
  credit_limit?: number;
  payin_reward?: number;
  payout_reward?: number;
  is_paused?: boolean;
  priority?: number;
  disable_after_expired?: number;
  max_open_disputes?: number;
  low_deposit_threshold?: number | null;
  default_daily_turnover_limit?: number | null;
  default_monthly_turnover_limit?: number | null;
  default_daily_count_limit?: number | null;
  default_monthly_count_limit?: number | null;
  traffic_classes?: TrafficClass[] | null;
}

/** A percentage setting: 0 ≤ value < 100, up to 4 decimals (the column is numeric(7, 4)). */
function percent(value: number | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const checked = checkDecimal(value, { field, places: 4, min: 0, max: 100, maxExclusive: true });
  if (typeof checked === 'string') throw new DomainError('VALIDATION', checked, { [field]: value });
  return checked.toFixed();
}

/**
 * Changes an executor's name, activity, credit line or rewards. A credit line below what the
 * executor already owes (its available balance below −credit_limit) is refused: it must settle first.
 */
/** Changes an executor's settings; `before` is read under the executor's lock and audited with the change. */
export async function updateExecutor(ctx: AppContext, id: string, patch: ExecutorUpdate, record: AuditRecorder): Promise<repo.ExecutorRow> {
  let creditLimit: string | undefined;
  if (patch.credit_limit !== undefined) {
    const checked = checkDecimal(patch.credit_limit, { field: 'credit_limit', places: USDT_DECIMALS, min: 0, max: '1e15', maxExclusive: true });
    if (typeof checked === 'string') throw new DomainError('VALIDATION', checked, { credit_limit: patch.credit_limit });
    creditLimit = checked.toFixed();
  }
  const payinReward = percent(patch.payin_reward, 'payin_reward');
  const payoutReward = percent(patch.payout_reward, 'payout_reward');
  if (patch.priority !== undefined && (!Number.isInteger(patch.priority) || Math.abs(patch.priority) > 1_000_000)) {
    throw new DomainError('VALIDATION', 'priority must be a whole number from -1000000 to 1000000 (higher is handed out first)', { priority: patch.priority });
  }
  if (patch.max_open_disputes !== undefined && (!Number.isInteger(patch.max_open_disputes) || patch.max_open_disputes < 0 || patch.max_open_disputes > 1000)) {
    throw new DomainError('VALIDATION', 'max_open_disputes must be a whole number from 0 to 1000', { max_open_disputes: patch.max_open_disputes });
  }
  let lowDepositThreshold: string | null | undefined;
  if (patch.low_deposit_threshold !== undefined && patch.low_deposit_threshold !== null) {
    const checked = checkDecimal(patch.low_deposit_threshold, {
      field: 'low_deposit_threshold',
      places: USDT_DECIMALS,
      min: 0,
      max: '1e15',
      maxExclusive: true,
    });
    if (typeof checked === 'string') throw new DomainError('VALIDATION', checked, { low_deposit_threshold: patch.low_deposit_threshold });
    lowDepositThreshold = checked.toFixed();
  } else lowDepositThreshold = patch.low_deposit_threshold;
  const disableAfterExpired = patch.disable_after_expired;
  if (disableAfterExpired !== undefined && (!Number.isInteger(disableAfterExpired) || disableAfterExpired < 0 || disableAfterExpired > 1000)) {
    throw new DomainError('VALIDATION', 'disable_after_expired must be a whole number from 0 (never switch requisites off) to 1000', {
      disable_after_expired: disableAfterExpired,
    });
  }
  const limits: NonNullable<repo.ExecutorPatch['limits']> = {};
  for (const key of repo.DEFAULT_LIMITS) {
    const value = patch[key];
    if (value === undefined) continue;
    limits[key] = key.includes('turnover') ? turnoverLimit(value, key) : countLimit(value, key);
  }
  // Not found is answered before anything is locked (and an executor created before deposits on
  // chain were configured gets its address here, as on every read).
  await getExecutor(ctx, id);
  try {
    return await transaction(ctx.db, async (tx) => {
      // Lock order: the executor, its requisites (as the score job's trigger takes them), then
      // the ledger row a credit limit moves — never a requisite after a ledger row. The executor's
      // lock is the one its update takes: `before` is what this change replaced.
      await repo.lockExecutor(tx, id);
      const before = await repo.findExecutor(tx, id);
      if (!before) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
      // Counters are kept only under a limit (migration 024): new defaults start from the truth.
      if (Object.keys(limits).length > 0) await recountUsage(tx, await executorRequisiteIds(tx, id));
      const updated = await repo.updateExecutor(tx, id, {
        name: patch.name,
        isActive: patch.is_active,
        creditLimit,
        payinReward,
        payoutReward,
        isPaused: patch.is_paused,
        priority: patch.priority,
        disableAfterExpired,
        maxOpenDisputes: patch.max_open_disputes,
        lowDepositThreshold,
        trafficClasses: patch.traffic_classes,
        limits,
      });
      if (!updated) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
      await record(tx, 'executor.update', 'executor', id, toExecutor(before), toExecutor(updated));
      return updated;
    }).finally(() => ctx.identities.forget());
  } catch (err) {
    if (!isDepositShort(err)) throw err;
    const current = await getExecutor(ctx, id);
    throw new DomainError(
      'VALIDATION',
      `The executor's available balance is ${money(current.balance).toFixed()} USDT: the credit line cannot be less than what it owes (${money(current.balance).negated().toFixed()} USDT) until it tops up`,
      { credit_limit: patch.credit_limit, balance: toNumber(current.balance) },
    );
  }
}

/** Writes the operator's action in the transaction of the change (the audit log). */
type RecordAdjustment = (tx: Tx, before: repo.ExecutorRow, after: repo.ExecutorRow) => Promise<void>;

/**
 * An operator's adjustment of an executor's deposit (a top-up, or a correction): one balanced
 * `executor_adjustment` posting between its available account and the system adjustments
 * account, with the reason as the memo, audited in the same transaction. A debit may take the
 * available balance down to zero, not into the credit line: taking more is refused and changes nothing.
 * `requestId` (an Idempotency-Key's request) is the posting's cause, so that a retry taking over
 * the key of an attempt whose answer was lost posts nothing again.
 */
export async function adjustDeposit(
  ctx: AppContext,
  id: string,
  body: { amount: number; reason: string },
  record: RecordAdjustment,
  requestId?: string,
): Promise<repo.ExecutorRow> {
  const amount = checkDecimal(body.amount, { field: 'amount', places: USDT_DECIMALS, min: '-1e15', max: '1e15', minExclusive: true, maxExclusive: true });
  if (typeof amount === 'string') throw new DomainError('VALIDATION', amount, { amount: body.amount });
  if (amount.isZero()) throw new DomainError('VALIDATION', 'amount must not be zero: a positive amount tops the deposit up, a negative one takes from it');
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findExecutor(tx, id);
    if (!before) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
    // The attempt whose answer was lost (its Idempotency-Key taken over by this retry) posted it: done, once, audited then.
    if (requestId && (await hasPosting(tx, 'executor_adjustment', requestId))) return before;
    if (amount.isNegative()) {
      // Locked, so that the balance compared is the one the debit applies to.
      const available = money((await repo.lockAvailable(tx, id)) ?? '0');
      if (available.plus(amount).isNegative()) {
        throw new DomainError(
          'VALIDATION',
          `The adjustment takes ${amount.negated().toFixed()} USDT but only ${available.toFixed()} USDT is available; nothing was changed`,
          { available: toNumber(available.toFixed()) },
        );
      }
    }
    await post(tx, {
      kind: 'executor_adjustment',
      refId: requestId ?? null,
      merchantId: null,
      memo: body.reason,
      entries: [
        { account: { executorId: id, kind: 'executor_available' }, amount },
        { account: { kind: 'system_adjustments' }, amount: amount.negated() as Decimal },
      ],
    });
    const after = (await repo.findExecutor(tx, id))!;
    await record(tx, before, after);
    return after;
  });
}

/** An executor's statement: its postings, newest first, each with the balance of its account after it. */
export async function statement(ctx: AppContext, id: string, page: { limit: number; offset: number }) {
  const { rows, total } = await accountStatement(ctx.db, { executorId: id }, page);
  return {
    entries: rows.map((row) => ({
      id: row.id,
      created_at: row.created_at,
      kind: row.kind,
      account: row.account_kind === 'executor_available' ? 'available' : 'frozen',
      amount: toNumber(row.amount),
      balance_after: toNumber(row.balance_after),
      ref_id: row.ref_id,
      memo: row.memo,
      about: aboutOf(row),
    })),
    total,
    ...page,
  };
}

/** An executor's deposits on chain (owner-scoped), as the executor and the operator see them. */
export async function listDeposits(ctx: AppContext, id: string, page: { limit: number; offset: number }) {
  return (await listExecutorDeposits(ctx.db, id, page.limit, page.offset)).map((row) => ({
    id: row.id,
    tx_hash: row.tx_hash,
    log_index: row.log_index,
    from: row.from_address,
    address: row.address,
    amount: toNumber(row.amount),
    block_number: Number(row.block_number),
    block_time: row.block_time,
    credited_at: row.created_at,
  }));
}

/** Replaces an executor's token at once (a lost phone must stop working immediately). */
export async function rotateExecutorToken(ctx: AppContext, id: string, record: AuditRecorder): Promise<{ token: string }> {
  const token = randomToken('ex_', 32);
  await transaction(ctx.db, async (tx) => {
    if (!(await repo.replaceToken(tx, id, hashToken(token)))) throw new DomainError('NOT_FOUND', `Executor ${id} not found`);
    await record(tx, 'executor.rotate_token', 'executor', id, null, null);
  });
  // The old token stops working at this instance's very next request (others: at migration 058's
  // announcement), as the operator API's writes forget the merchants' (src/http/admin-auth.ts).
  ctx.identities.forget();
  return { token };
}

/**
 * The executor of a bearer token, undefined when none has it (the executor API's check): from
 * memory when the identity cache may serve it — the merchants' cache and its announcements, which
 * migration 058 makes of a change of an executor's token, name or activity — otherwise from the
 * database (docs/performance.md "Webhooks taken together and executors from memory").
 */
export async function executorByToken(ctx: Pick<AppContext, 'db' | 'identities'>, token: string): Promise<repo.ExecutorIdentity | undefined> {
  const tokenHash = hashToken(token);
  return ctx.identities.get(`executor:${tokenHash.toString('base64')}`, async () => {
    const row = await repo.findExecutorByToken(ctx.db, tokenHash);
    return row ? { value: Object.freeze(row), validUntil: null } : undefined;
  });
}

export const listExecutors = (ctx: AppContext) => repo.listExecutors(ctx.db);

/**
 * The low-deposit sweep (every minute): each executor whose available balance fell below its
 * `low_deposit_threshold` is told in the transaction that marks it low, once per crossing (issue 37).
 */
export async function sweepLowDeposits(ctx: AppContext): Promise<number> {
  return transaction(ctx.db, async (tx) => {
    const low = await repo.sweepLowDeposits(tx);
    for (const executor of low) {
      await enqueuePersonMessage(
        tx,
        { executorId: executor.id },
        {
          kind: 'deposit_low',
          eventKey: `deposit_low:${executor.id}:${executor.at.getTime()}`,
          data: { executor_id: executor.id, balance: executor.balance, threshold: executor.threshold, currency: 'USDT' },
        },
      );
    }
    return low.length;
  });
}

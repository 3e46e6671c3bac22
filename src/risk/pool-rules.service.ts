import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { checkDecimal, toNumber } from '../lib/money.js';
import * as repo from './pool-rules.repo.js';

/** The class thresholds as the operator API shows them. */
export function toClasses(row: repo.PoolRulesRow) {
  return { returning_from: row.returning_from, trusted_from: row.trusted_from, updated_at: row.updated_at };
}

/** The requisite velocity as the operator API shows it: each limit, or null when none is set. */
export function toRequisiteVelocity(row: repo.PoolRulesRow) {
  return {
    payments: row.requisite_max_count === null ? null : { max: row.requisite_max_count, window_seconds: row.requisite_count_seconds as number },
    amount:
      row.requisite_max_amount === null ? null : { max: toNumber(row.requisite_max_amount) as number, window_seconds: row.requisite_amount_seconds as number },
    updated_at: row.updated_at,
  };
}

export const getPoolRules = (ctx: AppContext) => repo.getPoolRules(ctx.db);

/**
 * Sets the class thresholds (issue 36 item 3): a payer with fewer than `returning_from` completed
 * payments with the merchant is new, from `trusted_from` on trusted, returning between. Creates
 * read them at once (the cascade reads them itself), on every instance; audited in the change's
 * transaction.
 */
export async function setClasses(ctx: AppContext, body: { returning_from: number; trusted_from: number }, record: AuditRecorder): Promise<repo.PoolRulesRow> {
  const { returning_from: returningFrom, trusted_from: trustedFrom } = body;
  if (!Number.isInteger(returningFrom) || returningFrom < 1 || returningFrom > 1_000_000) {
    throw new DomainError('VALIDATION', 'returning_from must be a whole number from 1 to 1000000 (completed payments that make a payer returning)', {
      returning_from: returningFrom,
    });
  }
  if (!Number.isInteger(trustedFrom) || trustedFrom <= returningFrom || trustedFrom > 1_000_001) {
    throw new DomainError('VALIDATION', `trusted_from must be a whole number above returning_from (${returningFrom})`, { trusted_from: trustedFrom });
  }
  return transaction(ctx.db, async (tx) => {
    const before = await repo.getPoolRules(tx, true);
    const after = await repo.setClassThresholds(tx, returningFrom, trustedFrom);
    await record(tx, 'risk.classes_set', 'risk_rules', 'classes', toClasses(before), toClasses(after));
    return after;
  });
}

/** One velocity limit as the operator sends it: at most `max` in the last `window_seconds`. */
export interface VelocityLimit {
  max: number;
  window_seconds: number;
}

function windowSeconds(limit: VelocityLimit, field: string): number {
  if (!Number.isInteger(limit.window_seconds) || limit.window_seconds < 1 || limit.window_seconds > 86_400) {
    throw new DomainError('VALIDATION', `${field}.window_seconds must be a whole number of seconds from 1 to 86400`, { field: `${field}.window_seconds` });
  }
  return limit.window_seconds;
}

/**
 * Sets the requisite velocity (issue 36 item 2, per requisite): every requisite is handed out at
 * most `payments.max` times in any `payments.window_seconds`, and for at most `amount.max` (in
 * its own currency, what payers pay) in any `amount.window_seconds`; null or absent: no such
 * limit. Replaces what was set. The cascade passes a requisite past it over, as one past its
 * daily limit; audited in the change's transaction.
 */
export async function setRequisiteVelocity(
  ctx: AppContext,
  body: { payments?: VelocityLimit | null; amount?: VelocityLimit | null },
  record: AuditRecorder,
): Promise<repo.PoolRulesRow> {
  let maxCount: number | null = null;
  let countSeconds: number | null = null;
  if (body.payments) {
    maxCount = body.payments.max;
    if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > 1_000_000) {
      throw new DomainError('VALIDATION', 'payments.max must be a whole number of hand-outs from 1 to 1000000', { field: 'payments.max' });
    }
    countSeconds = windowSeconds(body.payments, 'payments');
  }
  let maxAmount: string | null = null;
  let amountSeconds: number | null = null;
  if (body.amount) {
    const checked = checkDecimal(body.amount.max, { field: 'amount.max', places: 2, min: 0, minExclusive: true, max: '1e18', maxExclusive: true });
    if (typeof checked === 'string') throw new DomainError('VALIDATION', checked, { field: 'amount.max' });
    maxAmount = checked.toFixed(2);
    amountSeconds = windowSeconds(body.amount, 'amount');
  }
  return transaction(ctx.db, async (tx) => {
    const before = await repo.getPoolRules(tx, true);
    const after = await repo.setRequisiteVelocity(tx, { maxCount, countSeconds, maxAmount, amountSeconds });
    await record(tx, 'risk.requisite_limits_set', 'risk_rules', 'requisite_limits', toRequisiteVelocity(before), toRequisiteVelocity(after));
    return after;
  });
}

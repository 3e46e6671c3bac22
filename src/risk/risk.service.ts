import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { PgCode, pgErrorCode, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { checkDecimal } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import * as blocks from './blocks.repo.js';
import { type BlockKind, readMark } from './marks.js';
import * as limits from './velocity.repo.js';

function invalid(message: string, data?: Record<string, unknown>): never {
  throw new DomainError('VALIDATION', message, data);
}

export interface BlockInput {
  kind: BlockKind;
  value?: string;
  payment_id?: string;
  dispute_id?: string;
  merchant_id?: string | null;
  reason: string;
  expires_at?: string | null;
}

/**
 * Blocks a payer's mark (POST /admin/v1/risk/blocks): the value given, or the one the payment
 * (or the dispute's payment) carries — "block from a payment in one step". Stored as its keyed
 * hash and its shown form only; audited in the same transaction.
 */
export async function createBlock(ctx: AppContext, actor: string, input: BlockInput, audit: AuditRecorder): Promise<blocks.BlockRow> {
  const sources = [input.value, input.payment_id, input.dispute_id].filter((v) => v !== undefined);
  if (sources.length !== 1) invalid('Give exactly one of value, payment_id or dispute_id');
  const reason = input.reason.trim();
  if (reason === '') invalid('reason must not be empty');
  let expiresAt: Date | null = null;
  if (input.expires_at) {
    expiresAt = new Date(input.expires_at);
    if (Number.isNaN(expiresAt.getTime())) invalid('expires_at must be a date-time (RFC 3339)', { expires_at: input.expires_at });
    if (expiresAt.getTime() <= Date.now()) invalid('expires_at must be in the future', { expires_at: input.expires_at });
  }
  const merchantId = input.merchant_id ?? null;
  if (merchantId !== null && !isUuid(merchantId)) invalid('merchant_id must be a merchant id (uuid)', { merchant_id: merchantId });

  let value = input.value;
  if (value === undefined) {
    const ref = input.payment_id !== undefined ? { paymentId: input.payment_id } : { disputeId: input.dispute_id! };
    const id = ref.paymentId ?? ref.disputeId!;
    const payer = isUuid(id) ? await blocks.findPayerMarks(ctx.db, ref) : undefined;
    if (!payer) throw new DomainError('NOT_FOUND', `${ref.paymentId ? 'Payment' : 'Dispute'} ${id} not found`);
    const fromPayment: Partial<Record<BlockKind, string | null>> = { client_id: payer.client_id, ip: payer.payer_ip, device: payer.payer_device };
    const found = fromPayment[input.kind];
    if (!found) {
      invalid(
        input.kind === 'card' || input.kind === 'phone'
          ? `A payment does not carry its payer's ${input.kind}; block it by value`
          : `This payment has no ${input.kind} (${input.kind === 'client_id' ? 'the merchant sent none' : 'its payment page was not opened'})`,
        { kind: input.kind },
      );
    }
    value = found;
  }
  const mark = readMark(input.kind, value);
  if (typeof mark === 'string') invalid(`value: ${mark}`, { kind: input.kind });

  try {
    const row = await transaction(ctx.db, async (tx) => {
      const created = await blocks.insertBlock(tx, {
        kind: mark.kind,
        valueHash: ctx.risk.hash(mark.kind, mark.normal),
        valueShown: mark.shown,
        merchantId,
        reason,
        expiresAt,
        createdBy: actor,
      });
      await audit(tx, 'risk.block', 'risk_block', created.id, null, toBlock(created));
      return created;
    });
    // This instance applies it to its very next request; the others on the announcement.
    ctx.risk.forget();
    return row;
  } catch (err) {
    if (pgErrorCode(err) === PgCode.foreignKeyViolation) throw new DomainError('NOT_FOUND', `Merchant ${merchantId} not found`);
    throw err;
  }
}

/** Ends a block (DELETE /admin/v1/risk/blocks/{id}): kept, with who removed it and when. */
export async function removeBlock(ctx: AppContext, actor: string, id: string, audit: AuditRecorder): Promise<void> {
  if (!isUuid(id)) throw new DomainError('NOT_FOUND', `Block ${id} not found`);
  await transaction(ctx.db, async (tx) => {
    const removed = await blocks.removeBlock(tx, id, actor);
    if (!removed) throw new DomainError('NOT_FOUND', `Block ${id} not found or already removed`);
    await audit(tx, 'risk.unblock', 'risk_block', id, toBlock(removed.before), toBlock(removed.after));
  });
  ctx.risk.forget();
}

export function listBlocks(ctx: AppContext, filter: blocks.BlockFilter) {
  return blocks.listBlocks(ctx.db, filter);
}

/** A block as the operator API answers it: never its hash. */
export function toBlock(row: blocks.BlockRow) {
  const now = Date.now();
  return {
    id: row.id,
    kind: row.kind,
    value_shown: row.value_shown,
    merchant_id: row.merchant_id,
    reason: row.reason,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    removed_by: row.removed_by,
    removed_at: row.removed_at?.toISOString() ?? null,
    active: row.removed_at === null && (row.expires_at === null || row.expires_at.getTime() > now),
  };
}

export interface LimitInput {
  scope?: limits.LimitScope;
  window_seconds: number;
  max_payments?: number | null;
  max_amount?: string | number | null;
}

/** Sets the one velocity limit of a scope (PUT /admin/v1/risk/limits): a later PUT replaces it. */
export async function putLimit(ctx: AppContext, actor: string, input: LimitInput, audit: AuditRecorder): Promise<limits.LimitRow> {
  const scope = input.scope ?? 'client_id';
  const maxPayments = input.max_payments ?? null;
  let maxAmount: string | null = null;
  if (input.max_amount !== undefined && input.max_amount !== null) {
    const amount = checkDecimal(input.max_amount, { field: 'max_amount', places: 2, min: 0, minExclusive: true, max: '1e15', maxExclusive: true });
    if (typeof amount === 'string') invalid(amount, { max_amount: input.max_amount });
    maxAmount = amount.toFixed(2);
  }
  if (maxPayments === null && maxAmount === null) invalid('Give max_payments, max_amount or both: a limit needs something to limit');
  const row = await transaction(ctx.db, async (tx) => {
    const before = await limits.findLimit(tx, scope, true);
    const after = await limits.putLimit(tx, { scope, windowSeconds: input.window_seconds, maxPayments, maxAmount, updatedBy: actor });
    await audit(tx, 'risk.limit.set', 'risk_limit', scope, before ? toLimit(before) : null, toLimit(after));
    return after;
  });
  ctx.risk.forget();
  return row;
}

/** Clears the velocity limit of a scope (DELETE /admin/v1/risk/limits?scope=…). */
export async function clearLimit(ctx: AppContext, scope: limits.LimitScope, audit: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    const before = await limits.findLimit(tx, scope, true);
    if (!before) throw new DomainError('NOT_FOUND', `No ${scope} velocity limit is set`);
    await limits.deleteLimit(tx, scope);
    await audit(tx, 'risk.limit.clear', 'risk_limit', scope, toLimit(before), null);
  });
  ctx.risk.forget();
}

export function listLimits(ctx: AppContext) {
  return limits.listLimits(ctx.db);
}

export function toLimit(row: limits.LimitRow) {
  return {
    scope: row.scope,
    window_seconds: row.window_seconds,
    max_payments: row.max_payments,
    max_amount: row.max_amount === null ? null : Number(row.max_amount),
    updated_by: row.updated_by,
    updated_at: row.updated_at.toISOString(),
  };
}

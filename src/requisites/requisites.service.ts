import type { AuditRecorder } from '../admin/audit.service.js';
import { findBankAs } from '../banks/banks.repo.js';
import type { AppContext } from '../context.js';
import { type Db, type Queryable, type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { maskCard, maskPhone } from '../lib/mask.js';
import { COUNTRY_CURRENCY, METHOD_TYPES, type Method, type RequisiteType } from '../lib/methods.js';
import { checkDecimal } from '../lib/money.js';
import { emvProblem, isUuid, normalizeCard, normalizePhone } from '../lib/validators.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import { countLimit, turnoverLimit } from './limits.js';
import * as repo from './requisites.repo.js';
import { type CreateRequisiteBody, toRequisite } from './requisites.schemas.js';

/** A requisite refused: `data.field` names the field it concerns, so a form shows the message on it (the value is not echoed: it may be a card number). */
function invalid(message: string, field: keyof CreateRequisiteBody): never {
  throw new DomainError('VALIDATION', message, { field });
}

/** The value as payers will use it: a Luhn-valid card, an E.164 phone, or a checked EMV payload. */
function normalizeValue(type: RequisiteType, value: string): string {
  switch (type) {
    case 'card':
      return normalizeCard(value) ?? invalid('value must be a card number of 13–19 digits that passes the Luhn check', 'value');
    case 'sbp':
    case 'phone':
    case 'sim':
      return normalizePhone(value) ?? invalid('value must be a phone number in international format, e.g. +79123456789', 'value');
    case 'qr': {
      const problem = emvProblem(value.trim());
      if (problem) invalid(`value must be an EMV QR payload: ${problem}`, 'value');
      return value.trim();
    }
  }
}

/** Checks a whole requisite (after merging a patch) and returns the row fields to store. */
async function validate(db: Queryable, executorId: string, body: CreateRequisiteBody): Promise<repo.RequisiteFields> {
  const type = body.type;
  for (const method of body.methods as Method[]) {
    if (!METHOD_TYPES[method].includes(type)) {
      invalid(`a ${type} requisite cannot serve method ${method} (it takes ${METHOD_TYPES[method].join(' or ')})`, 'methods');
    }
  }
  const expectedCurrency = COUNTRY_CURRENCY[body.country];
  if (!expectedCurrency) invalid(`country ${body.country} is not supported; use one of ${Object.keys(COUNTRY_CURRENCY).join(', ')}`, 'country');
  if (expectedCurrency !== body.currency) invalid(`requisites in ${body.country} are paid in ${expectedCurrency}, not ${body.currency}`, 'currency');
  let bankCode: string | null = null;
  if (body.bank) {
    // A sim requisite is a phone account with a mobile operator (mts there means МТС, the operator).
    const bank = await findBankAs(db, body.bank, type === 'sim' ? 'operator' : 'bank');
    if (!bank) invalid(`bank ${body.bank} is not in the directory; add it with POST /admin/v1/banks`, 'bank');
    if (bank.country !== body.country) invalid(`bank ${body.bank} is in ${bank.country}, not ${body.country}`, 'bank');
    if (type === 'sim' && bank.kind !== 'operator') invalid(`a sim requisite needs a mobile operator code, ${body.bank} is a bank`, 'bank');
    bankCode = bank.code;
  } else if (type === 'sim') {
    invalid('a sim requisite needs its mobile operator code in bank', 'bank');
  }
  const min = checkDecimal(body.min_amount ?? 0, { field: 'min_amount', places: 2, min: 0 });
  if (typeof min === 'string') invalid(min, 'min_amount');
  let max: string | null = null;
  if (body.max_amount !== undefined && body.max_amount !== null) {
    const checked = checkDecimal(body.max_amount, { field: 'max_amount', places: 2, min });
    if (typeof checked === 'string') invalid(checked, 'max_amount');
    max = checked.toFixed();
  }
  return {
    ...checkLimits(body),
    executor_id: executorId,
    type,
    value: normalizeValue(type, body.value),
    bank_code: bankCode,
    holder: (body.holder ?? '').trim(),
    traffic_classes: body.traffic_classes ?? null,
    currency: body.currency,
    country: body.country,
    methods: body.methods,
    min_amount: min.toFixed(),
    max_amount: max,
    is_active: body.is_active ?? true,
  };
}

const LIMIT_FIELDS = ['daily_turnover_limit', 'monthly_turnover_limit', 'daily_count_limit', 'monthly_count_limit'] as const;

type Limits = Pick<repo.RequisiteFields, 'daily_turnover_limit' | 'monthly_turnover_limit' | 'daily_count_limit' | 'monthly_count_limit'>;

function checkLimits(body: CreateRequisiteBody): Limits {
  return {
    daily_turnover_limit: turnoverLimit(body.daily_turnover_limit, 'daily_turnover_limit'),
    monthly_turnover_limit: turnoverLimit(body.monthly_turnover_limit, 'monthly_turnover_limit'),
    daily_count_limit: countLimit(body.daily_count_limit, 'daily_count_limit'),
    monthly_count_limit: countLimit(body.monthly_count_limit, 'monthly_count_limit'),
  };
}

/**
 * Adds a requisite to an executor, audited in the same transaction. `executor`: found by the caller
 * (executors/ sits above requisites/ and hands it in).
 */
export async function createRequisite(ctx: AppContext, executor: { id: string }, body: CreateRequisiteBody, record: AuditRecorder): Promise<repo.RequisiteRow> {
  const executorId = executor.id;
  const fields = await validate(ctx.db, executorId, body);
  return transaction(ctx.db, async (tx) => {
    const row = await repo.insertRequisite(tx, fields);
    await record(tx, 'requisite.create', 'requisite', row.id, null, toRequisite(row, true));
    return row;
  });
}

export async function getRequisite(ctx: AppContext, id: string): Promise<repo.RequisiteRow> {
  const requisite = await repo.findRequisite(ctx.db, id);
  if (!requisite) throw new DomainError('NOT_FOUND', `Requisite ${id} not found`);
  return requisite;
}

/** A patched numeric field: absent keeps the stored value, null clears it. */
const kept = (patched: number | null | undefined, stored: string | null): number | null =>
  patched === undefined ? (stored === null ? null : Number(stored)) : patched;

/** Applies a partial change (the operator's); the merged requisite is validated as a whole, and audited with the change. */
export async function updateRequisite(ctx: AppContext, id: string, patch: Partial<CreateRequisiteBody>, record: AuditRecorder): Promise<repo.RequisiteRow> {
  return changeRequisite(ctx, id, patch, (tx, before, after) =>
    record(tx, 'requisite.update', 'requisite', id, toRequisite(before, true), toRequisite(after, true)),
  );
}

/**
 * A partial change: `before` is read under the requisite's lock (the one its update takes), so the
 * merge starts from what the change replaces and `record` (the audit row of whoever made it) runs
 * in the transaction of the change.
 */
async function changeRequisite(
  ctx: AppContext,
  id: string,
  patch: Partial<CreateRequisiteBody>,
  record: (tx: Tx, before: repo.RequisiteRow, after: repo.RequisiteRow) => Promise<void>,
): Promise<repo.RequisiteRow> {
  const limitsChanged = LIMIT_FIELDS.some((field) => patch[field] !== undefined);
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findRequisite(tx, id, true);
    if (!before) throw new DomainError('NOT_FOUND', `Requisite ${id} not found`);
    const merged: CreateRequisiteBody = {
      type: (patch.type ?? before.type) as RequisiteType,
      value: patch.value ?? before.value,
      bank: patch.bank === undefined ? before.bank_code : patch.bank,
      holder: patch.holder ?? before.holder,
      currency: patch.currency ?? before.currency,
      country: patch.country ?? before.country,
      methods: (patch.methods ?? before.methods) as CreateRequisiteBody['methods'],
      min_amount: patch.min_amount ?? Number(before.min_amount),
      max_amount: patch.max_amount === undefined ? (before.max_amount === null ? null : Number(before.max_amount)) : patch.max_amount,
      is_active: patch.is_active ?? before.is_active,
      daily_turnover_limit: kept(patch.daily_turnover_limit, before.daily_turnover_limit),
      monthly_turnover_limit: kept(patch.monthly_turnover_limit, before.monthly_turnover_limit),
      daily_count_limit: patch.daily_count_limit === undefined ? before.daily_count_limit : patch.daily_count_limit,
      monthly_count_limit: patch.monthly_count_limit === undefined ? before.monthly_count_limit : patch.monthly_count_limit,
      traffic_classes: patch.traffic_classes === undefined ? before.traffic_classes : patch.traffic_classes,
    };
    const fields = await validate(tx, before.executor_id, merged);
    const updated = (await repo.updateRequisite(tx, id, fields))!;
    // Counters are kept only under a limit (migration 024): a limit set or changed starts from the truth.
    if (limitsChanged) await repo.recountUsage(tx, [id]);
    await record(tx, before, updated);
    return updated;
  });
}

export const listRequisites = (ctx: AppContext, executorId?: string) => repo.listRequisites(ctx.db, { executorId });

/** A requisite with its usage in the current day and month. */
export async function getRequisiteWithUsage(ctx: AppContext, id: string) {
  const requisite = await getRequisite(ctx, id);
  return { requisite, usage: await repo.findUsage(ctx.db, id) };
}

/** An executor switches one of its own requisites on or off; another executor's is not found. */
export async function switchOwnRequisite(ctx: AppContext, executorId: string, id: string, isActive: boolean, audit: AuditRecorder) {
  const requisite = isUuid(id) ? await repo.findRequisite(ctx.db, id) : undefined;
  if (!requisite || requisite.executor_id !== executorId) throw new DomainError('NOT_FOUND', `Requisite ${id} is not one of your requisites`);
  return changeRequisite(ctx, id, { is_active: isActive }, (tx, before, updated) =>
    audit(tx, 'requisite.update', 'requisite', id, { is_active: before.is_active }, { is_active: updated.is_active }),
  );
}

/** How a requisite is named to its executor in a message: a card or a phone masked (first 6 and last 4; country and last 2), a QR code not at all. */
export function maskedRequisite(type: string, value: string): string | null {
  if (type === 'card') return maskCard(value);
  if (type === 'qr') return null;
  return maskPhone(value);
}

/**
 * Automatic care after an expiry batch (migration 019): switches off the given requisites whose
 * latest hand-outs all ended unpaid, and tells each one's executor in the same transaction
 * (issue 37: "a card switched off and why"). Returns what was switched off.
 */
export async function switchOffUnpaidStreaks(db: Db, requisiteIds: string[]): Promise<repo.SwitchedOff[]> {
  if (requisiteIds.length === 0) return [];
  return transaction(db, async (tx) => {
    const off = await repo.switchOffUnpaidStreaks(tx, requisiteIds);
    for (const requisite of off) {
      await enqueuePersonMessage(
        tx,
        { executorId: requisite.executor_id },
        {
          kind: 'requisite_off',
          // Switched on again, a requisite starts a new streak: each switch-off is its own event.
          eventKey: `requisite_off:${requisite.id}:${requisite.at.getTime()}`,
          data: {
            requisite_id: requisite.id,
            requisite: maskedRequisite(requisite.type, requisite.value),
            bank: requisite.bank_code,
            reason: 'unpaid_streak',
            streak: requisite.streak,
          },
        },
      );
    }
    return off;
  });
}

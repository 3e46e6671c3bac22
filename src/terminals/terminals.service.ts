import type { Decimal } from 'decimal.js';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isInsufficientFunds } from '../ledger/holds.js';
import { aboutOf, accountStatement, createTerminalAccounts, hasPosting, post } from '../ledger/ledger.repo.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import { checkDecimal, type DecimalRule, USDT_DECIMALS } from '../lib/money.js';
import { checkWebhookUrl } from '../webhooks/sender.js';
import * as repo from './terminals.repo.js';
import { type AdjustmentBody, type CreateTerminalBody, toAdminTerminal, type UpdateTerminalBody } from './terminals.schemas.js';

const PERCENT: Omit<DecimalRule, 'field'> = { places: 4, min: 0, max: 100, maxExclusive: true };
const FEE: Omit<DecimalRule, 'field'> = { places: USDT_DECIMALS, min: 0 };

function operatorDecimal(value: number | undefined, rule: DecimalRule): string | undefined {
  if (value === undefined) return undefined;
  const checked = checkDecimal(value, rule);
  if (typeof checked === 'string') throw new DomainError('VALIDATION', checked);
  return checked.toFixed();
}

/** A new API key: returned once, stored as a hash (it only needs checking). */
function newApiKey(): { key: string; hash: Buffer; prefix: string } {
  const key = randomToken('tk_', 24);
  return { key, hash: hashToken(key), prefix: key.slice(0, 10) };
}

export async function getTerminal(ctx: AppContext, id: string): Promise<repo.TerminalRow> {
  const terminal = await repo.findTerminal(ctx.db, id);
  if (!terminal) throw new DomainError('NOT_FOUND', `Terminal ${id} not found`);
  return terminal;
}

/**
 * Creates a terminal with its ledger accounts and first API key, and its audit row, in one transaction.
 * `merchant`: the merchant, found by the caller (merchants/ sits above terminals/ and hands it in).
 */
export async function createTerminal(
  ctx: AppContext,
  merchant: { id: string },
  body: CreateTerminalBody,
  record: AuditRecorder,
): Promise<{ terminal: repo.TerminalRow; apiKey: string }> {
  const merchantId = merchant.id;
  const apiKey = newApiKey();
  const terminal = await transaction(ctx.db, async (tx) => {
    const terminalId = await repo.insertTerminal(tx, {
      merchantId,
      name: body.name,
      currency: body.currency,
      payinRate: operatorDecimal(body.payin_rate, { field: 'payin_rate', ...PERCENT }) ?? '0',
      payoutRate: operatorDecimal(body.payout_rate, { field: 'payout_rate', ...PERCENT }) ?? '0',
      withdrawalFee: operatorDecimal(body.withdrawal_fee, { field: 'withdrawal_fee', ...FEE }) ?? '0',
      isTest: body.is_test ?? false,
    });
    await createTerminalAccounts(tx, terminalId, merchantId);
    await repo.insertApiKey(tx, terminalId, merchantId, apiKey.hash, apiKey.prefix);
    const created = (await repo.findTerminal(tx, terminalId))!;
    await record(tx, 'terminal.create', 'terminal', terminalId, null, toAdminTerminal(created));
    return created;
  });
  return { terminal, apiKey: apiKey.key };
}

/** Changes a terminal's settings; `before` is read under the row's lock and audited with the change. */
export async function updateTerminal(ctx: AppContext, id: string, body: UpdateTerminalBody, record: AuditRecorder): Promise<repo.TerminalRow> {
  return transaction(ctx.db, async (tx) => {
    const before = await repo.findTerminal(tx, id, true);
    if (!before) throw new DomainError('NOT_FOUND', `Terminal ${id} not found`);
    await repo.updateTerminal(tx, id, {
      name: body.name,
      isActive: body.is_active,
      payinRate: operatorDecimal(body.payin_rate, { field: 'payin_rate', ...PERCENT }),
      payoutRate: operatorDecimal(body.payout_rate, { field: 'payout_rate', ...PERCENT }),
      withdrawalFee: operatorDecimal(body.withdrawal_fee, { field: 'withdrawal_fee', ...FEE }),
      returnUrl: returnUrl(body.return_url, 'return_url'),
      failUrl: returnUrl(body.fail_url, 'fail_url'),
      notifyUrl: notifyUrl(body.notify_url, ctx.config.webhookAllowPrivate),
      disputeTimeout: body.dispute_timeout,
      disputeAnswerSeconds: body.dispute_answer_seconds,
      disputeNightAnswerSeconds: body.dispute_night_answer_seconds,
    });
    const after = (await repo.findTerminal(tx, id))!;
    await record(tx, 'terminal.update', 'terminal', id, toAdminTerminal(before), toAdminTerminal(after));
    return after;
  });
}

/** The payment page links the payer to it: only an absolute http(s) URL, never javascript: or data:. */
function returnUrl(value: string | null | undefined, field: 'return_url' | 'fail_url'): string | null | undefined {
  if (value === undefined || value === null) return value;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new DomainError('VALIDATION', `${field} must be an absolute http(s) URL`, { field, [field]: value });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new DomainError('VALIDATION', `${field} must be an absolute http(s) URL`, { field, [field]: value });
  }
  return parsed.href;
}

/**
 * The terminal's webhook address: the same guard as a payment's notify_url (an absolute http(s)
 * URL, no internal or private address unless WEBHOOK_ALLOW_PRIVATE), checked again on the resolved
 * address at every delivery (src/webhooks/sender.ts). An empty string clears it, as null does.
 */
function notifyUrl(value: string | null | undefined, allowPrivate: boolean): string | null | undefined {
  if (value === undefined || value === null || value === '') return value === '' ? null : value;
  const problem = checkWebhookUrl(value, allowPrivate);
  if (problem)
    throw new DomainError('VALIDATION', `notify_url must be an absolute http(s) URL the service may call: ${problem}`, {
      field: 'notify_url',
      notify_url: value,
    });
  return value;
}

/** Issues a new API key; the old one keeps working for `graceSeconds`. Audited in the transaction of the change. */
export async function rotateApiKey(
  ctx: AppContext,
  id: string,
  graceSeconds: number,
  record: AuditRecorder,
): Promise<{ api_key: string; previous_valid_until: Date }> {
  const terminal = await getTerminal(ctx, id);
  const apiKey = newApiKey();
  const until = await transaction(ctx.db, async (tx) => {
    const previous = await repo.expireApiKeys(tx, id, graceSeconds);
    await repo.insertApiKey(tx, id, terminal.merchant_id, apiKey.hash, apiKey.prefix);
    await record(tx, 'terminal.rotate_api_key', 'terminal', id, null, { previous_valid_until: previous });
    return previous;
  });
  return { api_key: apiKey.key, previous_valid_until: until };
}

/**
 * A manual balance adjustment by the operator: one balanced posting between the terminal's
 * available account and the system adjustments account. A debit beyond the available balance
 * is refused by the ledger's non-negative constraint, not by a read-then-write check here.
 * `requestId` (an Idempotency-Key's request, src/http/idempotency.ts) is the posting's cause: a
 * retry that took over the key of an attempt whose answer was lost finds that attempt's posting
 * and posts nothing (`repeated`).
 */
export async function adjustBalance(
  ctx: AppContext,
  id: string,
  body: AdjustmentBody,
  record: (tx: Queryable, before: repo.TerminalRow, after: repo.TerminalRow) => Promise<void>,
  requestId?: string,
): Promise<repo.TerminalRow> {
  const terminal = await getTerminal(ctx, id);
  const amount = checkDecimal(body.amount, { field: 'amount', places: USDT_DECIMALS });
  if (typeof amount === 'string') throw new DomainError('VALIDATION', amount);
  if (amount.isZero()) throw new DomainError('VALIDATION', 'amount must not be zero');
  try {
    // The balances are read inside the posting's transaction, where this terminal's accounts are
    // still locked by it: the answer is the balance right after this adjustment, not after
    // whatever else committed in between.
    return await transaction(ctx.db, async (tx) => {
      // A repeat (its key's first attempt posted, and died before answering) moves nothing and is in the audit log already.
      if (requestId && (await hasPosting(tx, 'adjustment', requestId))) return (await repo.findTerminal(tx, id))!;
      const before = (await repo.findTerminal(tx, id))!;
      await post(tx, {
        kind: 'adjustment',
        refId: requestId ?? null,
        merchantId: terminal.merchant_id,
        memo: body.reason,
        entries: [
          { account: { terminalId: id, kind: 'terminal_available' }, amount },
          { account: { kind: 'system_adjustments' }, amount: amount.negated() as Decimal },
        ],
      });
      const after = (await repo.findTerminal(tx, id))!;
      // The audit row commits with the posting: no money moves without its record of who moved it.
      await record(tx, before, after);
      return after;
    });
  } catch (err) {
    if (isInsufficientFunds(err)) {
      const current = await getTerminal(ctx, id);
      throw new DomainError('VALIDATION', 'The adjustment would make the available balance negative', { available: Number(current.balance) });
    }
    throw err;
  }
}

/** A terminal's statement: its postings, newest first, each with the balance of its account after it (read from the ledger). */
export async function terminalStatement(ctx: AppContext, id: string, page: { limit: number; offset: number }) {
  await getTerminal(ctx, id);
  const { rows, total } = await accountStatement(ctx.db, { terminalId: id }, page);
  return {
    entries: rows.map((row) => ({
      id: row.id,
      created_at: row.created_at,
      kind: row.kind,
      account: row.account_kind === 'terminal_available' ? 'available' : 'frozen',
      amount: row.amount,
      balance_after: row.balance_after,
      ref_id: row.ref_id,
      memo: row.memo,
      about: aboutOf(row),
    })),
    total,
    ...page,
  };
}

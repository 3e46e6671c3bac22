import type { AuditRecorder } from '../admin/audit.service.js';
import { findBank } from '../banks/banks.repo.js';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { payoutReserve } from '../ledger/credit.js';
import { isInsufficientFunds, reserve } from '../ledger/holds.js';
import { checkDecimal, USDT_DECIMALS } from '../lib/money.js';
import { isRussianMobile, isUuid, normalizeCard, normalizePhone } from '../lib/validators.js';
import type { MerchantIdentity } from '../merchants/identity.service.js';
import { enqueuePersonMessage } from '../notify/outbox.repo.js';
import type { ProviderPayout } from '../providers/provider.js';
import { terminalRoutes } from '../providers/providers.repo.js';
import type { CallbackOutcome } from '../providers/providers.routes.js';
import { requestPayout, routesForPayout, tryRoutes } from '../providers/routing.js';
import { isUsable, staleRate, toQuote } from '../rates/quote.js';
import { effectiveRates } from '../rates/rates.repo.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { insertRiskHit } from '../risk/hits.repo.js';
import { shownForHit } from '../risk/marks.js';
import { blockHit } from '../risk/rules.js';
import { findTerminal } from '../terminals/terminals.repo.js';
import { checkWebhookUrl } from '../webhooks/sender.js';
import { type ChangeOptions, changePayout, type PayoutEvent, payoutHold, TRANSITIONS } from './lifecycle.js';
import * as repo from './payouts.repo.js';
import type { CreatePayoutBody } from './payouts.schemas.js';

function invalid(message: string, data?: Record<string, unknown>): never {
  throw new DomainError('PAY_002', message, data);
}

/** Validates a payout request (spec "POST /v1/payouts") into the row to store. */
async function validateCreate(ctx: AppContext, identity: Pick<MerchantIdentity, 'terminalNotifyUrl'>, body: CreatePayoutBody) {
  const amount = checkDecimal(body.amount, { field: 'amount', places: 2, min: 0, minExclusive: true, max: '1e12', maxExclusive: true });
  if (typeof amount === 'string') invalid(amount);
  const method = body.method.toLowerCase();
  if (method !== 'card' && method !== 'sbp') invalid(`method must be card or sbp, not ${body.method}`, { method: body.method });
  let requisites: string;
  if (method === 'card') {
    requisites = normalizeCard(body.requisites) ?? invalid('requisites must be a card number of 13–19 digits that passes the Luhn check');
  } else {
    const phone = normalizePhone(body.requisites);
    if (!phone || !isRussianMobile(phone)) invalid('requisites must be a Russian mobile number for sbp, e.g. +79123456789');
    requisites = phone;
  }
  const holder = body.holder_name.trim();
  if (holder === '') invalid('holder_name must not be empty');
  let bank = '';
  if (body.bank !== undefined && body.bank !== '') {
    const entry = await findBank(ctx.db, body.bank);
    if (entry?.kind !== 'bank' || entry.country !== 'RU' || !entry.is_active) {
      invalid(`Unknown bank code ${body.bank}; GET /v1/public/banks lists the codes of Russian banks`, { bank: body.bank });
    }
    bank = entry.code;
  } else if (method === 'sbp') {
    invalid('bank is required for an sbp payout: the fast payment system needs the recipient bank');
  }
  // Without one of its own, the payout's webhooks go to its terminal's address (set by the operator, guarded the same way).
  let notifyUrl: string | null = identity.terminalNotifyUrl;
  if (body.notify_url !== undefined && body.notify_url !== '') {
    const problem = checkWebhookUrl(body.notify_url, ctx.config.webhookAllowPrivate);
    if (problem) invalid(`notify_url must be an absolute http(s) URL the service may call: ${problem}`, { notify_url: body.notify_url });
    notifyUrl = body.notify_url;
  }
  return { amount, method: method as 'card' | 'sbp', requisites, holder, bank, notifyUrl };
}

/**
 * Issue 36: "a payout to a blocked card or phone is refused the same way payouts refuse bad
 * requisites" (PAY_002, nothing said of a block), with the rule's hit for the operator. No payout
 * exists yet, so the hit names the terminal and the masked requisites.
 */
async function refuseBlockedRequisites(
  ctx: AppContext,
  identity: Pick<MerchantIdentity, 'merchantId' | 'terminalId'>,
  input: { method: 'card' | 'sbp'; requisites: string },
): Promise<void> {
  const kind = input.method === 'card' ? 'card' : 'phone';
  const block = await ctx.risk.blockFor(kind, input.requisites, identity.merchantId);
  if (!block) return;
  await insertRiskHit(
    ctx.db,
    blockHit(block, { merchantId: identity.merchantId, terminalId: identity.terminalId, inputs: { requisites: shownForHit(kind, input.requisites) } }),
  );
  invalid('requisites cannot receive a payout; use other requisites');
}

/**
 * Creates a payout and reserves its funds on the API key's terminal in the same transaction
 * (DESIGN.md decision 12); not enough available balance → PAY_002 with data.available.
 */
export async function createPayout(
  ctx: AppContext,
  identity: Pick<MerchantIdentity, 'merchantId' | 'terminalId' | 'terminalTest' | 'terminalNotifyUrl'>,
  body: CreatePayoutBody,
  /** A person's creation (the merchant cabinet) is audited in the payout's transaction. */
  record?: AuditRecorder,
): Promise<repo.PayoutRow> {
  const input = await validateCreate(ctx, identity, body);
  await refuseBlockedRequisites(ctx, identity, input);
  const [row] = await effectiveRates(ctx.db, identity.terminalId, ['RUB']);
  if (!row) throw new DomainError('UNAVAILABLE', 'Payouts are not available: no USDT rate is set for RUB (operator: PUT /admin/v1/rates/RUB)');
  // Payouts price with the sell side's markup where the operator set one; a stale feed refuses them as it refuses payments.
  const quote = toQuote(row);
  if (!isUsable(quote, Date.now())) throw staleRate('RUB', 'Payouts');
  const rate = quote.payoutRate;
  const terminal = await findTerminal(ctx.db, identity.terminalId);
  const { reserve: amountToHold } = payoutReserve(input.amount, rate, terminal!.payout_rate);
  let created: repo.PayoutRow;
  try {
    created = await transaction(ctx.db, async (tx) => {
      const payout = await repo.insertPayout(tx, {
        merchant_id: identity.merchantId,
        terminal_id: identity.terminalId,
        ext_id: body.ext_id,
        amount: input.amount.toFixed(2),
        method: input.method,
        requisites: input.requisites,
        holder_name: input.holder,
        bank: input.bank,
        notify_url: input.notifyUrl,
        rate,
        rate_refresh_id: quote.refreshId,
        payout_rate: terminal!.payout_rate,
        reserve: amountToHold.toFixed(USDT_DECIMALS),
        is_test: identity.terminalTest,
      });
      // A test terminal's payout (issue 33 item 4) freezes nothing: its terminal holds no real money.
      if (!payout.is_test) await reserve(tx, payoutHold(payout));
      await record?.(tx, 'payout.create', 'payout', payout.id, null, { status: payout.status, amount: payout.amount, is_test: payout.is_test });
      return payout;
    });
  } catch (err) {
    if (isInsufficientFunds(err)) {
      const now = await findTerminal(ctx.db, identity.terminalId);
      invalid(`Insufficient balance: the payout needs ${amountToHold.toFixed()} USDT`, {
        available: Number(now!.balance),
        required: Number(amountToHold.toFixed()),
      });
    }
    throw err;
  }
  // A test payout goes to no executor and no provider: it waits for the merchant's cabinet to
  // complete or fail it (actOnTestPayout).
  if (created.is_test) return created;
  // After the reserve committed: a provider is called outside any transaction.
  return routePayout(ctx, created);
}

/**
 * Routes a new payout (funds already reserved here) by the terminal's routes: the executors route
 * leaves it for our executors; a provider route creates it at the provider, and a provider that
 * fails, times out or declines hands over to the next route, within the route budget. When no
 * route takes it, the payout fails, its reserve is released, and the merchant is told.
 */
async function routePayout(ctx: AppContext, payout: repo.PayoutRow): Promise<repo.PayoutRow> {
  const routes = routesForPayout(await terminalRoutes(ctx.db, payout.terminal_id), payout.currency);
  const routed = await tryRoutes(ctx, routes, {
    executors: async () => {
      // Left for our executors: every executor who may take it (the cabinet lists it to each one
      // switched on) is told, with a Take button. The payout is already committed and pending, so
      // the message is the routing's own fact; the recipient's details are shown only once taken.
      await enqueuePersonMessage(
        ctx.db,
        { activeExecutors: true },
        {
          kind: 'payout_available',
          eventKey: `payout:${payout.id}`,
          data: { payout_id: payout.id, amount: payout.amount, currency: payout.currency, method: payout.method, bank: payout.bank || null },
        },
      );
      return payout;
    },
    provider: async (provider, remainingMs) => {
      const request = {
        payoutId: payout.id,
        amount: payout.amount,
        method: payout.method,
        requisites: payout.requisites,
        holderName: payout.holder_name,
        bank: payout.bank || null,
      };
      const answer = await requestPayout(ctx, provider, request, remainingMs);
      return answer && repo.recordProvider(ctx.db, payout.id, answer.providerId, answer.upstreamId);
    },
  });
  if (routed) return routed;
  await transaction(ctx.db, (tx) => changePayout(tx, payout.id, 'fail', { reason: 'no route could take the payout' }));
  throw new DomainError('UNAVAILABLE', 'No route can take this payout right now; its reserve was released. Retry later with a new ext_id', {
    payout_id: payout.id,
  });
}

/** Provider payout statuses (the spec's) and the local event that follows each. */
const PROVIDER_PAYOUT_EVENTS: Record<string, PayoutEvent | undefined> = {
  processing: 'take',
  completed: 'complete',
  failed: 'fail',
  cancelled: 'cancel',
};

/**
 * A provider's callback about a payout it executes (signature and event id already checked by
 * providers/providers.routes.ts): the payout follows the status the provider reports.
 */
export async function applyPayoutCallback(tx: Tx, providerId: string, upstream: ProviderPayout): Promise<CallbackOutcome> {
  const id = await repo.lockProviderPayout(tx, providerId, String(upstream.id));
  if (!id) return { refused: 'NOT_FOUND', reason: `No payout ${upstream.id} of this provider` };
  const event = PROVIDER_PAYOUT_EVENTS[upstream.status];
  const after = event ? await changePayout(tx, id, event, event === 'fail' ? { reason: 'failed at the provider' } : {}) : undefined;
  return { applied: { payout: id, status: after?.status } };
}

export async function getPayout(ctx: AppContext, merchantId: string, id: string): Promise<repo.PayoutRow> {
  const payout = isUuid(id) ? await repo.findMerchantPayout(ctx.db, merchantId, id) : undefined;
  if (!payout) throw new DomainError('PAYOUT_NOT_FOUND', `Payout ${id} not found`);
  return payout;
}

export async function getPayoutByExtId(ctx: AppContext, merchantId: string, extId: string): Promise<repo.PayoutRow> {
  const payout = await repo.findMerchantPayoutByExtId(ctx.db, merchantId, extId);
  if (!payout) throw new DomainError('PAYOUT_NOT_FOUND', `Payout with ext_id ${extId} not found`);
  return payout;
}

/** Runs a payout event and reports a refused guard in the payout's own terms. */
export async function actOnPayout(
  ctx: AppContext,
  id: string,
  event: PayoutEvent,
  extra: ChangeOptions = {},
  audit?: (tx: Tx, before: repo.PayoutRow, after: repo.PayoutRow) => Promise<void>,
): Promise<repo.PayoutRow> {
  const before = isUuid(id) ? await repo.findPayout(ctx.db, id) : undefined;
  if (!before) throw new DomainError('PAYOUT_NOT_FOUND', `Payout ${id} not found`);
  return transaction(ctx.db, async (tx) => {
    const after = await changePayout(tx, id, event, extra);
    if (!after) {
      const current = await repo.findPayout(tx, id);
      const mine = extra.requireExecutor ? ' taken by this executor' : '';
      throw new DomainError('CONFLICT', `Payout is ${current!.status}; ${event} needs a ${TRANSITIONS[event].from.join(' or ')} payout${mine}`, {
        status: current!.status,
      });
    }
    await audit?.(tx, before, after);
    return after;
  });
}

/**
 * The merchant cabinet completes or fails its own test payout (issue 33 item 4), as an executor
 * or the operator would a live one, so that the `payout.*` webhooks can be tried: through
 * changePayout, moving no money (a test payout reserved none). Another merchant's payout is not
 * found; a live one is refused (LIVE_OBJECT). The audit row names the person.
 */
export async function actOnTestPayout(
  ctx: AppContext,
  merchantId: string,
  id: string,
  event: 'complete' | 'fail',
  record: AuditRecorder,
): Promise<repo.PayoutRow> {
  const payout = await getPayout(ctx, merchantId, id);
  if (!payout.is_test) throw new DomainError('LIVE_OBJECT', 'This payout is live: an executor or the operator settles it', { is_test: false });
  return actOnPayout(ctx, payout.id, event, event === 'fail' ? { reason: 'failed in the merchant cabinet (test mode)' } : {}, (tx, before, after) =>
    record(tx, `payout.test_${event}`, 'payout', after.id, { status: before.status }, { status: after.status }),
  );
}

/**
 * The proof the executor sent for one of their own payouts, for download: read whole (at most
 * 10 MB, checked at upload) and typed by its content, as it was accepted.
 */
export async function openOwnProof(
  ctx: AppContext,
  executorId: string,
  id: string,
): Promise<{ payout: repo.PayoutRow; content: Buffer; contentType: string; extension: string }> {
  const payout = isUuid(id) ? await repo.findExecutorPayout(ctx.db, executorId, id) : undefined;
  if (!payout) throw new DomainError('PAYOUT_NOT_FOUND', `Payout ${id} not found`);
  if (!payout.proof_key) throw new DomainError('NOT_FOUND', 'This payout has no proof');
  const chunks: Buffer[] = [];
  for await (const chunk of await ctx.files.get(payout.proof_key)) chunks.push(chunk as Buffer);
  const content = Buffer.concat(chunks);
  const type = await RECEIPT_FILES.accept(content.subarray(0, RECEIPT_FILES.sniffBytes));
  return { payout, content, contentType: type?.contentType ?? 'application/octet-stream', extension: type?.extension ?? 'bin' };
}

import type { AppContext } from '../context.js';
import { pgConstraint, pgErrorCode, PgCode, transaction } from '../db/pool.js';
import { randomToken } from '../lib/crypto.js';
import { money, roundTo } from '../lib/money.js';
import type { PaymentRow } from '../payments/payments.repo.js';
import { findPayment } from '../payments/payments.repo.js';
import { checkCreation, duplicateExtIdError, type NewPaymentBase } from '../payments/payments.service.js';
import { ProviderError } from './provider.js';
import { adapterFor, callbackUrl, inRotation, providerFailed, providerSucceeded } from './providers.service.js';
import type { ProviderRow, TerminalRoute } from './providers.repo.js';

/** Below this much time left in the budget a provider is not called at all. */
const MIN_CALL_MS = 100;

export interface Route {
  /** Undefined: the terminal's own executors (the cascade). */
  provider?: ProviderRow;
}

/**
 * The routes a payment of this currency and method tries, in order: the terminal's routes that
 * apply to it, skipping providers out of rotation; the executors alone when none are set.
 */
export function routesFor(routes: TerminalRoute[], currency: string, method: string): Route[] {
  if (routes.length === 0) return [{}];
  return routes
    .filter((r) => (!r.currencies || r.currencies.includes(currency)) && (!r.methods || r.methods.includes(method)))
    .filter((r) => !r.provider || inRotation(r.provider))
    .map((r) => (r.provider ? { provider: r.provider } : {}));
}

/**
 * The provider route: creates the payment at the provider (as its merchant: our payment id as
 * ext_id, our callback URL and a per-payment token), then records it here with the provider's
 * requisites. Undefined when the provider cannot take it — it declined, failed, timed out, or the
 * budget is spent — so the next route is tried; failures count against its circuit breaker.
 */
export async function createWithProvider(
  ctx: AppContext,
  provider: ProviderRow,
  base: NewPaymentBase,
  options: { country: string | null; bank: string | null },
  deadline: number,
): Promise<PaymentRow | undefined> {
  const remaining = deadline - Date.now();
  if (remaining < MIN_CALL_MS) return undefined;
  // The shared rules first, so a duplicate ext_id or the same-amount limit answers as usual
  // without bothering the provider.
  await transaction(ctx.db, (tx) => checkCreation(ctx, tx, base));

  const { rows: ids } = await ctx.db.query<{ id: string }>('SELECT gen_random_uuid() AS id');
  const paymentId = ids[0]!.id;
  const token = randomToken('', 24);
  let upstream;
  try {
    upstream = await adapterFor(ctx, provider).createPayment(
      {
        extId: paymentId,
        amount: base.amount,
        currency: base.currency,
        method: base.method,
        bank: options.bank ?? undefined,
        country: options.country ?? undefined,
        clientId: base.clientId ?? undefined,
        notifyUrl: callbackUrl(ctx, provider.id),
        notificationToken: token,
      },
      AbortSignal.timeout(Math.min(remaining, ctx.config.providerTimeoutMs)),
    );
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'unavailable') await providerFailed(ctx, provider.id);
    ctx.log.warn({ provider: provider.id, kind: err.kind, code: err.code, reason: err.message }, 'provider did not take the payment; trying the next route');
    return undefined;
  }
  await providerSucceeded(ctx, provider.id);

  const requisites = upstream.requisites ?? ({} as Partial<typeof upstream.requisites>);
  if (!upstream.id || !requisites.type || !requisites.value) {
    ctx.log.warn({ provider: provider.id }, 'provider answered a payment without id or requisites; trying the next route');
    return undefined;
  }
  const payerAmount = requisites.amount_local !== undefined ? roundTo(money(requisites.amount_local), requisites.currency ?? base.currency) : money(base.amount);
  const providerDeadline = upstream.valid_until ? new Date(upstream.valid_until) : undefined;
  try {
    await transaction(ctx.db, async (tx) => {
      await checkCreation(ctx, tx, base);
      await tx.query(
        `INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                               provider_id, provider_payment_id, provider_token, req_type, req_value, req_bank_code, req_holder,
                               req_country, req_currency, payer_amount, cross_border, client_id, notify_url, notification_token,
                               page_token, valid_until)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
                 least(now() + make_interval(secs => $25), coalesce($26, 'infinity'::timestamptz)))`,
        [
          paymentId, base.merchantId, base.terminalId, base.extId, base.amount, base.currency, base.method, base.rate, base.payinRate,
          provider.id, upstream.id, token, requisites.type, requisites.value, requisites.bank_code ?? requisites.bank ?? null,
          requisites.holder ?? '', requisites.country ?? '', requisites.currency ?? base.currency, payerAmount.toFixed(2), base.crossBorder,
          base.clientId, base.notifyUrl, base.notificationToken, randomToken('', 24), base.ttlSeconds, providerDeadline ?? null,
        ],
      );
    });
  } catch (err) {
    if (pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'payments_merchant_ext_id_key') throw duplicateExtIdError(base.extId);
    throw err;
  }
  return findPayment(ctx.db, paymentId);
}

import type { AppContext } from '../context.js';
import { randomToken } from '../lib/crypto.js';
import { type ProviderAdapter, ProviderError } from './provider.js';
import type { ProviderRow, TerminalRoute } from './providers.repo.js';
import { adapterFor, callbackUrl, inRotation, providerFailed, providerSucceeded } from './providers.service.js';

/**
 * Routing: which of a terminal's routes a payment or payout tries, in what order and within what
 * time, and what a provider answered. It records nothing about the payment or payout — the
 * feature that owns the resource does, from the answer.
 */

/** Below this much time left in the budget a provider is not called at all. */
const MIN_CALL_MS = 100;

export interface Route {
  /** Undefined: the terminal's own executors. */
  provider?: ProviderRow;
}

/**
 * The routes a payment of this currency and method tries, in order: the terminal's routes that
 * apply to it, skipping providers out of rotation; the executors alone when none are set.
 */
export function routesForPayment(routes: TerminalRoute[], currency: string, method: string): Route[] {
  if (routes.length === 0) return [{}];
  return inOrder(routes.filter((r) => (!r.currencies || r.currencies.includes(currency)) && (!r.methods || r.methods.includes(method))));
}

/**
 * The routes a payout tries, in order: the terminal's routes whose methods are unset or include
 * PAYOUT (and whose currencies include the payout's), skipping providers out of rotation; the
 * executors alone when no route applies.
 */
export function routesForPayout(routes: TerminalRoute[], currency: string): Route[] {
  const applying = routes.filter((r) => (!r.methods || r.methods.includes('PAYOUT')) && (!r.currencies || r.currencies.includes(currency)));
  if (applying.length === 0) return [{}];
  return inOrder(applying);
}

function inOrder(routes: TerminalRoute[]): Route[] {
  return routes.filter((r) => !r.provider || inRotation(r.provider)).map((r) => (r.provider ? { provider: r.provider } : {}));
}

/** What one route does with the request: undefined when it did not take it (the next route is tried). */
export interface RouteAttempts<T> {
  executors(): Promise<T | undefined>;
  provider(provider: ProviderRow, remainingMs: number): Promise<T | undefined>;
}

/**
 * Tries `routes` in order until one takes the request, within the route budget
 * (KASSIR_ROUTE_BUDGET_MS) counted from now: once less than MIN_CALL_MS is left, provider routes
 * are passed over (the executors' route needs no provider call and is still tried). Undefined
 * when no route took it.
 */
export async function tryRoutes<T>(ctx: AppContext, routes: readonly Route[], attempts: RouteAttempts<T>): Promise<T | undefined> {
  const deadline = Date.now() + ctx.config.routeBudgetMs;
  for (const route of routes) {
    if (!route.provider) {
      const taken = await attempts.executors();
      if (taken !== undefined) return taken;
      continue;
    }
    const remaining = deadline - Date.now();
    if (remaining < MIN_CALL_MS) continue;
    const taken = await attempts.provider(route.provider, remaining);
    if (taken !== undefined) return taken;
  }
  return undefined;
}

/**
 * One call to a provider, bounded by the budget left and the provider timeout: its answer, or
 * undefined when it failed, timed out or declined (a failure counts against its circuit breaker,
 * a success resets it).
 */
async function callProvider<A>(
  ctx: AppContext,
  provider: ProviderRow,
  remainingMs: number,
  what: 'payment' | 'payout',
  call: (adapter: ProviderAdapter, signal: AbortSignal) => Promise<A>,
): Promise<A | undefined> {
  let answer: A;
  try {
    answer = await call(adapterFor(ctx, provider), AbortSignal.timeout(Math.min(remainingMs, ctx.config.providerTimeoutMs)));
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (err.kind === 'unavailable') await providerFailed(ctx, provider.id);
    ctx.log.warn({ provider: provider.id, kind: err.kind, code: err.code, reason: err.message }, `provider did not take the ${what}; trying the next route`);
    return undefined;
  }
  await providerSucceeded(ctx, provider.id);
  return answer;
}

/** A payment to create at a provider, as its merchant: our payment id is its ext_id. */
export interface ProviderPaymentRequest {
  paymentId: string;
  amount: string;
  currency: string;
  method: string;
  bank: string | null;
  country: string | null;
  clientId: string | null;
}

/** What a provider answered to a payment it took. */
export interface ProviderPaymentAnswer {
  providerId: string;
  /** The provider's id for the payment. */
  upstreamId: string;
  /** The token the provider's callbacks about this payment must carry. */
  token: string;
  requisites: {
    type: string;
    value: string;
    bankCode: string | null;
    holder: string;
    country: string;
    currency: string;
    /** What the payer pays in the requisites' currency, when the provider says. */
    amountLocal: number | undefined;
  };
  /** The provider's own deadline for the payment, if it has one. */
  validUntil: Date | undefined;
}

/**
 * Creates the payment at the provider (our callback URL and a per-payment token): its answer, or
 * undefined when the provider did not take it or answered without an id or requisites.
 */
export async function requestPayment(
  ctx: AppContext,
  provider: ProviderRow,
  request: ProviderPaymentRequest,
  remainingMs: number,
): Promise<ProviderPaymentAnswer | undefined> {
  const token = randomToken('', 24);
  const upstream = await callProvider(ctx, provider, remainingMs, 'payment', (adapter, signal) =>
    adapter.createPayment(
      {
        extId: request.paymentId,
        amount: request.amount,
        currency: request.currency,
        method: request.method,
        bank: request.bank ?? undefined,
        country: request.country ?? undefined,
        clientId: request.clientId ?? undefined,
        notifyUrl: callbackUrl(ctx, provider.id),
        notificationToken: token,
      },
      signal,
    ),
  );
  if (!upstream) return undefined;
  const requisites = upstream.requisites ?? ({} as Partial<typeof upstream.requisites>);
  if (!upstream.id || !requisites.type || !requisites.value) {
    ctx.log.warn({ provider: provider.id }, 'provider answered a payment without id or requisites; trying the next route');
    return undefined;
  }
  return {
    providerId: provider.id,
    upstreamId: upstream.id,
    token,
    requisites: {
      type: requisites.type,
      value: requisites.value,
      bankCode: requisites.bank_code ?? requisites.bank ?? null,
      holder: requisites.holder ?? '',
      country: requisites.country ?? '',
      currency: requisites.currency ?? request.currency,
      amountLocal: requisites.amount_local,
    },
    validUntil: upstream.valid_until ? new Date(upstream.valid_until) : undefined,
  };
}

/** A payout to create at a provider, as its merchant: our payout id is its ext_id. */
export interface ProviderPayoutRequest {
  payoutId: string;
  amount: string;
  method: string;
  requisites: string;
  holderName: string;
  bank: string | null;
}

/** What a provider answered to a payout it took. */
export interface ProviderPayoutAnswer {
  providerId: string;
  /** The provider's id for the payout. */
  upstreamId: string;
}

/** Creates the payout at the provider: its answer, or undefined when the provider did not take it. */
export async function requestPayout(
  ctx: AppContext,
  provider: ProviderRow,
  request: ProviderPayoutRequest,
  remainingMs: number,
): Promise<ProviderPayoutAnswer | undefined> {
  const upstream = await callProvider(ctx, provider, remainingMs, 'payout', (adapter, signal) =>
    adapter.createPayout(
      {
        extId: request.payoutId,
        amount: request.amount,
        method: request.method,
        requisites: request.requisites,
        holderName: request.holderName,
        bank: request.bank ?? undefined,
        notifyUrl: callbackUrl(ctx, provider.id),
      },
      signal,
    ),
  );
  return upstream ? { providerId: provider.id, upstreamId: String(upstream.id) } : undefined;
}

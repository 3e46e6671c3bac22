import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isMethod, isOrderCurrency, METHODS, ORDER_CURRENCIES } from '../lib/methods.js';
import { isUuid } from '../lib/validators.js';
import { findTerminal } from '../terminals/terminals.repo.js';
import { kassirProvider } from './kassir/adapter.js';
import type { ProviderAdapter } from './provider.js';
import * as repo from './providers.repo.js';

/** The adapter for a provider row, with its credentials unsealed. */
export function adapterFor(ctx: AppContext, provider: repo.ProviderRow): ProviderAdapter {
  switch (provider.kind) {
    case 'kassir':
      return kassirProvider({
        baseUrl: provider.base_url,
        apiKey: ctx.box.open(provider.api_key_enc),
        secretKey: ctx.box.open(provider.secret_key_enc),
        timeoutMs: ctx.config.providerTimeoutMs,
      });
  }
}

/** Where a provider sends its callbacks for us. */
export function callbackUrl(ctx: AppContext, providerId: string): string {
  return `${ctx.config.publicBaseUrl}/callbacks/providers/${providerId}`;
}

/** A provider as the operator API shows it (and the audit log keeps it): never its keys. */
export function providerView(ctx: AppContext, provider: repo.ProviderRow) {
  return {
    id: provider.id,
    name: provider.name,
    kind: provider.kind,
    base_url: provider.base_url,
    is_active: provider.is_active,
    callback_url: callbackUrl(ctx, provider.id),
    breaker: { failures: provider.failures, open_until: provider.open_until },
    created_at: provider.created_at,
  };
}

/** In rotation: active, and not taken out by its circuit breaker. */
export function inRotation(provider: repo.ProviderRow): boolean {
  return provider.is_active && (provider.open_until === null || provider.open_until.getTime() <= Date.now());
}

export async function providerFailed(ctx: AppContext, id: string): Promise<void> {
  await repo.recordFailure(ctx.db, id, ctx.config.providerBreakerFailures, ctx.config.providerCooldownSeconds);
}

export async function providerSucceeded(ctx: AppContext, id: string): Promise<void> {
  await repo.recordSuccess(ctx.db, id);
}

function checkBaseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new DomainError('VALIDATION', 'base_url must be an absolute http(s) URL, e.g. https://provider.example');
  }
  return value.replace(/\/+$/, '');
}

/** Adds a provider, audited in the same transaction (never its keys). */
export async function createProvider(
  ctx: AppContext,
  body: { name: string; kind: string; base_url: string; api_key: string; secret_key: string },
  record: AuditRecorder,
): Promise<repo.ProviderRow> {
  if (body.kind !== 'kassir') throw new DomainError('VALIDATION', 'kind must be "kassir" (a provider speaking the Kassir merchant API)');
  const fields = {
    name: body.name,
    kind: 'kassir' as const,
    baseUrl: checkBaseUrl(body.base_url),
    apiKeyEnc: ctx.box.seal(body.api_key),
    secretKeyEnc: ctx.box.seal(body.secret_key),
  };
  return transaction(ctx.db, async (tx) => {
    const provider = await repo.insertProvider(tx, fields);
    await record(tx, 'provider.create', 'provider', provider.id, null, { name: provider.name, kind: provider.kind, base_url: provider.base_url });
    return provider;
  });
}

/** Changes a provider; `before` is read under its row's lock and audited with the change (never its keys). */
export async function updateProvider(
  ctx: AppContext,
  id: string,
  body: { name?: string; base_url?: string; api_key?: string; secret_key?: string; is_active?: boolean },
  record: AuditRecorder,
): Promise<repo.ProviderRow> {
  return transaction(ctx.db, async (tx) => {
    const before = isUuid(id) ? await repo.findProvider(tx, id, true) : undefined;
    if (!before) throw new DomainError('NOT_FOUND', `Provider ${id} not found`);
    const after = (await repo.updateProvider(tx, id, {
      name: body.name,
      baseUrl: body.base_url === undefined ? undefined : checkBaseUrl(body.base_url),
      apiKeyEnc: body.api_key === undefined ? undefined : ctx.box.seal(body.api_key),
      secretKeyEnc: body.secret_key === undefined ? undefined : ctx.box.seal(body.secret_key),
      isActive: body.is_active,
    }))!;
    await record(tx, 'provider.update', 'provider', id, providerView(ctx, before), providerView(ctx, after));
    return after;
  });
}

export interface RouteInput {
  executors?: boolean;
  provider_id?: string;
  currencies?: string[];
  methods?: string[];
}

/**
 * Replaces a terminal's routes (DESIGN.md: `[{"executors": true} | {"provider_id": "…"}, …]` in the
 * order tried), audited in the same transaction; the routes before are read under the terminal's
 * lock, so two replacements one after the other each record what they replaced. Answers the routes.
 */
export async function setRoutes(ctx: AppContext, terminalId: string, routes: RouteInput[], record: AuditRecorder): Promise<ReturnType<typeof routeView>[]> {
  const rows: Omit<repo.RouteRow, 'position'>[] = [];
  for (const [index, route] of routes.entries()) {
    const isExecutors = route.executors === true;
    if (isExecutors === (route.provider_id !== undefined)) {
      throw new DomainError('VALIDATION', `route ${index + 1} must be either {"executors": true} or {"provider_id": "…"}`);
    }
    if (route.provider_id !== undefined) {
      if (!isUuid(route.provider_id) || !(await repo.findProvider(ctx.db, route.provider_id))) {
        throw new DomainError('VALIDATION', `route ${index + 1}: provider ${route.provider_id} not found`);
      }
    }
    const currencies = route.currencies?.map((c) => c.toUpperCase()) ?? null;
    const unknownCurrency = currencies?.find((c) => !isOrderCurrency(c));
    if (unknownCurrency) {
      throw new DomainError('VALIDATION', `route ${index + 1}: currency ${unknownCurrency} is not an order currency; use ${ORDER_CURRENCIES.join(', ')}`);
    }
    const methods = route.methods?.map((m) => m.toUpperCase()) ?? null;
    const unknownMethod = methods?.find((m) => m !== 'PAYOUT' && !isMethod(m));
    if (unknownMethod) {
      throw new DomainError('VALIDATION', `route ${index + 1}: method ${unknownMethod} is not one of ${[...METHODS, 'PAYOUT'].join(', ')}`);
    }
    rows.push({ provider_id: route.provider_id ?? null, currencies, methods });
  }
  return transaction(ctx.db, async (tx) => {
    if (!(await findTerminal(tx, terminalId, true))) throw new DomainError('NOT_FOUND', `Terminal ${terminalId} not found`);
    const before = (await repo.terminalRoutes(tx, terminalId)).map(routeView);
    await repo.replaceRoutes(tx, terminalId, rows);
    const after = (await repo.terminalRoutes(tx, terminalId)).map(routeView);
    await record(tx, 'terminal.set_routes', 'terminal', terminalId, before, after);
    return after;
  });
}

/** A stored route as the operator API shows it. */
export function routeView(route: repo.RouteRow) {
  return {
    ...(route.provider_id ? { provider_id: route.provider_id } : { executors: true }),
    ...(route.currencies ? { currencies: route.currencies } : {}),
    ...(route.methods ? { methods: route.methods } : {}),
  };
}

import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { PayoutRow } from '../payouts/payouts.repo.js';
import { changePayout } from '../payouts/payouts.service.js';
import { ProviderError } from './provider.js';
import { terminalRoutes } from './providers.repo.js';
import { adapterFor, callbackUrl, inRotation, providerFailed, providerSucceeded } from './providers.service.js';

/**
 * Routes a new payout (funds already reserved here) by the terminal's routes: the executors route
 * leaves it for our executors; a provider route creates it at the provider, and a provider that
 * fails, times out or declines hands over to the next route, within the route budget. A route
 * applies to payouts when its methods are unset or include PAYOUT. When no route takes it, the
 * payout fails, its reserve is released, and the merchant is told.
 */
export async function routePayout(ctx: AppContext, payout: PayoutRow): Promise<PayoutRow> {
  const routes = (await terminalRoutes(ctx.db, payout.terminal_id)).filter(
    (r) => (!r.methods || r.methods.includes('PAYOUT')) && (!r.currencies || r.currencies.includes(payout.currency)),
  );
  if (routes.length === 0) return payout;
  const deadline = Date.now() + ctx.config.routeBudgetMs;
  for (const route of routes) {
    if (!route.provider) return payout;
    if (!inRotation(route.provider)) continue;
    const remaining = deadline - Date.now();
    if (remaining < 100) break;
    try {
      const upstream = await adapterFor(ctx, route.provider).createPayout(
        {
          extId: payout.id,
          amount: payout.amount,
          method: payout.method,
          requisites: payout.requisites,
          holderName: payout.holder_name,
          bank: payout.bank || undefined,
          notifyUrl: callbackUrl(ctx, route.provider.id),
        },
        AbortSignal.timeout(Math.min(remaining, ctx.config.providerTimeoutMs)),
      );
      await providerSucceeded(ctx, route.provider.id);
      const { rows } = await ctx.db.query<PayoutRow>(
        'UPDATE payouts SET provider_id = $2, provider_payout_id = $3, updated_at = now() WHERE id = $1 RETURNING *',
        [payout.id, route.provider.id, String(upstream.id)],
      );
      return rows[0]!;
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      if (err.kind === 'unavailable') await providerFailed(ctx, route.provider.id);
      ctx.log.warn({ payout: payout.id, provider: route.provider.id, kind: err.kind, reason: err.message }, 'provider did not take the payout; trying the next route');
    }
  }
  await transaction(ctx.db, (tx) => changePayout(ctx, tx, payout.id, 'fail', { reason: 'no route could take the payout' }));
  throw new DomainError('UNAVAILABLE', 'No route can take this payout right now; its reserve was released. Retry later with a new ext_id', { payout_id: payout.id });
}

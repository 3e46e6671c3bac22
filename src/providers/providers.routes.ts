import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import { type ProviderCallback, ProviderError, type ProviderPayment, type ProviderPayout } from './provider.js';
import { findProvider, recordCallback } from './providers.repo.js';
import { adapterFor } from './providers.service.js';

/** What the feature owning a callback's resource made of it: applied (what changed, for the log), or refused. */
export type CallbackOutcome = { applied: Record<string, unknown> } | { refused: 'AUTH_002' | 'NOT_FOUND'; reason: string };

/**
 * The features that record what providers report, each in the callback's transaction: payments
 * (with the notification token the callback carried) and payouts.
 */
export interface CallbackHandlers {
  payment(tx: Tx, providerId: string, payment: ProviderPayment, notificationToken: string | undefined): Promise<CallbackOutcome>;
  payout(tx: Tx, providerId: string, payout: ProviderPayout): Promise<CallbackOutcome>;
}

/**
 * `POST /callbacks/providers/{providerId}`: a provider's webhook about a payment or payout it
 * executes for us. Refused (and logged): unknown providers and resources, bad signatures, a
 * notification token that is not the one we gave for that payment. A replayed event (same event
 * id) is acknowledged without effect, so the provider stops re-sending it.
 */
export async function providerCallbackRoutes(app: RouteApp, ctx: AppContext, handlers: CallbackHandlers): Promise<void> {
  // A callback completes or fails money already on its way: served under a load that sheds creates
  // (src/http/overload.ts). The signature covers the raw body: keep the bytes, parse after checking.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post(
    '/callbacks/providers/:providerId',
    { config: { priority: 'high' }, schema: { hide: true, params: Type.Object({ providerId: Type.String() }) } },
    async (request) => {
      const refuse = (key: 'AUTH_002' | 'NOT_FOUND', reason: string): never => {
        request.log.warn({ provider: request.params.providerId, reason }, 'provider callback refused');
        throw new DomainError(key, reason);
      };
      const provider = isUuid(request.params.providerId) ? await findProvider(ctx.db, request.params.providerId) : undefined;
      if (!provider) return refuse('NOT_FOUND', 'Unknown provider');
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      let callback: ProviderCallback;
      try {
        callback = adapterFor(ctx, provider).parseCallback(request.headers, body);
      } catch (err) {
        if (err instanceof ProviderError) refuse('AUTH_002', err.message);
        throw err;
      }

      return transaction(ctx.db, async (tx) => {
        const resourceId = (callback.payment ?? callback.payout)?.id ?? '';
        if (!(await recordCallback(tx, { providerId: provider.id, eventId: callback.eventId, resourceId, event: callback.event }))) {
          request.log.warn({ provider: provider.id, event_id: callback.eventId }, 'replayed provider callback ignored');
          return { ok: true, duplicate: true };
        }
        let outcome: CallbackOutcome;
        if (callback.resourceType === 'payment' && callback.payment) {
          outcome = await handlers.payment(tx, provider.id, callback.payment, callback.notificationToken);
        } else if (callback.payout) {
          outcome = await handlers.payout(tx, provider.id, callback.payout);
        } else {
          return refuse('NOT_FOUND', 'The callback names no payment or payout');
        }
        if ('applied' in outcome) request.log.info({ provider: provider.id, event: callback.event, ...outcome.applied }, 'provider callback applied');
        if ('refused' in outcome) refuse(outcome.refused, outcome.reason);
        return { ok: true, duplicate: false };
      });
    },
  );
}

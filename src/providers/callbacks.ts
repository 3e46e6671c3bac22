import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { lockProviderPayment } from '../payments/payments.repo.js';
import { isUuid } from '../lib/validators.js';
import { changePayout } from '../payouts/payouts.service.js';
import type { PayoutEvent } from '../payouts/payouts.repo.js';
import { applyProviderStatus } from './apply.js';
import { ProviderError } from './provider.js';
import { findProvider } from './providers.repo.js';
import { adapterFor } from './providers.service.js';

/** Provider payout statuses (the spec's) and the local event that follows each. */
const PAYOUT_EVENTS: Record<string, PayoutEvent | undefined> = {
  processing: 'take',
  completed: 'complete',
  failed: 'fail',
  cancelled: 'cancel',
};

/**
 * `POST /callbacks/providers/{providerId}`: a provider's webhook about a payment or payout it
 * executes for us. Refused (and logged): unknown providers and resources, bad signatures, a
 * notification token that is not the one we gave for that payment. A replayed event (same event
 * id) is acknowledged without effect, so the provider stops re-sending it.
 */
export async function providerCallbackRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // A callback completes or fails money already on its way: served under a load that sheds creates
  // (src/http/overload.ts). The signature covers the raw body: keep the bytes, parse after checking.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post<{ Params: { providerId: string } }>('/callbacks/providers/:providerId', { config: { priority: 'high' }, schema: { hide: true } }, async (request: FastifyRequest<{ Params: { providerId: string } }>) => {
    const refuse = (key: 'AUTH_002' | 'NOT_FOUND', reason: string): never => {
      request.log.warn({ provider: request.params.providerId, reason }, 'provider callback refused');
      throw new DomainError(key, reason);
    };
    const provider = isUuid(request.params.providerId) ? await findProvider(ctx.db, request.params.providerId) : undefined;
    if (!provider) refuse('NOT_FOUND', 'Unknown provider');
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    let callback;
    try {
      callback = adapterFor(ctx, provider!).parseCallback(request.headers, body);
    } catch (err) {
      if (err instanceof ProviderError) refuse('AUTH_002', err.message);
      throw err;
    }

    return transaction(ctx.db, async (tx) => {
      const fresh = await tx.query(
        `INSERT INTO provider_callbacks (provider_id, event_id, resource_id, event) VALUES ($1, $2, $3, $4)
         ON CONFLICT (provider_id, event_id) DO NOTHING RETURNING 1`,
        [provider!.id, callback.eventId, (callback.payment ?? callback.payout)?.id ?? '', callback.event],
      );
      if (!fresh.rowCount) {
        request.log.warn({ provider: provider!.id, event_id: callback.eventId }, 'replayed provider callback ignored');
        return { ok: true, duplicate: true };
      }
      if (callback.resourceType === 'payment' && callback.payment) {
        const payment = await lockProviderPayment(tx, provider!.id, String(callback.payment.id));
        if (!payment) refuse('NOT_FOUND', `No payment ${callback.payment.id} of this provider`);
        if (!callback.notificationToken || !payment!.provider_token || !constantTimeEqual(callback.notificationToken, payment!.provider_token)) {
          refuse('AUTH_002', 'The notification token does not match the one given for this payment');
        }
        const change = await applyProviderStatus(ctx, tx, payment!, callback.payment);
        request.log.info({ provider: provider!.id, payment: payment!.id, upstream: callback.payment.status, change }, 'provider callback applied');
        return { ok: true, duplicate: false };
      }
      if (callback.payout) {
        const { rows } = await tx.query<{ id: string }>(
          'SELECT id FROM payouts WHERE provider_id = $1 AND provider_payout_id = $2 FOR UPDATE',
          [provider!.id, String(callback.payout.id)],
        );
        if (!rows[0]) refuse('NOT_FOUND', `No payout ${callback.payout.id} of this provider`);
        const event = PAYOUT_EVENTS[callback.payout.status];
        if (event) await changePayout(ctx, tx, rows[0]!.id, event, event === 'fail' ? { reason: 'failed at the provider' } : {});
        return { ok: true, duplicate: false };
      }
      return refuse('NOT_FOUND', 'The callback names no payment or payout');
    });
  });
}

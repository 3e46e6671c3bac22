import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { PaymentTimeline, TIMELINE_DESCRIPTION } from '../payments/payments.admin.schemas.js';
import { paymentTimeline } from './payments.timeline.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });

/**
 * Operator API: a payment's timeline. A view that reads many features (payments, disputes, incoming
 * money, receipts, ledger, webhooks, audit), so it lives here above them, not inside payments/.
 */
export async function paymentTimelineAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/payments/:id/timeline',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Everything that happened to a payment, oldest first',
        description: TIMELINE_DESCRIPTION,
        params: IdParams,
        response: { 200: PaymentTimeline },
        errors: { PAY_006: 'No payment with this id' },
      },
    },
    async (request) => paymentTimeline(ctx, request.params.id),
  );
}

import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { transaction } from '../db/pool.js';
import { parseListQuery } from '../lib/pagination.js';
import { AdminGetWebhookAnswer, AdminListWebhooksAnswer, AdminResendWebhookAnswer } from './webhooks.admin.answers.js';
import { getWebhookEvent, listWebhookEvents, resendWebhookEvent } from './webhooks.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The webhook delivery log: events with their attempts (status code, latency), and re-sending. */
export async function webhookAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/webhooks',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListWebhooksAnswer },
        tags,
        summary: 'The webhook delivery log, newest first, by resource and status',
        querystring: Type.Object({
          resource_id: Type.Optional(Type.String()),
          status: Type.Optional(
            Type.String({
              description:
                'pending, delivered or failed; failing: pending after a failed attempt (retried for 24 h before it is failed); attention: failing or failed',
            }),
          ),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { resource_id: resourceId, status } = request.query;
      return { webhooks: await listWebhookEvents(ctx, { resourceId, status, limit, offset }), limit, offset };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetWebhookAnswer },
        tags,
        summary: 'One delivery: the request sent and each attempt with its answer',
        params: IdParams,
      },
    },
    async (request) => getWebhookEvent(ctx, request.params.id),
  );

  /** Sends a delivered or failed event again, now (same event id, so the merchant can deduplicate). */
  app.post(
    '/webhooks/:id/resend',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 202: AdminResendWebhookAnswer },
        tags,
        summary: 'Send a delivery again now, delivered or failed (same event id, so the merchant can deduplicate)',
        params: IdParams,
      },
    },
    async (request, reply) => {
      const event = await transaction(ctx.db, async (tx) => {
        const row = await resendWebhookEvent(tx, request.params.id);
        await audit(tx, request, 'webhook.resend', 'webhook_event', row.id, { status: row.status }, { status: 'pending' });
        return row;
      });
      return reply.status(202).send({ id: event.id, status: 'pending' });
    },
  );
}

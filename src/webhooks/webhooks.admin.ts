import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { audit } from '../admin/audit.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { scheduleDispatch } from './outbox.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The webhook delivery log: events with their attempts (status code, latency), and re-sending. */
export async function webhookAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get('/webhooks', { schema: { tags, querystring: Type.Object({ resource_id: Type.Optional(Type.String()), status: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }) } }, async (request) => {
    const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
    const { resource_id: resourceId, status } = request.query;
    if (resourceId !== undefined && !/^[0-9a-f-]{36}$/i.test(resourceId)) throw new DomainError('VALIDATION', 'resource_id must be a UUID');
    if (status !== undefined && !['pending', 'delivered', 'failed'].includes(status)) {
      throw new DomainError('VALIDATION', 'status must be one of pending, delivered, failed');
    }
    const { rows } = await ctx.db.query(
      `SELECT id, resource_type, resource_id, event, url, status, attempts, next_attempt_at, last_error, created_at, delivered_at
         FROM webhook_events WHERE ($1::uuid IS NULL OR resource_id = $1) AND ($2::text IS NULL OR status = $2)
        ORDER BY seq DESC LIMIT $3 OFFSET $4`,
      [resourceId ?? null, status ?? null, limit, offset],
    );
    return { webhooks: rows, limit, offset };
  });

  app.get('/webhooks/:id', { schema: { tags, params: IdParams } }, async (request) => {
    const { rows } = await ctx.db.query(
      `SELECT id, merchant_id, resource_type, resource_id, event, payload, url, status, attempts, next_attempt_at, last_error, created_at, delivered_at
         FROM webhook_events WHERE id = $1`,
      [request.params.id],
    );
    if (!rows[0]) throw new DomainError('NOT_FOUND', `Webhook event ${request.params.id} not found`);
    const attempts = await ctx.db.query(
      'SELECT attempt, started_at, status_code, latency_ms, error, response_snippet FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt',
      [request.params.id],
    );
    return { ...rows[0], attempts: attempts.rows };
  });

  /** Sends a delivered or failed event again, now (same event id, so the merchant can deduplicate). */
  app.post('/webhooks/:id/resend', { schema: { tags, params: IdParams } }, async (request, reply) => {
    const event = await transaction(ctx.db, async (tx) => {
      const { rows } = await tx.query<{ id: string; resource_id: string; status: string }>(
        `UPDATE webhook_events e SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
           FROM (SELECT id, status FROM webhook_events WHERE id = $1 FOR UPDATE) old
          WHERE e.id = old.id RETURNING e.id, e.resource_id, old.status`,
        [request.params.id],
      );
      const row = rows[0];
      if (!row) throw new DomainError('NOT_FOUND', `Webhook event ${request.params.id} not found`);
      await scheduleDispatch(tx);
      await audit(tx, request, 'webhook.resend', 'webhook_event', row.id, { status: row.status }, { status: 'pending' });
      return row;
    });
    return reply.status(202).send({ id: event.id, status: 'pending' });
  });
}

import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { audit } from '../admin/audit.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { toNumber } from '../lib/money.js';
import { changePayment } from '../payments/lifecycle.js';
import { findPayment } from '../payments/payments.repo.js';
import { isUuid } from '../lib/validators.js';
import * as repo from './notifications.repo.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const LinkBody = Type.Object({ payment_id: Type.String({ format: 'uuid' }) });
const ResolveBody = Type.Object({ note: Type.String({ minLength: 1, maxLength: 1000 }) });

function view(row: repo.NotificationRow) {
  return { ...row, amount: toNumber(row.amount) };
}

/** Unmatched and late notifications, for the operator to link to a payment or set aside. */
export async function notificationAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get('/notifications', { schema: { tags, querystring: Type.Object({ status: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }) } }, async (request) => {
    const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
    const status = request.query.status;
    if (status !== undefined && !['matched', 'unmatched', 'late', 'resolved'].includes(status)) {
      throw new DomainError('VALIDATION', 'status must be one of matched, unmatched, late, resolved');
    }
    return { notifications: (await repo.listNotifications(ctx.db, { status, limit, offset })).map(view), limit, offset };
  });

  app.get('/notifications/:id', { schema: { tags, params: IdParams } }, async (request) => {
    const row = await repo.findNotification(ctx.db, request.params.id);
    if (!row) throw new DomainError('NOT_FOUND', `Notification ${request.params.id} not found`);
    return view(row);
  });

  /**
   * Links an unmatched or late notification to a PENDING payment on the same requisite, which
   * completes it exactly as a matching notification would have.
   */
  app.post('/notifications/:id/link', { schema: { tags, params: IdParams, body: LinkBody } }, async (request) => {
    const { payment_id: paymentId } = request.body;
    const notification = await repo.findNotification(ctx.db, request.params.id);
    if (!notification) throw new DomainError('NOT_FOUND', `Notification ${request.params.id} not found`);
    const payment = isUuid(paymentId) ? await findPayment(ctx.db, paymentId) : undefined;
    if (!payment) throw new DomainError('PAY_006', `Payment ${paymentId} not found`);
    if (payment.requisite_id !== notification.requisite_id) {
      throw new DomainError('VALIDATION', 'The payment was made to another requisite than the notification reports');
    }
    const linked = await transaction(ctx.db, async (tx) => {
      // The payment is completed (and so locked) before the notification is marked matched: marked
      // first, a racing link or notification for the same payment collided with it on
      // notifications_one_match_per_payment, or deadlocked, and answered 500.
      const completed = (await changePayment(tx, ctx.config, paymentId, 'complete')) !== undefined;
      const updated = completed
        ? await repo.resolveNotification(tx, notification.id, { status: 'matched', paymentId, note: 'linked by the operator' })
        : undefined;
      if (!updated) {
        const current = (await repo.findNotification(tx, notification.id)) ?? notification;
        if (completed || (current.status !== 'unmatched' && current.status !== 'late')) {
          throw new DomainError('CONFLICT', `Notification is ${current.status}; only unmatched or late ones can be linked`);
        }
        const now = (await findPayment(tx, paymentId)) ?? payment;
        throw new DomainError('PAY_008', `Payment is ${now.status}; only a PENDING payment can be completed by a notification`, { status: now.status });
      }
      await audit(tx, request, 'notification.link', 'notification', notification.id, { status: notification.status }, { status: 'matched', payment_id: paymentId });
      return updated;
    });
    return view(linked);
  });

  app.post('/notifications/:id/resolve', { schema: { tags, params: IdParams, body: ResolveBody } }, async (request) => {
    const { note } = request.body;
    const resolved = await transaction(ctx.db, async (tx) => {
      const before = await repo.findNotification(tx, request.params.id);
      if (!before) throw new DomainError('NOT_FOUND', `Notification ${request.params.id} not found`);
      const updated = await repo.resolveNotification(tx, before.id, { status: 'resolved', paymentId: null, note });
      if (!updated) throw new DomainError('CONFLICT', `Notification is ${before.status}; only unmatched or late ones can be resolved`);
      await audit(tx, request, 'notification.resolve', 'notification', before.id, { status: before.status }, { status: 'resolved', note });
      return updated;
    });
    return view(resolved);
  });
}

import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import {
  AdminGetNotificationAnswer,
  AdminLinkNotificationAnswer,
  AdminListNotificationsAnswer,
  AdminResolveNotificationAnswer,
} from './notifications.admin.answers.js';
import { getNotification, linkNotification, listNotifications, resolveNotification, toNotification } from './notifications.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const LinkBody = Type.Object({ payment_id: Type.String({ format: 'uuid' }) });
const ResolveBody = Type.Object({ note: Type.String({ minLength: 1, maxLength: 1000 }) });

/** Unmatched and late notifications, for the operator to link to a payment or set aside. */
export async function notificationAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/notifications',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListNotificationsAnswer },
        tags,
        summary: 'Transfer notifications executors reported, newest first, by status (matched, unmatched, late, resolved)',
        querystring: Type.Object({ status: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const rows = await listNotifications(ctx, { status: request.query.status, limit, offset });
      return { notifications: rows.map(toNotification), limit, offset };
    },
  );

  app.get(
    '/notifications/:id',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminGetNotificationAnswer }, tags, summary: 'Get a notification', params: IdParams },
    },
    async (request) => toNotification(await getNotification(ctx, request.params.id)),
  );

  /** Completes the PENDING payment an unmatched or late notification was for. */
  app.post(
    '/notifications/:id/link',
    {
      config: { access: 'support', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminLinkNotificationAnswer },
        tags,
        summary: 'Link an unmatched or late notification to the PENDING payment it was for: the payment completes',
        description:
          'Moves money as a matching notification would have: the payment becomes COMPLETED and the merchant’s terminal is credited. The payment must have been made to the notification’s requisite.',
        params: IdParams,
        body: LinkBody,
        errors: {
          NOT_FOUND: 'No notification with this id',
          PAY_006: 'No payment with this `payment_id`',
          PAY_008: 'The payment is not PENDING (`data.status` is its status)',
          VALIDATION: 'Invalid parameters: the message names the field; or the payment was made to another requisite than the notification reports',
          CONFLICT: 'The notification is neither unmatched nor late: it was linked or set aside already',
        },
      },
    },
    async (request) => {
      const { payment_id: paymentId } = request.body;
      const linked = await linkNotification(ctx, request.params.id, paymentId, (tx, before) =>
        audit(tx, request, 'notification.link', 'notification', before.id, { status: before.status }, { status: 'matched', payment_id: paymentId }),
      );
      return toNotification(linked);
    },
  );

  app.post(
    '/notifications/:id/resolve',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminResolveNotificationAnswer },
        tags,
        summary: 'Set an unmatched or late notification aside, with a note',
        params: IdParams,
        body: ResolveBody,
        errors: { CONFLICT: 'The notification is neither unmatched nor late: it was linked or set aside already' },
      },
    },
    async (request) => {
      const { note } = request.body;
      const resolved = await resolveNotification(ctx, request.params.id, note, (tx, before) =>
        audit(tx, request, 'notification.resolve', 'notification', before.id, { status: before.status }, { status: 'resolved', note }),
      );
      return toNotification(resolved);
    },
  );
}

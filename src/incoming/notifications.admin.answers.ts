import { Type } from 'typebox';

/**
 * What the routes of notifications.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A bank notification an executor sent, as the operator sees it. */
const AdminNotification = Type.Object({
  id: Type.String({ format: 'uuid' }),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  requisite_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  amount: Type.Number(),
  text: Type.Union([Type.String(), Type.Null()]),
  received_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  parsed_bank: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  candidate_payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  resolved_note: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** GET /admin/v1/notifications */
export const AdminListNotificationsAnswer = Type.Object({
  notifications: Type.Array(AdminNotification),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/notifications/{id} */
export const AdminGetNotificationAnswer = AdminNotification;

/** POST /admin/v1/notifications/{id}/link */
export const AdminLinkNotificationAnswer = AdminNotification;

/** POST /admin/v1/notifications/{id}/resolve */
export const AdminResolveNotificationAnswer = AdminNotification;

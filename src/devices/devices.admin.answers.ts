import { Type } from 'typebox';

/**
 * What the routes of devices.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** POST /admin/v1/executors/{id}/devices */
export const AdminCreateExecutorDeviceAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_seen_at: Type.Unknown(),
  battery: Type.Unknown(),
  app_version: Type.Unknown(),
  token: Type.String(),
  signing_secret: Type.String(),
});

/** GET /admin/v1/executors/{id}/devices */
export const AdminListExecutorDevicesAnswer = Type.Object({
  devices: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      last_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      battery: Type.Union([Type.Number(), Type.Null()]),
      app_version: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

/** PUT /admin/v1/executors/{id}/device-silence */
export const AdminSetExecutorDeviceSilenceAnswer = Type.Object({
  device_silence_minutes: Type.Union([Type.Number(), Type.Null()]),
});

/** GET /admin/v1/device-messages */
export const AdminListDeviceMessagesAnswer = Type.Object({
  messages: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      device_id: Type.String({ format: 'uuid' }),
      executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      text: Type.String(),
      sender: Type.Union([Type.String(), Type.Null()]),
      received_at: Type.Unknown(),
      status: Type.String(),
      reason: Type.Union([Type.String(), Type.Null()]),
      amount: Type.Union([Type.String(), Type.Null()]),
      currency: Type.Union([Type.String(), Type.Null()]),
      digits: Type.Union([Type.String(), Type.Null()]),
      requisite_id: Type.Unknown(),
      notification_id: Type.Unknown(),
      payment_id: Type.Unknown(),
      resolved_note: Type.Unknown(),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /admin/v1/device-messages/{id}/link */
export const AdminLinkDeviceMessageAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  device_id: Type.String({ format: 'uuid' }),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  text: Type.String(),
  sender: Type.Union([Type.String(), Type.Null()]),
  received_at: Type.Unknown(),
  status: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  amount: Type.Union([Type.String(), Type.Null()]),
  currency: Type.Union([Type.String(), Type.Null()]),
  digits: Type.Unknown(),
  requisite_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  notification_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  resolved_note: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** POST /admin/v1/device-messages/{id}/set-aside */
export const AdminSetAsideDeviceMessageAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  device_id: Type.String({ format: 'uuid' }),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  text: Type.String(),
  sender: Type.Union([Type.String(), Type.Null()]),
  received_at: Type.Unknown(),
  status: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  amount: Type.Unknown(),
  currency: Type.Unknown(),
  digits: Type.Unknown(),
  requisite_id: Type.Unknown(),
  notification_id: Type.Unknown(),
  payment_id: Type.Unknown(),
  resolved_note: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

import { Type } from 'typebox';

/**
 * What the routes of devices.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** An executor's phone, as the operator's and the executor's device routes answer it. */
export const DeviceAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_seen_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  battery: Type.Union([Type.Number(), Type.Null()]),
  app_version: Type.Union([Type.String(), Type.Null()]),
});

/** A device just registered: its credentials, shown once. */
export const NewDeviceAnswer = Type.Object({
  ...DeviceAnswer.properties,
  token: Type.String(),
  signing_secret: Type.String(),
  forwarder_urls: Type.Object(
    { smsforwarder: Type.String(), 'sms-gateway': Type.String(), 'incoming-sms': Type.String() },
    { description: "each forwarder app's webhook address for this phone (docs/devices.md), on PUBLIC_BASE_URL; it holds the token" },
  ),
});

/** The devices of an executor. */
export const DeviceListAnswer = Type.Object({
  devices: Type.Array(DeviceAnswer),
});

/** How long the executor's phones may stay silent. */
export const DeviceSilenceAnswer = Type.Object({
  device_silence_minutes: Type.Union([Type.Number(), Type.Null()]),
});

/** A bank message a device sent, as the operator's and the executor's message routes answer it. */
export const DeviceMessageAnswer = Type.Object({
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
  requisite_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  notification_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  resolved_note: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** A page of bank messages. */
export const DeviceMessageListAnswer = Type.Object({
  messages: Type.Array(DeviceMessageAnswer),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /admin/v1/executors/{id}/devices */
export const AdminCreateExecutorDeviceAnswer = NewDeviceAnswer;

/** GET /admin/v1/executors/{id}/devices */
export const AdminListExecutorDevicesAnswer = DeviceListAnswer;

/** PUT /admin/v1/executors/{id}/device-silence */
export const AdminSetExecutorDeviceSilenceAnswer = DeviceSilenceAnswer;

/** GET /admin/v1/device-messages */
export const AdminListDeviceMessagesAnswer = DeviceMessageListAnswer;

/** POST /admin/v1/device-messages/{id}/link */
export const AdminLinkDeviceMessageAnswer = DeviceMessageAnswer;

/** POST /admin/v1/device-messages/{id}/set-aside */
export const AdminSetAsideDeviceMessageAnswer = DeviceMessageAnswer;

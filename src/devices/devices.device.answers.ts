import { Type } from 'typebox';

/**
 * What the routes of devices.device.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

/** POST /device/v1/messages */
export const DeviceSendMessageAnswer = Type.Object({
  matched: Type.Boolean(),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  notification_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  message_id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  reason: Type.Union([Type.String(), Type.Null()]),
  duplicate: Type.Boolean(),
});

import { Type } from 'typebox';

/**
 * What the routes of devices.hooks.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /device/v1/hooks/{token}/{format} */
export const DeviceReceiveForwardedMessageAnswer = Type.Object({
  matched: Type.Boolean(),
  payment_id: Type.String({ format: 'uuid' }),
  notification_id: Type.String({ format: 'uuid' }),
  message_id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  reason: Type.Unknown(),
  duplicate: Type.Boolean(),
});

import { Type } from 'typebox';
import { DeviceSendMessageAnswer } from './devices.device.answers.js';

/**
 * What the routes of devices.hooks.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/**
 * POST /device/v1/hooks/{token}/{format}: a bank message is received as POST /device/v1/messages
 * receives it; an app's ping (`{alive: true}`) records the phone as heard from; any other event
 * of the app is acknowledged and ignored (`ignored` says why).
 */
export const DeviceReceiveForwardedMessageAnswer = Type.Union([
  DeviceSendMessageAnswer,
  Type.Object({ alive: Type.Literal(true) }),
  Type.Object({ ignored: Type.String({ description: 'why the event is not a bank message' }) }),
]);

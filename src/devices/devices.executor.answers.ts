import { Type } from 'typebox';
import { DeviceListAnswer, DeviceMessageAnswer, DeviceMessageListAnswer, DeviceSilenceAnswer, NewDeviceAnswer, NoContent } from './devices.admin.answers.js';

/**
 * What the routes of devices.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

export { NoContent };

/** POST /executor/v1/devices */
export const ExecutorCreateDeviceAnswer = NewDeviceAnswer;

/** GET /executor/v1/devices */
export const ExecutorListDevicesAnswer = DeviceListAnswer;

/** PUT /executor/v1/device-silence */
export const ExecutorSetDeviceSilenceAnswer = DeviceSilenceAnswer;

/** GET /executor/v1/payments/pending */
export const ExecutorListPendingPaymentsAnswer = Type.Object({
  payments: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      requisite_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      amount: Type.String(),
      currency: Type.String(),
      valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
      payer_confirmed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'when the payer pressed "I paid" (or the merchant confirmed for them): check your bank app; null when not yet',
      }),
    }),
  ),
});

/** GET /executor/v1/device-messages/{id}/payments */
export const ExecutorListMessagePaymentsAnswer = Type.Object({
  payments: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      requisite_id: Type.String({ format: 'uuid' }),
      amount: Type.String(),
      currency: Type.String(),
      valid_until: Type.String({ format: 'date-time' }),
      created_at: Type.String({ format: 'date-time' }),
      payer_confirmed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      named_in_text: Type.Boolean({ description: 'its card or phone ends in the digits the message names' }),
    }),
  ),
});

/** GET /executor/v1/payments/received-today */
export const ExecutorReceivedTodayAnswer = Type.Object({
  received: Type.Array(
    Type.Object({
      currency: Type.String(),
      amount: Type.String({ description: 'the completed payments’ amounts summed, as a decimal string' }),
      count: Type.Integer(),
    }),
  ),
});

/** GET /executor/v1/device-messages */
export const ExecutorListDeviceMessagesAnswer = DeviceMessageListAnswer;

/** POST /executor/v1/device-messages/{id}/link */
export const ExecutorLinkDeviceMessageAnswer = DeviceMessageAnswer;

/** POST /executor/v1/device-messages/{id}/set-aside */
export const ExecutorSetAsideDeviceMessageAnswer = DeviceMessageAnswer;

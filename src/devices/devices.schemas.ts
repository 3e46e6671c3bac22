import { type Static, Type } from 'typebox';
import { DomainError } from '../errors.js';
import type { PaymentRef } from '../incoming/messages.service.js';

/** The body of linking a message that waits for a person to its payment (the executor: by the payment's id). */
export const LinkMessageBody = Type.Object({ payment_id: Type.String({ format: 'uuid' }) });

/** The operator links by the payment's id, or by the merchant's order id (`ext_id`), with the merchant or terminal when two merchants use it. */
export const AdminLinkMessageBody = Type.Object({
  payment_id: Type.Optional(Type.String({ format: 'uuid', description: "the payment's id; or give ext_id" })),
  ext_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "the merchant's order id, instead of payment_id" })),
  merchant_id: Type.Optional(Type.String({ format: 'uuid', description: 'with ext_id: the merchant whose order it is' })),
  terminal_id: Type.Optional(Type.String({ format: 'uuid', description: 'with ext_id: the terminal the payment was created on' })),
});

/** Which payment an operator's link names: exactly one of payment_id and ext_id. */
export function adminLinkRef(body: Static<typeof AdminLinkMessageBody>): PaymentRef {
  if (body.payment_id !== undefined && body.ext_id === undefined) return body.payment_id;
  if (body.ext_id !== undefined && body.payment_id === undefined) {
    return { ext_id: body.ext_id, merchant_id: body.merchant_id, terminal_id: body.terminal_id };
  }
  throw new DomainError('VALIDATION', 'Give payment_id or ext_id (one of them)', { field: 'payment_id' });
}

/**
 * What linking a message can answer besides authentication, `notFound` saying whose messages are
 * looked in; `own` when the caller is the executor, to whom another executor's payment is not there.
 */
export function linkMessageErrors(notFound: string, own = false) {
  return {
    NOT_FOUND: notFound,
    PAY_006: own ? 'No payment with this `payment_id` on one of your requisites' : 'No payment with this `payment_id` or `ext_id`',
    PAY_008: 'The payment is not PENDING (`data.status` is its status)',
    VALIDATION: `Invalid parameters: the message names the field${
      own ? '' : ' (an ext_id that several merchants use: `data.payments` lists them; give merchant_id or terminal_id, or payment_id)'
    }; or the payment is ${
      own ? '' : 'not on a requisite of the executor whose phone sent the message, '
    }on another requisite than the message names, or for another amount`,
    CONFLICT:
      'The message does not wait for a person (only unmatched, ambiguous or unreadable ones are linked), or its notification was linked or set aside already',
  };
}

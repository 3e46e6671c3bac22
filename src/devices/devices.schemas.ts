import { Type } from 'typebox';

/** The body of linking a message that waits for a person to its payment (operator and executor alike). */
export const LinkMessageBody = Type.Object({ payment_id: Type.String({ format: 'uuid' }) });

/**
 * What linking a message can answer besides authentication, `notFound` saying whose messages are
 * looked in; `own` when the caller is the executor, to whom another executor's payment is not there.
 */
export function linkMessageErrors(notFound: string, own = false) {
  return {
    NOT_FOUND: notFound,
    PAY_006: own ? 'No payment with this `payment_id` on one of your requisites' : 'No payment with this `payment_id`',
    PAY_008: 'The payment is not PENDING (`data.status` is its status)',
    VALIDATION: `Invalid parameters: the message names the field; or the payment is ${
      own ? '' : 'not on a requisite of the executor whose phone sent the message, '
    }on another requisite than the message names, or for another amount`,
    CONFLICT:
      'The message does not wait for a person (only unmatched, ambiguous or unreadable ones are linked), or its notification was linked or set aside already',
  };
}

import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import { changePayment, TRANSITIONS } from './lifecycle.js';
import { lockPayment, type PaymentRow } from './payments.repo.js';

/**
 * What the merchant cabinet does to a test payment on a click (issue 33 item 4, Stripe's test
 * mode): what a payer's transfer or its timeout would do to a live one, so that the merchant's
 * webhooks and integration can be tried end to end. Each is an event of the one lifecycle
 * (lifecycle.ts): `complete` as a matched bank notification completes, `expire` as the sweep
 * cancels. A live payment is refused (LIVE_OBJECT): on a live terminal only money decides.
 */
export const TEST_PAYMENT_ACTIONS = {
  complete: { event: 'complete', options: {} },
  expire: { event: 'expire', options: { reason: 'expired' } },
} as const;

export type TestPaymentAction = keyof typeof TEST_PAYMENT_ACTIONS;

/**
 * Locks the merchant's own payment for a test action: another merchant's is not found (PAY_006),
 * a live one refused (LIVE_OBJECT).
 */
export async function lockOwnTestPayment(tx: Parameters<typeof lockPayment>[0], merchantId: string, id: string): Promise<PaymentRow> {
  const payment = isUuid(id) ? await lockPayment(tx, merchantId, id) : undefined;
  if (!payment) throw new DomainError('PAY_006', `Payment ${id} not found`);
  if (!payment.is_test) {
    throw new DomainError('LIVE_OBJECT', 'This payment is live: only a test terminal’s payments can be completed, expired or decided from the cabinet', {
      is_test: false,
    });
  }
  return payment;
}

/**
 * Applies a test action to one of the merchant's test payments, with its audit row (the person)
 * in the same transaction; a payment not in a status the action applies from is CONFLICT with
 * `data.status`. Returns the payment's status after it.
 */
export async function actOnTestPayment(
  ctx: AppContext,
  merchantId: string,
  paymentId: string,
  action: TestPaymentAction,
  record: AuditRecorder,
): Promise<{ id: string; status: string }> {
  const { event, options } = TEST_PAYMENT_ACTIONS[action];
  return transaction(ctx.db, async (tx) => {
    const payment = await lockOwnTestPayment(tx, merchantId, paymentId);
    const change = await changePayment(tx, ctx, payment.id, event, options);
    if (!change) {
      throw new DomainError('CONFLICT', `A ${payment.status} payment cannot be ${action}d; it must be ${TRANSITIONS[event].from.join(' or ')}`, {
        status: payment.status,
      });
    }
    await record(tx, `payment.test_${action}`, 'payment', payment.id, { status: change.from }, { status: change.to });
    return { id: payment.id, status: change.to };
  });
}

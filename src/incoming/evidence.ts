import type { Tx } from '../db/pool.js';
import { flagPayerName, minuteOf } from '../payments/evidence.js';
import { findPayment } from '../payments/payments.repo.js';
import { insertRiskHit } from '../risk/hits.repo.js';
import { firstPaymentWithReference, lockReference, type NotificationRow } from './notifications.repo.js';

/**
 * The evidence checks of a bank message that completed a payment (issue 36 item 4): the bank's
 * reference already named by a message that completed another payment (one transfer reported
 * twice), and a payer's name that is not the one the merchant sent. Each flags the payment for a
 * person in the transaction that matched it; neither decides (the payment stays completed).
 */
export async function checkMessageEvidence(tx: Tx, notification: NotificationRow): Promise<void> {
  if (!notification.payment_id || (!notification.reference && !notification.payer_name)) return;
  const payment = (await findPayment(tx, notification.payment_id))!;
  if (notification.reference) {
    // One after the other: of two messages naming one reference at once, the second sees the first.
    await lockReference(tx, notification.reference);
    const first = await firstPaymentWithReference(tx, notification.reference, payment.id);
    if (first) {
      await insertRiskHit(tx, {
        rule: 'reference_reused',
        action: 'flagged',
        merchantId: payment.merchant_id,
        terminalId: payment.terminal_id,
        paymentId: payment.id,
        inputs: {
          reference: notification.reference,
          notification_id: notification.id,
          first_payment_id: first.payment_id,
          first_notification_id: first.id,
          first_at: first.created_at.toISOString(),
        },
        figure: `bank reference ${notification.reference} already used for payment ${first.payment_id} (${minuteOf(first.created_at)})`,
      });
    }
  }
  await flagPayerName(tx, payment, notification.payer_name, notification.id);
}

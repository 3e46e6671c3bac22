import type { Config } from '../config.js';
import type { Tx } from '../db/pool.js';
import { enqueueWebhooks } from '../webhooks/outbox.js';
import { findPayments } from './payments.repo.js';
import { toPayment } from './payments.schemas.js';

/**
 * The outbox side of payment status changes: called in the transaction that changed the
 * statuses, it writes `payment.<status>` with each payment as GET returns it (DESIGN.md
 * decision 9) for the payments that have a notify_url.
 */
export async function paymentsChanged(tx: Tx, config: Config, paymentIds: string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  const payments = await findPayments(tx, paymentIds, { withNotifyUrl: true });
  await enqueueWebhooks(
    tx,
    payments.map((payment) => ({
      merchantId: payment.merchant_id,
      resourceType: 'payment' as const,
      resourceId: payment.id,
      event: `payment.${payment.status.toLowerCase()}`,
      payload: toPayment(payment, config.paymentPageUrl),
      url: payment.notify_url,
      notificationToken: payment.notification_token,
    })),
  );
}

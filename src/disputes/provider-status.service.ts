import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { type Tx, transaction } from '../db/pool.js';
import { constantTimeEqual } from '../lib/crypto.js';
import { checkDecimal } from '../lib/money.js';
import { type ChangeOptions, changePayment, type PaymentEvent } from '../payments/lifecycle.js';
import { findStaleProviderPayments, lockPayment, lockProviderPayment, type PaymentRow, touchPayment } from '../payments/payments.repo.js';
import type { ProviderPayment } from '../providers/provider.js';
import { findProvider } from '../providers/providers.repo.js';
import type { CallbackOutcome } from '../providers/providers.routes.js';
import { adapterFor } from '../providers/providers.service.js';
import { closeDispute, insertDispute } from './disputes.repo.js';

/**
 * Payments a provider executes, kept in step with it: its callbacks and, when one is missed,
 * polling bring each payment to the status the provider reports, through changePayment.
 */

export const POLL_TASK = 'providers_poll';

/**
 * A provider's callback about a payment it executes (the route in providers/providers.routes.ts has
 * verified the signature and the event id): refused when the payment is not this provider's or
 * the notification token is not the one given for it.
 */
export async function applyPaymentCallback(
  ctx: AppContext,
  tx: Tx,
  providerId: string,
  upstream: ProviderPayment,
  notificationToken: string | undefined,
): Promise<CallbackOutcome> {
  const payment = await lockProviderPayment(tx, providerId, String(upstream.id));
  if (!payment) return { refused: 'NOT_FOUND', reason: `No payment ${upstream.id} of this provider` };
  if (!notificationToken || !payment.provider_token || !constantTimeEqual(notificationToken, payment.provider_token)) {
    return { refused: 'AUTH_002', reason: 'The notification token does not match the one given for this payment' };
  }
  const change = await applyProviderStatus(ctx, tx, payment, upstream);
  return { applied: { payment: payment.id, change } };
}

/**
 * A missed callback is not a lost payment: open provider-executed payments that have not changed
 * for a poll interval are read back from their provider and brought up to date.
 */
export function pollTask(ctx: AppContext): Task {
  return async () => {
    const rows = await findStaleProviderPayments(ctx.db, ctx.config.providerPollSeconds);
    for (const row of rows) {
      const provider = await findProvider(ctx.db, row.provider_id);
      if (!provider?.is_active) continue;
      let upstream: ProviderPayment;
      try {
        upstream = await adapterFor(ctx, provider).getPayment(row.provider_payment_id);
      } catch (err) {
        ctx.log.warn({ payment: row.id, provider: row.provider_id, error: err instanceof Error ? err.message : String(err) }, 'provider status poll failed');
        continue;
      }
      await transaction(ctx.db, async (tx) => {
        const payment = await lockPayment(tx, null, row.id);
        if (!payment) return;
        const change = await applyProviderStatus(ctx, tx, payment, upstream);
        // Touched even when unchanged, so the next poll looks at other payments first.
        if (!change) await touchPayment(tx, row.id);
        else ctx.log.info({ payment: row.id, change }, 'provider status recovered by polling');
      });
    }
  };
}

/**
 * Brings a provider-executed payment (locked by the caller) to the status its provider reports,
 * through the same state machine as every other path. Returns what changed, or undefined when
 * nothing did — callbacks and polls may repeat a status, and applying it twice is a no-op.
 */
async function applyProviderStatus(ctx: AppContext, tx: Tx, payment: PaymentRow, upstream: ProviderPayment): Promise<string | undefined> {
  const local = payment.status;
  const changed = async (event: PaymentEvent, options: ChangeOptions = {}) =>
    (await changePayment(tx, ctx, payment.id, event, options)) ? `${local} → ${upstream.status}` : undefined;
  switch (upstream.status) {
    case 'PROCESSING':
      return local === 'PENDING' ? changed('providerProcessing') : undefined;
    case 'COMPLETED':
    case 'COMPLETED_APPEAL': {
      const received = receivedAmount(upstream, payment);
      if (local === 'PENDING' || local === 'PROCESSING') {
        return (await changePayment(tx, ctx, payment.id, 'complete', { receivedAmount: received })) ? `${local} → COMPLETED` : undefined;
      }
      if (local === 'CANCELLED' || local === 'CANCELLED_APPEAL') {
        // Money the provider says it received for a payment that ended here: only a dispute can
        // credit it now, so the operator must see it.
        ctx.log.warn(
          { payment: payment.id, provider: payment.provider_id, upstream: upstream.status },
          'provider completed a payment that is cancelled here; open a dispute to credit it',
        );
        return undefined;
      }
      if (local === 'DISPUTE') {
        const to = upstream.status === 'COMPLETED' && received === payment.amount ? 'COMPLETED' : 'COMPLETED_APPEAL';
        if (!(await changePayment(tx, ctx, payment.id, 'approveDispute', { to, receivedAmount: received }))) return undefined;
        await closeDispute(tx, payment.id, { status: 'approved', decidedAmount: received, decidedBy: 'provider' });
        return `DISPUTE → ${to}`;
      }
      return undefined;
    }
    case 'CANCELLED':
      if (local === 'PENDING' || local === 'PROCESSING') return changed('providerCancel', { reason: 'provider_cancelled' });
      if (local === 'DISPUTE') {
        const result = await changed('rejectDispute', { reason: 'dispute_rejected' });
        if (result) await closeDispute(tx, payment.id, { status: 'rejected', decidedBy: 'provider' });
        return result;
      }
      return undefined;
    case 'CANCELLED_APPEAL':
      if (local !== 'DISPUTE') return undefined;
      {
        const result = await changed('cancelDispute');
        if (result) await closeDispute(tx, payment.id, { status: 'cancelled', decidedBy: 'provider' });
        return result;
      }
    case 'DISPUTE':
      if (local !== 'CANCELLED' && local !== 'CANCELLED_APPEAL') return undefined;
      {
        const result = await changed('openDispute');
        if (result)
          await insertDispute(tx, {
            paymentId: payment.id,
            merchantId: payment.merchant_id,
            amount: null,
            comment: 'opened at the provider',
            receiptId: null,
            // A provider's payment has no executor here: no stage, no deadline (the provider decides).
            executorId: null,
            terminalId: payment.terminal_id,
            answerSeconds: ctx.config.disputes.answerSeconds,
            timezone: ctx.config.disputes.timezone,
          });
        return result;
      }
    default:
      return undefined;
  }
}

/** The amount the provider says was received: its received_amount when it sends one, else the order amount. */
function receivedAmount(upstream: ProviderPayment & { received_amount?: unknown }, payment: PaymentRow): string {
  if (upstream.received_amount !== undefined) {
    const checked = checkDecimal(upstream.received_amount, { field: 'received_amount', places: 2, min: 0, minExclusive: true });
    if (typeof checked !== 'string') return checked.toFixed(2);
  }
  return payment.amount;
}

import type { AppContext } from '../context.js';
import type { Tx } from '../db/pool.js';
import { closeDispute, insertDispute } from '../disputes/disputes.repo.js';
import { checkDecimal } from '../lib/money.js';
import { changePayment, type ChangeOptions, type PaymentEvent } from '../payments/lifecycle.js';
import type { PaymentRow } from '../payments/payments.repo.js';
import type { ProviderPayment } from './provider.js';

/**
 * Brings a provider-executed payment (locked by the caller) to the status its provider reports,
 * through the same state machine as every other path. Returns what changed, or undefined when
 * nothing did — callbacks and polls may repeat a status, and applying it twice is a no-op.
 */
export async function applyProviderStatus(ctx: AppContext, tx: Tx, payment: PaymentRow, upstream: ProviderPayment): Promise<string | undefined> {
  const local = payment.status;
  const changed = async (event: PaymentEvent, options: ChangeOptions = {}) =>
    (await changePayment(tx, ctx.config, payment.id, event, options)) ? `${local} → ${upstream.status}` : undefined;
  switch (upstream.status) {
    case 'PROCESSING':
      return local === 'PENDING' ? changed('providerProcessing') : undefined;
    case 'COMPLETED':
    case 'COMPLETED_APPEAL': {
      const received = receivedAmount(upstream, payment);
      if (local === 'PENDING' || local === 'PROCESSING') {
        return (await changePayment(tx, ctx.config, payment.id, 'complete', { receivedAmount: received })) ? `${local} → COMPLETED` : undefined;
      }
      if (local === 'CANCELLED' || local === 'CANCELLED_APPEAL') {
        // Money the provider says it received for a payment that ended here: only a dispute can
        // credit it now, so the operator must see it.
        ctx.log.warn({ payment: payment.id, provider: payment.provider_id, upstream: upstream.status }, 'provider completed a payment that is cancelled here; open a dispute to credit it');
        return undefined;
      }
      if (local === 'DISPUTE') {
        const to = upstream.status === 'COMPLETED' && received === payment.amount ? 'COMPLETED' : 'COMPLETED_APPEAL';
        if (!(await changePayment(tx, ctx.config, payment.id, 'approveDispute', { to, receivedAmount: received }))) return undefined;
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
        if (result) await insertDispute(tx, { paymentId: payment.id, merchantId: payment.merchant_id, amount: null, comment: 'opened at the provider', receiptId: null });
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

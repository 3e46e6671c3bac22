import type { Config } from '../config.js';
import { prepared, type Tx } from '../db/pool.js';
import { creditForPayin } from '../ledger/credit.js';
import { post, type Posting } from '../ledger/ledger.repo.js';
import { paymentsChanged } from './events.js';
import { transition, type PaymentEvent, type PaymentStatus } from './state.js';

/**
 * Completes a payment inside the caller's transaction: the guarded status change, the webhook
 * event and the pay-in credit to the terminal (DESIGN.md decision 11), all or nothing. Returns
 * false when the payment was not in a status the event completes from (someone else won).
 * The ledger's unique (kind, ref_id) index makes a second credit of one payment impossible.
 */
export async function completePayment(
  tx: Tx,
  config: Config,
  paymentId: string,
  event: Extract<PaymentEvent, 'complete' | 'approveDispute'> = 'complete',
  options: { to?: PaymentStatus; receivedAmount?: string } = {},
): Promise<boolean> {
  const changed = await transition(tx, paymentId, event, options);
  if (!changed) return false;
  const { rows } = await tx.query<{ received_amount: string; rate: string; payin_rate: string; merchant_id: string; terminal_id: string }>(
    prepared('SELECT received_amount, rate, payin_rate, merchant_id, terminal_id FROM payments WHERE id = $1', [paymentId]),
  );
  const payment = rows[0]!;
  const credit = creditForPayin(payment.received_amount, payment.rate, payment.payin_rate);
  const entries: Posting['entries'] = [{ account: { kind: 'system_incoming' }, amount: credit.gross.negated() }];
  // A tiny amount with a fee near 100 % leaves a net below half a micro-USDT, rounded to 0; ledger
  // entries are never 0 (CHECK), so the terminal then gets no entry and the fee takes the gross.
  if (!credit.net.isZero()) entries.push({ account: { terminalId: payment.terminal_id, kind: 'terminal_available' }, amount: credit.net });
  if (!credit.fee.isZero()) entries.push({ account: { kind: 'system_fee_revenue' }, amount: credit.fee });
  await paymentsChanged(tx, config, [paymentId]);
  // Every completion on the terminal credits its one balance row: added at COMMIT, the row is
  // locked for the commit only, not through the rest of the caller's work (migration 012).
  await post(tx, { kind: 'payin', refId: paymentId, merchantId: payment.merchant_id, memo: null, entries, creditsAtCommit: true });
  return true;
}

import { prepared, type Queryable } from '../db/pool.js';

export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_APPEAL', 'CANCELLED', 'CANCELLED_APPEAL', 'DISPUTE'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * The payment state machine: every status change, from any path (merchant, executor, operator,
 * jobs), is one of these events, and is applied only from the listed statuses (spec "Payment
 * transitions"; DESIGN.md decisions 6 and 7).
 */
export const TRANSITIONS = {
  /** "PENDING — timeout — CANCELLED". */
  expire: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "PENDING — manual cancellation — CANCELLED". */
  cancel: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "PENDING — notification or provider callback, transfer verified — COMPLETED". */
  complete: { from: ['PENDING', 'PROCESSING'], to: ['COMPLETED'] },
  /** DESIGN.md decision 6: "A provider may report PROCESSING; nothing else sets it." */
  providerProcessing: { from: ['PENDING'], to: ['PROCESSING'] },
  /** A provider cancelled a payment it executes (its own timeout or manual cancellation). */
  providerCancel: { from: ['PENDING', 'PROCESSING'], to: ['CANCELLED'] },
  /** "PENDING — verification after confirm, transfer not found — CANCELLED". */
  verificationFailed: { from: ['PENDING'], to: ['CANCELLED'] },
  /** "CANCELLED / CANCELLED_APPEAL — POST …/dispute — DISPUTE". */
  openDispute: { from: ['CANCELLED', 'CANCELLED_APPEAL'], to: ['DISPUTE'] },
  /** "DISPUTE — POST …/dispute/cancel — CANCELLED_APPEAL". */
  cancelDispute: { from: ['DISPUTE'], to: ['CANCELLED_APPEAL'] },
  /** "DISPUTE — dispute approved — COMPLETED" (COMPLETED_APPEAL for another amount, decision 7). */
  approveDispute: { from: ['DISPUTE'], to: ['COMPLETED', 'COMPLETED_APPEAL'] },
  /** "DISPUTE — dispute rejected — CANCELLED". */
  rejectDispute: { from: ['DISPUTE'], to: ['CANCELLED'] },
} as const satisfies Record<string, { from: readonly PaymentStatus[]; to: readonly PaymentStatus[] }>;

export type PaymentEvent = keyof typeof TRANSITIONS;

export interface TransitionResult {
  id: string;
  merchant_id: string;
  terminal_id: string;
  from: PaymentStatus;
  to: PaymentStatus;
}

/**
 * Applies `event` to one payment, guarded in SQL on the current status so that two racing paths
 * cannot both win: returns the change, or undefined when the payment was not in a `from` status
 * (the caller reports that in its own terms).
 */
export async function transition(
  db: Queryable,
  paymentId: string,
  event: PaymentEvent,
  options: { to?: PaymentStatus; reason?: string; receivedAmount?: string } = {},
): Promise<TransitionResult | undefined> {
  const rule = TRANSITIONS[event];
  const to = options.to ?? rule.to[0];
  if (!(rule.to as readonly string[]).includes(to)) throw new Error(`event ${event} cannot lead to ${to}`);
  const { rows } = await db.query<TransitionResult>(
    prepared(
      `UPDATE payments p SET status = $3, cancel_reason = coalesce($4, p.cancel_reason), updated_at = now(),
              completed_at = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN now() ELSE p.completed_at END,
              received_amount = CASE WHEN $3 IN ('COMPLETED', 'COMPLETED_APPEAL') THEN coalesce($5, p.amount) ELSE p.received_amount END
         FROM (SELECT id, status FROM payments WHERE id = $1 FOR UPDATE) old
        WHERE p.id = old.id AND old.status = ANY($2::text[])
        RETURNING p.id, p.merchant_id, p.terminal_id, old.status AS "from", p.status AS "to"`,
      [paymentId, rule.from, to, options.reason ?? null, options.receivedAmount ?? null],
    ),
  );
  return rows[0];
}

/**
 * Cancels up to `limit` PENDING payments whose deadline has passed, in the caller's transaction:
 * `valid_until` ("PENDING — timeout — CANCELLED"), or for a confirmed payment the end of its
 * verification (`verify_until`: "PENDING — verification after confirm, transfer not found —
 * CANCELLED"). Rows another instance is already expiring are skipped, so any number of instances
 * may sweep at once; each payment is cancelled exactly once by the status guard.
 */
export async function expireDue(db: Queryable, limit: number): Promise<TransitionResult[]> {
  const { rows } = await db.query<TransitionResult>(
    `UPDATE payments p SET status = 'CANCELLED', updated_at = now(),
            cancel_reason = CASE WHEN p.verify_until IS NULL THEN 'expired' ELSE 'transfer_not_found' END
       FROM (SELECT id FROM payments WHERE status = 'PENDING' AND coalesce(verify_until, valid_until) <= now()
                -- A provider-executed payment is ended by its provider (callback or poll); it is
                -- cancelled here only if the provider stays silent an hour past the deadline.
                AND (provider_id IS NULL OR coalesce(verify_until, valid_until) <= now() - interval '1 hour')
              ORDER BY coalesce(verify_until, valid_until) LIMIT $1 FOR UPDATE SKIP LOCKED) due
      WHERE p.id = due.id AND p.status = 'PENDING'
      RETURNING p.id, p.merchant_id, p.terminal_id, 'PENDING' AS "from", p.status AS "to"`,
    [limit],
  );
  return rows;
}

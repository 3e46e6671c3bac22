import { PgCode, pgConstraint, pgErrorCode, prepared, type Queryable, type Tx } from '../db/pool.js';

export interface NotificationRow {
  id: string;
  executor_id: string;
  requisite_id: string;
  amount: string;
  text: string | null;
  received_at: Date | null;
  parsed_bank: string | null;
  status: 'matched' | 'unmatched' | 'late' | 'resolved';
  payment_id: string | null;
  candidate_payment_id: string | null;
  resolved_note: string | null;
  created_at: Date;
  /** The bank's reference for the transfer and the payer's name, when the text names them (migration 049). */
  reference: string | null;
  payer_name: string | null;
}

const COLUMNS = `id, executor_id, requisite_id, amount, text, received_at, parsed_bank, status, payment_id,
  candidate_payment_id, resolved_note, created_at, reference, payer_name`;

/** True when an insert failed because a notification with the same dedupe key is already stored. */
export function isDuplicateNotification(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'notifications_dedupe_key_key';
}

export async function findByDedupeKey(db: Queryable, key: Buffer): Promise<NotificationRow | undefined> {
  const { rows } = await db.query<NotificationRow>(prepared(`SELECT ${COLUMNS} FROM notifications WHERE dedupe_key = $1`, [key]));
  return rows[0];
}

/**
 * The payment a notification that found no PENDING payment probably belongs to: one on the same
 * requisite and amount, created before the transfer was received, that expired at most
 * `windowSeconds` before it, or after it (received in time, reported only after the expiry).
 */
export async function findRecentlyExpired(db: Queryable, requisiteId: string, amount: string, at: Date, windowSeconds: number): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM payments
      WHERE requisite_id = $1 AND payer_amount = $2 AND status = 'CANCELLED' AND cancel_reason IN ('expired', 'transfer_not_found')
        AND coalesce(verify_until, valid_until) >= $3::timestamptz - make_interval(secs => $4) AND created_at <= $3::timestamptz
      ORDER BY coalesce(verify_until, valid_until) DESC LIMIT 1`,
    [requisiteId, amount, at, windowSeconds],
  );
  return rows[0]?.id;
}

export async function insertNotification(
  tx: Queryable,
  n: Omit<NotificationRow, 'id' | 'created_at' | 'resolved_note' | 'reference' | 'payer_name'> & {
    dedupe_key: Buffer | null;
    reference?: string | null;
    payer_name?: string | null;
  },
): Promise<NotificationRow> {
  const { rows } = await tx.query<NotificationRow>(
    prepared(
      `INSERT INTO notifications (executor_id, requisite_id, amount, text, received_at, parsed_bank, status, payment_id, candidate_payment_id, dedupe_key,
                                  reference, payer_name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${COLUMNS}`,
      [
        n.executor_id,
        n.requisite_id,
        n.amount,
        n.text,
        n.received_at,
        n.parsed_bank,
        n.status,
        n.payment_id,
        n.candidate_payment_id,
        n.dedupe_key,
        n.reference ?? null,
        n.payer_name ?? null,
      ],
    ),
  );
  return rows[0]!;
}

export async function listNotifications(db: Queryable, filter: { status?: string; limit: number; offset: number }): Promise<NotificationRow[]> {
  const { rows } = await db.query<NotificationRow>(
    `SELECT ${COLUMNS} FROM notifications WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [filter.status ?? null, filter.limit, filter.offset],
  );
  return rows;
}

export async function findNotification(db: Queryable, id: string): Promise<NotificationRow | undefined> {
  const { rows } = await db.query<NotificationRow>(`SELECT ${COLUMNS} FROM notifications WHERE id = $1`, [id]);
  return rows[0];
}

/** Marks an unmatched or late notification as handled by the operator (guarded on its status). */
export async function resolveNotification(
  tx: Queryable,
  id: string,
  change: { status: 'matched' | 'resolved'; paymentId: string | null; note: string | null },
): Promise<NotificationRow | undefined> {
  const { rows } = await tx.query<NotificationRow>(
    `UPDATE notifications SET status = $2, payment_id = coalesce($3, payment_id), resolved_note = $4
      WHERE id = $1 AND status IN ('unmatched', 'late') RETURNING ${COLUMNS}`,
    [id, change.status, change.paymentId, change.note],
  );
  return rows[0];
}

/** A notification on a payment's requisite for its amount, named with that payment. */
export interface PaymentNotificationRow {
  payment: string;
  id: string;
  amount: string;
  status: NotificationRow['status'];
  text: string | null;
  received_at: Date | null;
  created_at: Date;
}

/**
 * The notifications on each payment's requisite for its amount since it was created, matched or
 * not, oldest first: the executor's side of a dispute.
 */
export async function listNotificationsAround(db: Queryable, paymentIds: string[]): Promise<PaymentNotificationRow[]> {
  const { rows } = await db.query<PaymentNotificationRow>(
    `SELECT p.id AS payment, n.id, n.amount::text, n.status, n.text, n.received_at, n.created_at
       FROM payments p JOIN notifications n ON n.requisite_id = p.requisite_id AND n.amount = p.payer_amount AND n.created_at >= p.created_at
      WHERE p.id = ANY($1::uuid[]) ORDER BY n.created_at`,
    [paymentIds],
  );
  return rows;
}

/**
 * The notifications about one payment, oldest first: those matched to it (`matched`, also after an
 * operator linked one) and those that probably belong to it (`candidate`: a late notification's
 * candidate_payment_id). Each by its own index: notifications_payment, and
 * notifications_candidate_payment (migration 030).
 */
export async function listPaymentNotifications(db: Queryable, paymentId: string): Promise<(NotificationRow & { relation: 'matched' | 'candidate' })[]> {
  const { rows } = await db.query<NotificationRow & { relation: 'matched' | 'candidate' }>(
    `SELECT ${COLUMNS}, 'matched' AS relation FROM notifications WHERE payment_id = $1
     UNION ALL
     SELECT ${COLUMNS}, 'candidate' AS relation FROM notifications WHERE candidate_payment_id = $1 AND payment_id IS DISTINCT FROM $1
     ORDER BY created_at, id`,
    [paymentId],
  );
  return rows;
}

/** Holds a bank reference for the rest of the transaction: two messages naming it are checked one after the other. */
export async function lockReference(tx: Tx, reference: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7464))', [`reference:${reference}`]);
}

/**
 * The first notification naming this bank reference that completed another payment than
 * `paymentId` (notifications_reference, migration 049).
 */
export async function firstPaymentWithReference(
  db: Queryable,
  reference: string,
  paymentId: string,
): Promise<{ id: string; payment_id: string; created_at: Date } | undefined> {
  const { rows } = await db.query<{ id: string; payment_id: string; created_at: Date }>(
    `SELECT id, payment_id, created_at FROM notifications
      WHERE reference = $1 AND payment_id IS NOT NULL AND payment_id <> $2 ORDER BY created_at, id LIMIT 1`,
    [reference, paymentId],
  );
  return rows[0];
}

import type { Queryable, Tx } from '../db/pool.js';
import { PgCode, pgConstraint, pgErrorCode } from '../db/pool.js';

/**
 * The bank messages executors' phones forward (device_messages): what each was read as, and the
 * requisite and notification it was matched to, or why it waits for a person.
 */
export type MessageStatus = 'matched' | 'unmatched' | 'ambiguous' | 'unreadable' | 'ignored' | 'resolved';

export interface MessageRow {
  id: string;
  device_id: string;
  executor_id: string;
  text: string;
  sender: string | null;
  received_at: Date | null;
  status: MessageStatus;
  reason: string | null;
  amount: string | null;
  currency: string | null;
  digits: string | null;
  parsed_bank: string | null;
  requisite_id: string | null;
  notification_id: string | null;
  resolved_note: string | null;
  created_at: Date;
  /** The payment the message's notification completed or probably belongs to (read with it). */
  payment_id?: string | null;
}

const MESSAGE =
  'm.id, m.device_id, m.executor_id, m.text, m.sender, m.received_at, m.status, m.reason, m.amount::text, m.currency, m.digits, m.parsed_bank, m.requisite_id, m.notification_id, m.resolved_note, m.created_at, coalesce(n.payment_id, n.candidate_payment_id) AS payment_id';

export async function findMessageByDedupeKey(db: Queryable, key: Buffer): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE} FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id WHERE m.dedupe_key = $1`,
    [key],
  );
  return rows[0];
}

export function isDuplicateMessage(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'device_messages_dedupe_key_key';
}

export type NewMessage = Omit<MessageRow, 'id' | 'created_at' | 'resolved_note' | 'payment_id'> & { dedupe_key: Buffer };

export async function insertMessage(tx: Queryable, m: NewMessage): Promise<MessageRow> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO device_messages (device_id, executor_id, text, sender, received_at, status, reason, amount, currency, digits, parsed_bank, requisite_id, notification_id, dedupe_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
    [
      m.device_id,
      m.executor_id,
      m.text,
      m.sender,
      m.received_at,
      m.status,
      m.reason,
      m.amount,
      m.currency,
      m.digits,
      m.parsed_bank,
      m.requisite_id,
      m.notification_id,
      m.dedupe_key,
    ],
  );
  return (await findMessage(tx, m.executor_id, rows[0]!.id))!;
}

/** One of the executor's messages (owner-scoped: another executor's is not found); `lock` takes it for a change. */
export async function findMessage(db: Queryable, executorId: string | null, id: string, lock = false): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE} FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id
      WHERE m.id = $1 AND ($2::uuid IS NULL OR m.executor_id = $2)${lock ? ' FOR UPDATE OF m' : ''}`,
    [id, executorId],
  );
  return rows[0];
}

/** The statuses of a message that waits for a person: linked to its payment or set aside by them. */
export const WAITING_STATUSES: MessageStatus[] = ['unmatched', 'ambiguous', 'unreadable'];

/** Messages newest first: one executor's (or every executor's for the operator), optionally in some statuses. */
export async function listMessages(
  db: Queryable,
  filter: { executorId?: string; statuses?: MessageStatus[]; limit: number; offset: number },
): Promise<{ rows: MessageRow[]; total: number }> {
  const { rows } = await db.query<MessageRow & { total: string }>(
    `SELECT ${MESSAGE}, count(*) OVER () AS total FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id
      WHERE ($1::uuid IS NULL OR m.executor_id = $1) AND ($2::text[] IS NULL OR m.status = ANY($2))
      ORDER BY m.created_at DESC, m.id LIMIT $3 OFFSET $4`,
    [filter.executorId ?? null, filter.statuses ?? null, filter.limit, filter.offset],
  );
  return { rows, total: Number(rows[0]?.total ?? 0) };
}

export async function resolveMessage(tx: Tx, id: string, change: { notificationId?: string; requisiteId?: string; note: string }): Promise<void> {
  await tx.query(
    `UPDATE device_messages SET status = 'resolved', resolved_note = $2, notification_id = COALESCE($3, notification_id), requisite_id = COALESCE($4, requisite_id)
      WHERE id = $1`,
    [id, change.note, change.notificationId ?? null, change.requisiteId ?? null],
  );
}

/** The executor's requisites in a currency, with their values' digits, for matching a message. */
export async function requisitesForMatching(
  db: Queryable,
  executorId: string,
  currency: string,
): Promise<{ id: string; type: string; digits: string; bank_code: string | null }[]> {
  const { rows } = await db.query<{ id: string; type: string; digits: string; bank_code: string | null }>(
    `SELECT id, type, regexp_replace(value, '\\D', '', 'g') AS digits, bank_code FROM requisites WHERE executor_id = $1 AND currency = $2`,
    [executorId, currency],
  );
  return rows;
}

/** Which of these requisites have a PENDING payment of exactly this amount. */
export async function requisitesWithPending(db: Queryable, requisiteIds: string[], amount: string): Promise<string[]> {
  if (requisiteIds.length === 0) return [];
  const { rows } = await db.query<{ requisite_id: string }>(
    `SELECT DISTINCT requisite_id FROM payments WHERE requisite_id = ANY($1::uuid[]) AND payer_amount = $2 AND status = 'PENDING'`,
    [requisiteIds, amount],
  );
  return rows.map((row) => row.requisite_id);
}

/** A PENDING payment on one of an executor's requisites, with when its payer pressed "I paid" (null: not yet). */
export interface PendingRow {
  id: string;
  requisite_id: string;
  payer_amount: string;
  payer_currency: string;
  valid_until: Date;
  created_at: Date;
  /** When the payer (or the merchant for them) first confirmed the transfer; null when not yet. */
  payer_confirmed_at: Date | null;
}

/** A PENDING payment a waiting message may be linked to. */
export interface CandidateRow extends PendingRow {
  /** The requisite's value, digits only, to rank those the message's digits name first. */
  requisite_digits: string;
}

/**
 * The executor's own PENDING payments a message may be for: of its amount when it has one, on its
 * requisite when it was matched to one (an unmatched message), soonest to expire first.
 */
export async function candidatePayments(
  db: Queryable,
  executorId: string,
  filter: { amount: string | null; requisiteId: string | null },
): Promise<CandidateRow[]> {
  const { rows } = await db.query<CandidateRow>(
    `SELECT p.id, p.requisite_id, p.payer_amount::text, p.req_currency AS payer_currency, p.valid_until, p.created_at,
            (SELECT min(c.created_at) FROM payment_confirmations c WHERE c.payment_id = p.id) AS payer_confirmed_at,
            regexp_replace(r.value, '\\D', '', 'g') AS requisite_digits
       FROM payments p JOIN requisites r ON r.id = p.requisite_id
      WHERE r.executor_id = $1 AND p.status = 'PENDING'
        AND ($2::numeric IS NULL OR p.payer_amount = $2) AND ($3::uuid IS NULL OR p.requisite_id = $3)
      ORDER BY p.valid_until LIMIT 200`,
    [executorId, filter.amount, filter.requisiteId],
  );
  return rows;
}

/**
 * The payments a merchant's order id (`ext_id`) names, optionally of one merchant or terminal, with
 * the executor whose requisite each was handed: ext_id is unique per merchant only. Read merchant by
 * merchant on payments_merchant_ext_id_key (there is no index on ext_id alone).
 */
export async function paymentsByExtId(
  db: Queryable,
  extId: string,
  filter: { merchantId?: string; terminalId?: string },
): Promise<{ id: string; merchant_id: string; merchant_name: string; terminal_id: string; executor_id: string | null }[]> {
  const { rows } = await db.query<{ id: string; merchant_id: string; merchant_name: string; terminal_id: string; executor_id: string | null }>(
    `SELECT p.id, m.id AS merchant_id, m.name AS merchant_name, p.terminal_id, r.executor_id
       FROM merchants m
      CROSS JOIN LATERAL (SELECT p.id, p.terminal_id, p.requisite_id FROM payments p WHERE p.merchant_id = m.id AND p.ext_id = $1) p
       LEFT JOIN requisites r ON r.id = p.requisite_id
      WHERE ($2::uuid IS NULL OR m.id = $2) AND ($3::uuid IS NULL OR p.terminal_id = $3)
      ORDER BY m.name, p.id LIMIT 20`,
    [extId, filter.merchantId ?? null, filter.terminalId ?? null],
  );
  return rows;
}

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

/** Messages newest first: one executor's (or every executor's for the operator), optionally in one status. */
export async function listMessages(
  db: Queryable,
  filter: { executorId?: string; status?: MessageStatus; limit: number; offset: number },
): Promise<{ rows: MessageRow[]; total: number }> {
  const { rows } = await db.query<MessageRow & { total: string }>(
    `SELECT ${MESSAGE}, count(*) OVER () AS total FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id
      WHERE ($1::uuid IS NULL OR m.executor_id = $1) AND ($2::text IS NULL OR m.status = $2)
      ORDER BY m.created_at DESC, m.id LIMIT $3 OFFSET $4`,
    [filter.executorId ?? null, filter.status ?? null, filter.limit, filter.offset],
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

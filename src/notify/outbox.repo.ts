import type { Queryable } from '../db/pool.js';

/** The staff roles an alert may be addressed to (DESIGN.md "People, sessions and roles"). */
export type StaffRole = 'admin' | 'support' | 'finance';

/**
 * Who a message is for: the sign-ins of one executor or one merchant, staff of some roles, or
 * one person. Only people with a linked chat who have not switched the kind off get a row.
 */
export type Audience =
  | { executorId: string }
  | { merchantId: string }
  | { roles: readonly StaffRole[] }
  | { userId: string }
  /** Every executor switched on (not by the operator or a rule off): who may take a payout. */
  | { activeExecutors: true };

export interface PersonMessage {
  /** What the message is ('dispute_opened', 'payout_available', 'alert_rate_stale', ...): its text and the person's switch. */
  kind: string;
  /** Names the event: one event reaches one person once ('dispute:<id>'). */
  eventKey: string;
  /** What the text is made from (amounts as decimal strings, never a full card number). */
  data: Record<string, unknown>;
  /** Not before (a reminder); now by default. */
  sendAfter?: Date;
}

/**
 * Writes `message` to the Telegram outbox (migration 046) for everyone in `audience` who linked a
 * chat and has not switched `message.kind` off, once per (person, event): call it in the
 * transaction of the event, so the message exists exactly when the event does. One statement; a
 * person with no chat costs nothing. Returns how many people it was written for.
 */
export async function enqueuePersonMessage(db: Queryable, audience: Audience, message: PersonMessage): Promise<number> {
  const [filter, value] =
    'executorId' in audience
      ? ['u.executor_id = $5::uuid', audience.executorId]
      : 'merchantId' in audience
        ? ['u.merchant_id = $5::uuid', audience.merchantId]
        : 'userId' in audience
          ? ['u.id = $5::uuid', audience.userId]
          : 'activeExecutors' in audience
            ? ['$5::boolean AND u.executor_id IN (SELECT e.id FROM executors e WHERE e.is_active)', true]
            : ['u.role = ANY($5::text[])', [...audience.roles]];
  const { rowCount } = await db.query(
    `INSERT INTO telegram_messages (user_id, kind, event_key, data, send_after)
     SELECT u.id, $1, $2, $3::jsonb, coalesce($4::timestamptz, now())
       FROM users u
       JOIN telegram_chats c ON c.user_id = u.id
       LEFT JOIN telegram_switches s ON s.user_id = u.id AND s.kind = $1
      WHERE u.is_active AND coalesce(s.enabled, true) AND ${filter}
     ON CONFLICT ON CONSTRAINT telegram_messages_once DO NOTHING`,
    [message.kind, message.eventKey, JSON.stringify(message.data), message.sendAfter ?? null, value],
  );
  return rowCount ?? 0;
}

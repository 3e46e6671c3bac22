import type { Queryable } from '../db/pool.js';

/*
 * The Telegram tables of migration 046: linked chats, one-time link codes, switches and the
 * message outbox. Every statement about a person is scoped by that person's user id; the bot's
 * side (a chat writing /start or /stop) is scoped by the chat.
 */

export type Language = 'ru' | 'en';

export interface ChatRow {
  user_id: string;
  chat_id: string;
  username: string | null;
  language: Language;
  linked_at: Date;
}

/** A person's linked chat, if any. */
export async function findChat(db: Queryable, userId: string): Promise<ChatRow | undefined> {
  const { rows } = await db.query<ChatRow>('SELECT user_id, chat_id::text, username, language, linked_at FROM telegram_chats WHERE user_id = $1', [userId]);
  return rows[0];
}

/** The person a chat is linked to, if any. */
export async function findChatByChatId(db: Queryable, chatId: number): Promise<ChatRow | undefined> {
  const { rows } = await db.query<ChatRow>('SELECT user_id, chat_id::text, username, language, linked_at FROM telegram_chats WHERE chat_id = $1', [chatId]);
  return rows[0];
}

/** The executor an active executor's sign-in acts for (a button acts for the chat's linked executor only). */
export async function findActiveExecutorOf(db: Queryable, userId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ executor_id: string | null }>(`SELECT executor_id FROM users WHERE id = $1 AND role = 'executor' AND is_active`, [userId]);
  return rows[0]?.executor_id ?? undefined;
}

/**
 * Stores a new code for `userId` (its hash) and retires the person's older unused ones: only the
 * newest code on the screen links.
 */
export async function insertLinkCode(db: Queryable, userId: string, codeHash: Buffer, ttlSeconds: number): Promise<Date> {
  await db.query('DELETE FROM telegram_link_codes WHERE user_id = $1 AND used_at IS NULL', [userId]);
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO telegram_link_codes (code_hash, user_id, expires_at) VALUES ($1, $2, now() + $3 * interval '1 second') RETURNING expires_at`,
    [codeHash, userId, ttlSeconds],
  );
  return rows[0]!.expires_at;
}

/**
 * Spends a code: the person it names, once, while it is fresh and its person still active. The
 * guard in the UPDATE makes a code good once even when two /start race with it.
 */
export async function spendLinkCode(db: Queryable, codeHash: Buffer): Promise<{ user_id: string; email: string } | undefined> {
  const { rows } = await db.query<{ user_id: string; email: string }>(
    `UPDATE telegram_link_codes c SET used_at = now()
       FROM users u
      WHERE c.code_hash = $1 AND c.used_at IS NULL AND c.expires_at > now() AND u.id = c.user_id AND u.is_active
      RETURNING c.user_id, u.email`,
    [codeHash],
  );
  return rows[0];
}

/**
 * Links `chatId` to the person: one chat per person (a new chat replaces the old one) and one
 * person per chat (the chat is taken from whoever had it). Returns who had the chat before, when
 * it was someone else.
 */
export async function linkChat(
  db: Queryable,
  link: { userId: string; chatId: number; username: string | null; language: Language },
): Promise<{ chat: ChatRow; movedFrom: string | null }> {
  const moved = await db.query<{ user_id: string }>('DELETE FROM telegram_chats WHERE chat_id = $1 AND user_id <> $2 RETURNING user_id', [
    link.chatId,
    link.userId,
  ]);
  const { rows } = await db.query<ChatRow>(
    `INSERT INTO telegram_chats (user_id, chat_id, username, language) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id) DO UPDATE SET chat_id = EXCLUDED.chat_id, username = EXCLUDED.username, linked_at = now()
     RETURNING user_id, chat_id::text, username, language, linked_at`,
    [link.userId, link.chatId, link.username, link.language],
  );
  return { chat: rows[0]!, movedFrom: moved.rows[0]?.user_id ?? null };
}

/**
 * Unlinks a chat and gives up the messages still waiting for it (they have nowhere to go): a
 * person's own (the screen), a chat's (the bot's /stop), or exactly that person in that chat (a
 * 403 to a message of theirs: the chat may have been linked to someone else since). Returns the
 * unlinked chat and how many messages were given up.
 */
export async function unlinkChat(
  db: Queryable,
  by: { userId?: string; chatId?: number },
  reason: string,
): Promise<{ chat: ChatRow; givenUp: number } | undefined> {
  const { rows } = await db.query<ChatRow>(
    `DELETE FROM telegram_chats WHERE ($1::uuid IS NULL OR user_id = $1) AND ($2::bigint IS NULL OR chat_id = $2) AND ($1 IS NOT NULL OR $2 IS NOT NULL)
     RETURNING user_id, chat_id::text, username, language, linked_at`,
    [by.userId ?? null, by.chatId ?? null],
  );
  const chat = rows[0];
  if (!chat) return undefined;
  const givenUp = await giveUpPending(db, chat.user_id, reason);
  return { chat, givenUp };
}

/** Marks every pending message of a person failed (its chat is gone). */
export async function giveUpPending(db: Queryable, userId: string, reason: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE telegram_messages SET status = 'failed', last_error = $2, send_after = now() WHERE user_id = $1 AND status = 'pending'`,
    [userId, reason],
  );
  return rowCount ?? 0;
}

export async function setLanguage(db: Queryable, userId: string, language: Language): Promise<void> {
  await db.query('UPDATE telegram_chats SET language = $2 WHERE user_id = $1', [userId, language]);
}

/** What the person switched on or off (kinds never touched are on). */
export async function listSwitches(db: Queryable, userId: string): Promise<{ kind: string; enabled: boolean }[]> {
  const { rows } = await db.query<{ kind: string; enabled: boolean }>('SELECT kind, enabled FROM telegram_switches WHERE user_id = $1 ORDER BY kind', [userId]);
  return rows;
}

export async function setSwitches(db: Queryable, userId: string, switches: Record<string, boolean>): Promise<void> {
  const kinds = Object.keys(switches);
  if (kinds.length === 0) return;
  await db.query(
    `INSERT INTO telegram_switches (user_id, kind, enabled)
     SELECT $1, k, e FROM unnest($2::text[], $3::boolean[]) AS s (k, e)
     ON CONFLICT (user_id, kind) DO UPDATE SET enabled = EXCLUDED.enabled`,
    [userId, kinds, kinds.map((kind) => switches[kind])],
  );
}

/** A message claimed for sending, with where it goes (no chat: its person unlinked since it was written). */
export interface DueMessage {
  id: string;
  user_id: string;
  kind: string;
  event_key: string;
  data: Record<string, unknown>;
  attempts: number;
  chat_id: string | null;
  language: Language | null;
}

/**
 * Claims up to `limit` due messages for this sender: each is pushed `leaseSeconds` into the
 * future and its attempt counted in the same statement, so no other instance's sender claims it
 * while this one sends (SKIP LOCKED passes over the rows being claimed right now; the lease over
 * the ones being sent). A sender that dies mid-send leaves its messages to be claimed again when
 * the lease runs out.
 */
export async function claimDueMessages(db: Queryable, limit: number, leaseSeconds: number): Promise<DueMessage[]> {
  const { rows } = await db.query<DueMessage>(
    `WITH due AS MATERIALIZED (
       SELECT m.id, c.chat_id, c.language
         FROM telegram_messages m
         LEFT JOIN telegram_chats c ON c.user_id = m.user_id
        WHERE m.status = 'pending' AND m.send_after <= now()
        ORDER BY m.send_after, m.id
        LIMIT $1
        FOR UPDATE OF m SKIP LOCKED
     )
     UPDATE telegram_messages m
        SET attempts = m.attempts + 1, send_after = now() + $2 * interval '1 second'
       FROM due
      WHERE m.id = due.id
     RETURNING m.id::text, m.user_id, m.kind, m.event_key, m.data, m.attempts, due.chat_id::text, due.language`,
    [limit, leaseSeconds],
  );
  return rows;
}

export async function markSent(db: Queryable, id: string, messageId: number): Promise<void> {
  await db.query(`UPDATE telegram_messages SET status = 'sent', sent_at = now(), message_id = $2, last_error = NULL WHERE id = $1 AND status = 'pending'`, [
    id,
    messageId,
  ]);
}

/**
 * Puts a message back for a later attempt. `countAttempt` false takes back the attempt the claim
 * counted: Telegram's flood control (429) is not the message's fault and must not bring it nearer
 * to being given up.
 */
export async function retryLater(db: Queryable, id: string, delaySeconds: number, error: string, countAttempt: boolean): Promise<void> {
  await db.query(
    `UPDATE telegram_messages
        SET send_after = now() + $2 * interval '1 second', last_error = $3, attempts = attempts - CASE WHEN $4 THEN 0 ELSE 1 END
      WHERE id = $1 AND status = 'pending'`,
    [id, delaySeconds, error, countAttempt],
  );
}

export async function markFailed(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(`UPDATE telegram_messages SET status = 'failed', last_error = $2 WHERE id = $1 AND status = 'pending'`, [id, error]);
}

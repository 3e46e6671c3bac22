import QRCode from 'qrcode';
import { insertAuditEntry } from '../admin/audit.repo.js';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { PersonActor } from '../lib/actor.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import * as repo from './telegram.repo.js';
import { messageKinds } from './texts.js';

/** A link code is good for 10 minutes (issue 37: "good once for 10 minutes"). */
export const LINK_CODE_TTL_SECONDS = 600;
/**
 * 18 random bytes: 144 bits, 24 base64url characters, well inside the 64 characters (A-Z, a-z,
 * 0-9, _ and -) Telegram allows in a deep link's start parameter.
 */
const LINK_CODE_BYTES = 18;

/** A fresh one-time code for the signed-in person, as a deep link to the bot and its QR code. */
export async function createLinkCode(ctx: AppContext, person: PersonActor, audit: AuditRecorder) {
  const bot = ctx.telegram;
  if (!bot) throw new DomainError('TELEGRAM_OFF');
  // Asked before anything is stored: a bot Telegram does not answer for gives no code.
  const username = await bot.username();
  const code = randomToken('', LINK_CODE_BYTES);
  const expiresAt = await transaction(ctx.db, async (tx) => {
    const expires = await repo.insertLinkCode(tx, person.id, hashToken(code), LINK_CODE_TTL_SECONDS);
    // The code itself is a secret (it links whoever sends it): the audit row names only its expiry.
    await audit(tx, 'telegram.link_code', 'user', person.id, null, { expires_at: expires.toISOString() });
    return expires;
  });
  const url = `https://t.me/${username}?start=${code}`;
  const svg = await QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { code, url, expires_at: expiresAt.toISOString(), qr_svg: svg };
}

/** What the person's Telegram screen shows. */
export async function telegramStatus(ctx: AppContext, person: PersonActor) {
  const [chat, stored] = await Promise.all([repo.findChat(ctx.db, person.id), repo.listSwitches(ctx.db, person.id)]);
  const enabled = new Map(stored.map((s) => [s.kind, s.enabled]));
  const kinds = [...new Set([...messageKinds(person.role), ...enabled.keys()])];
  return {
    configured: ctx.telegram !== undefined,
    linked: chat !== undefined,
    username: chat?.username ?? null,
    linked_at: chat?.linked_at.toISOString() ?? null,
    language: chat?.language ?? null,
    switches: kinds.map((kind) => ({ kind, enabled: enabled.get(kind) ?? true })),
    bot_username: ctx.telegram ? await ctx.telegram.username().catch(() => null) : null,
  };
}

/** Changes the person's message language and switches; a kind the person's role is never sent is refused. */
export async function updateTelegramSettings(
  ctx: AppContext,
  person: PersonActor,
  change: { language?: repo.Language; switches?: Record<string, boolean> },
  audit: AuditRecorder,
) {
  const known = messageKinds(person.role);
  const unknown = Object.keys(change.switches ?? {}).filter((kind) => !known.includes(kind));
  if (unknown.length > 0) {
    throw new DomainError('VALIDATION', `No such message for a ${person.role}: ${unknown.join(', ')} (known: ${known.join(', ')})`, { kinds: unknown });
  }
  await transaction(ctx.db, async (tx) => {
    const chat = await repo.findChat(tx, person.id);
    if (change.language && !chat) throw new DomainError('CONFLICT', 'Link a chat first: the language is the chat’s');
    if (change.language) await repo.setLanguage(tx, person.id, change.language);
    if (change.switches) await repo.setSwitches(tx, person.id, change.switches);
    await audit(tx, 'telegram.settings', 'user', person.id, chat ? { language: chat.language } : null, change);
  });
  return telegramStatus(ctx, person);
}

/** Unlinks the person's chat (the screen's button); nothing linked is no error. */
export async function unlinkTelegram(ctx: AppContext, person: PersonActor, audit: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    const gone = await repo.unlinkChat(tx, { userId: person.id }, 'unlinked by the person');
    if (gone) await audit(tx, 'telegram.unlink', 'user', person.id, { chat_id: gone.chat.chat_id, username: gone.chat.username }, null);
  });
}

/** What /start <code> did. */
export type LinkOutcome = { linked: true; language: repo.Language } | { linked: false };

/**
 * The bot's side of linking: a fresh, unused code links `chat` to its person (taking the chat
 * from whoever had it) and is spent; anything else links nothing. The audit row names the person,
 * who acted by sending the code.
 */
export async function linkByCode(ctx: AppContext, code: string, chat: { id: number; username: string | null; language: repo.Language }): Promise<LinkOutcome> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(code)) return { linked: false };
  return transaction(ctx.db, async (tx) => {
    const person = await repo.spendLinkCode(tx, hashToken(code));
    if (!person) return { linked: false };
    const { chat: linked, movedFrom } = await repo.linkChat(tx, { userId: person.user_id, chatId: chat.id, username: chat.username, language: chat.language });
    if (movedFrom) await repo.giveUpPending(tx, movedFrom, 'the chat was linked to someone else');
    await insertAuditEntry(tx, {
      actor: person.email,
      userId: person.user_id,
      ip: null,
      action: 'telegram.link',
      objectType: 'user',
      objectId: person.user_id,
      before: null,
      after: JSON.stringify({ chat_id: linked.chat_id, username: linked.username, moved_from: movedFrom }),
    });
    return { linked: true, language: linked.language };
  });
}

/**
 * Unlinks a chat from the bot's side: /stop, or Telegram refusing to deliver to it (403, the bot
 * blocked or the chat gone). `userId` narrows it to that person's link. Returns the unlinked
 * person's language and how many of their waiting messages were given up, or undefined.
 */
export async function unlinkChatFromBot(
  ctx: AppContext,
  by: { chatId: number; userId?: string },
  why: 'stop' | 'blocked',
): Promise<{ language: repo.Language; givenUp: number } | undefined> {
  return transaction(ctx.db, async (tx) => {
    const gone = await repo.unlinkChat(tx, by, why === 'stop' ? 'unlinked by /stop' : 'Telegram refused the chat (403): unlinked');
    if (!gone) return undefined;
    await insertAuditEntry(tx, {
      actor: why === 'stop' ? 'system:telegram /stop' : 'system:telegram',
      userId: why === 'stop' ? gone.chat.user_id : null,
      ip: null,
      action: 'telegram.unlink',
      objectType: 'user',
      objectId: gone.chat.user_id,
      before: JSON.stringify({ chat_id: gone.chat.chat_id, username: gone.chat.username }),
      after: JSON.stringify({ reason: why }),
    });
    return { language: gone.chat.language, givenUp: gone.givenUp };
  });
}

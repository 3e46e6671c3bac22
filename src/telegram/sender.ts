import { GrammyError } from 'grammy';
import type { AppContext } from '../context.js';
import { maskBotTokens } from '../lib/mask.js';
import type { TelegramBot } from './bot.js';
import { claimDueMessages, type DueMessage, markFailed, markSent, retryLater } from './telegram.repo.js';
import { unlinkChatFromBot } from './telegram.service.js';
import { renderMessage } from './texts.js';

/** Messages one claim takes at most; they are sent a few at a time (Telegram allows about 30 a second per bot). */
const BATCH = 20;
const PARALLEL = 5;
/** How long a claimed message is this sender's: longer than a Bot API call may last (30 s). */
const LEASE_SECONDS = 90;
/** A sender with nothing due looks again after this long. */
const IDLE_MS = 1000;
/** Attempts after which a message that keeps failing (network, Telegram's 5xx) is given up. */
export const MAX_ATTEMPTS = 8;
/** The first retry's delay; it doubles per attempt, capped at an hour. */
const RETRY_BASE_SECONDS = 5;

/**
 * The outbox worker (migration 046): on every instance that runs background work, claims due
 * messages and sends each to its person's chat, in the chat's language. Claims are exclusive
 * (claimDueMessages), so two instances never send one message twice; a message is recorded as
 * sent with Telegram's message_id. Stopped with the service.
 */
export function startSender(ctx: AppContext, tg: TelegramBot): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      let claimed = 0;
      try {
        const due = await claimDueMessages(ctx.db, BATCH, LEASE_SECONDS);
        claimed = due.length;
        for (let i = 0; i < due.length; i += PARALLEL) {
          await Promise.all(due.slice(i, i + PARALLEL).map((message) => sendOne(ctx, tg, message)));
        }
      } catch (err) {
        ctx.log.error({ err }, 'the Telegram outbox could not be read; trying again shortly');
      }
      // A full batch means more may be due at once.
      if (claimed < BATCH && !stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}

/** Exponential backoff in seconds: 5, 10, 20… capped at an hour. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(RETRY_BASE_SECONDS * 2 ** Math.max(0, attempt - 1), 3600);
}

/** One attempt at one claimed message; every outcome is recorded, none is thrown. */
async function sendOne(ctx: AppContext, tg: TelegramBot, message: DueMessage): Promise<void> {
  try {
    if (message.chat_id === null || message.language === null) {
      await markFailed(ctx.db, message.id, 'its person has no linked chat');
      ctx.metrics.telegramFailed('unlinked');
      return;
    }
    const rendered = renderMessage(message.kind, message.data, message.language);
    const chatId = Number(message.chat_id);
    let sent: { message_id: number };
    try {
      // HTML: the texts escape every figure they put in (texts.ts), so data never becomes markup.
      sent = await tg.bot.api.sendMessage(chatId, rendered.text, {
        parse_mode: 'HTML',
        link_preview_options: { is_disabled: true },
        ...(rendered.buttons?.length
          ? { reply_markup: { inline_keyboard: rendered.buttons.map((row) => row.map((b) => ({ text: b.text, callback_data: b.data }))) } }
          : {}),
      });
    } catch (err) {
      await recordFailure(ctx, message, chatId, err);
      return;
    }
    await markSent(ctx.db, message.id, sent.message_id);
    ctx.metrics.telegramSent();
  } catch (err) {
    // The outcome could not be recorded: the lease runs out and the message is claimed again.
    ctx.log.error({ err, message_id: message.id }, 'a Telegram message’s outcome could not be recorded; it is retried when its lease runs out');
  }
}

async function recordFailure(ctx: AppContext, message: DueMessage, chatId: number, err: unknown): Promise<void> {
  const code = err instanceof GrammyError ? err.error_code : undefined;
  // Stored and logged: a transport error may quote the request's URL, which holds the token.
  const description = maskBotTokens(err instanceof GrammyError ? err.description : err instanceof Error ? err.message : String(err));
  if (code === 429) {
    // Telegram's flood control says when to come back; the attempt is not held against the message.
    const retryAfter = err instanceof GrammyError ? (err.parameters.retry_after ?? RETRY_BASE_SECONDS) : RETRY_BASE_SECONDS;
    await retryLater(ctx.db, message.id, retryAfter, description, false);
    ctx.log.warn({ message_id: message.id, retry_after: retryAfter }, 'Telegram asked to slow down (429)');
    return;
  }
  if (code === 403) {
    // The bot is blocked or the chat is gone: the link is dead, and so is everything waiting for it.
    const gone = await unlinkChatFromBot(ctx, { chatId, userId: message.user_id }, 'blocked');
    if (!gone) await markFailed(ctx.db, message.id, description);
    ctx.metrics.telegramFailed('blocked', gone ? gone.givenUp : 1);
    ctx.log.warn({ message_id: message.id, user_id: message.user_id }, 'Telegram refused the chat (403): it is unlinked');
    return;
  }
  if (code !== undefined && code >= 400 && code < 500) {
    // Telegram refuses this message itself (400: chat not found, text too long…): sending it again changes nothing.
    await markFailed(ctx.db, message.id, description);
    ctx.metrics.telegramFailed('rejected');
    ctx.log.warn({ message_id: message.id, code, error: description }, 'Telegram refused a message');
    return;
  }
  // A network failure or Telegram's 5xx: again later, until attempts run out.
  if (message.attempts >= MAX_ATTEMPTS) {
    await markFailed(ctx.db, message.id, description);
    ctx.metrics.telegramFailed('attempts');
    ctx.log.warn({ message_id: message.id, attempts: message.attempts, error: description }, 'a Telegram message was given up');
    return;
  }
  await retryLater(ctx.db, message.id, retryDelaySeconds(message.attempts), description, true);
}

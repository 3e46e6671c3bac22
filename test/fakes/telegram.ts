import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Telegram Bot API (https://core.telegram.org/bots/api), enough for the
 * bot of issue 37: start it, point the service at it with TELEGRAM_API_ROOT = `fake.apiRoot` and
 * TELEGRAM_BOT_TOKEN = `fake.token`, then drive it from the test.
 *
 *   const tg = await startFakeTelegram();            // bot @kassir_test_bot
 *   tg.sendText(1001, '/start abc');                 // a person writes to the bot (queued for getUpdates, or POSTed to the webhook)
 *   tg.pressButton(1001, 'take:<payout_id>', 55);    // a person taps an inline button under message 55
 *   await tg.waitFor(() => tg.messagesTo(1001).length > 0);
 *   tg.messagesTo(1001)[0].text                      // what the bot sent (sendMessage calls, in order)
 *   tg.failSends(1001, { code: 429, retryAfter: 2 }); // the next sendMessage to that chat answers 429 retry_after 2 (count: how many)
 *   tg.failSends(1001, { code: 403 });               // ... "Forbidden: bot was blocked by the user" until cleared
 *   tg.calls                                         // every call: {method, params, at}
 *   tg.conflicts                                     // getUpdates calls that overlapped another poller (Telegram answers 409)
 *   await tg.close();
 *
 * Like Telegram: getUpdates long-polls (held until an update arrives or `timeout` seconds, capped
 * at 1 s here so tests stay quick), confirms updates below `offset`, and a second getUpdates while
 * one is held ends the first with 409 Conflict (counted in `conflicts`); while a webhook is set,
 * getUpdates answers 409 and pushed updates are POSTed to the webhook with its secret token in
 * X-Telegram-Bot-Api-Secret-Token (`webhookDeliveries` records each status). Methods answered:
 * getMe, getUpdates, sendMessage, answerCallbackQuery, setWebhook, deleteWebhook, getWebhookInfo,
 * editMessageText, editMessageReplyMarkup; anything else answers 404 as Telegram does.
 */

export interface FakeTelegramOptions {
  /** The bot's username (getMe); default kassir_test_bot. */
  username?: string;
  /** The token the service must use; default a fixed test token. */
  token?: string;
}

export interface TelegramCall {
  method: string;
  params: Record<string, any>;
  at: number;
}

export interface SentMessage {
  chatId: number;
  messageId: number;
  text: string;
  /** The inline keyboard's buttons, flattened: [{text, callback_data}]. */
  buttons: { text: string; callback_data?: string; url?: string }[];
  params: Record<string, any>;
}

export type SendFailure = { code: 429; retryAfter: number; count?: number } | { code: 403; count?: number } | { code: 500; count?: number };

export interface FakeTelegram {
  /** TELEGRAM_API_ROOT for the service (http://127.0.0.1:<port>). */
  apiRoot: string;
  token: string;
  username: string;
  calls: TelegramCall[];
  sent: SentMessage[];
  conflicts: number;
  /** Status of each POST of an update to the webhook. */
  webhookDeliveries: { updateId: number; status: number }[];
  webhook: { url: string; secretToken?: string } | undefined;
  /** Queues an update (or POSTs it to the webhook when one is set); returns its update_id. */
  pushUpdate(update: Record<string, any>): number;
  /** A private-chat text message from `chatId` (the chat id is also the user's id, as in private chats). */
  sendText(chatId: number, text: string, from?: { username?: string; language_code?: string }): number;
  /** A tap on an inline button with `data` under the bot's message `messageId` in `chatId`. */
  pressButton(chatId: number, data: string, messageId?: number): number;
  failSends(chatId: number, failure: SendFailure): void;
  clearFailures(chatId?: number): void;
  messagesTo(chatId: number): SentMessage[];
  callsOf(method: string): TelegramCall[];
  /** Polls `predicate` every 20 ms until true; throws after `ms` (default 10 s). */
  waitFor(predicate: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export const FAKE_TELEGRAM_TOKEN = '123456789:AAFakeTokenForKassirTestsOnly_abcdefgh';

/** Starts the stand-in on a free loopback port. */
export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const token = options.token ?? FAKE_TELEGRAM_TOKEN;
  const username = options.username ?? 'kassir_test_bot';
  const queue: { update_id: number; [k: string]: any }[] = [];
  let nextUpdateId = 1000;
  let nextMessageId = 1;
  const failures = new Map<number, SendFailure & { left: number }>();
  let heldPoll: { finish: (status: number, body: unknown) => void } | undefined;
  let closed = false;

  const fake: FakeTelegram = {
    apiRoot: '',
    token,
    username,
    calls: [],
    sent: [],
    conflicts: 0,
    webhookDeliveries: [],
    webhook: undefined,
    pushUpdate(update) {
      const full = { ...update, update_id: nextUpdateId++ };
      if (fake.webhook) void deliverToWebhook(full);
      else {
        queue.push(full);
        wakePoll();
      }
      return full.update_id;
    },
    sendText(chatId, text, from = {}) {
      const entities = text.startsWith('/') ? [{ type: 'bot_command', offset: 0, length: (text.split(' ')[0] ?? '').length }] : undefined;
      return fake.pushUpdate({
        message: {
          message_id: nextMessageId++,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: 'private', username: from.username },
          from: { id: chatId, is_bot: false, first_name: 'Test', username: from.username, language_code: from.language_code },
          text,
          ...(entities ? { entities } : {}),
        },
      });
    },
    pressButton(chatId, data, messageId = 1) {
      return fake.pushUpdate({
        callback_query: {
          id: `cq${nextUpdateId}`,
          from: { id: chatId, is_bot: false, first_name: 'Test' },
          chat_instance: String(chatId),
          data,
          message: { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: '' },
        },
      });
    },
    failSends(chatId, failure) {
      failures.set(chatId, { ...failure, left: failure.count ?? (failure.code === 429 ? 1 : Number.POSITIVE_INFINITY) });
    },
    clearFailures(chatId) {
      if (chatId === undefined) failures.clear();
      else failures.delete(chatId);
    },
    messagesTo: (chatId) => fake.sent.filter((m) => m.chatId === chatId),
    callsOf: (method) => fake.calls.filter((c) => c.method === method),
    async waitFor(predicate, ms = 10_000) {
      const until = Date.now() + ms;
      while (!predicate()) {
        if (Date.now() > until) throw new Error('fake Telegram: condition not met in time');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      closed = true;
      heldPoll?.finish(200, { ok: true, result: [] });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function wakePoll() {
    const held = heldPoll;
    if (held && queue.length > 0) held.finish(200, { ok: true, result: [...queue] });
  }

  async function deliverToWebhook(update: Record<string, any>) {
    const hook = fake.webhook;
    if (!hook) return;
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(hook.secretToken ? { 'x-telegram-bot-api-secret-token': hook.secretToken } : {}) },
        body: JSON.stringify(update),
      });
      await res.arrayBuffer();
      fake.webhookDeliveries.push({ updateId: update.update_id, status: res.status });
    } catch {
      fake.webhookDeliveries.push({ updateId: update.update_id, status: 0 });
    }
  }

  const error = (code: number, description: string, parameters?: Record<string, unknown>) => ({
    ok: false,
    error_code: code,
    description,
    ...(parameters ? { parameters } : {}),
  });

  function answer(method: string, params: Record<string, any>, res: ServerResponse, send: (status: number, body: unknown) => void) {
    switch (method) {
      case 'getMe':
        return send(200, { ok: true, result: { id: Number(token.split(':')[0]), is_bot: true, first_name: 'Kassir', username, can_join_groups: false } });
      case 'getUpdates': {
        if (fake.webhook)
          return send(409, error(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"));
        const offset = Number(params.offset ?? 0);
        if (offset > 0) while ((queue[0]?.update_id ?? offset) < offset) queue.shift();
        if (heldPoll) {
          fake.conflicts++;
          heldPoll.finish(409, error(409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running'));
        }
        if (queue.length > 0 || closed) return send(200, { ok: true, result: [...queue] });
        const waitMs = Math.min(Number(params.timeout ?? 0), 1) * 1000;
        let done = false;
        const poll = {
          finish: (status: number, body: unknown) => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            if (heldPoll === poll) heldPoll = undefined;
            send(status, body);
          },
        };
        const timer = setTimeout(() => poll.finish(200, { ok: true, result: [] }), waitMs);
        heldPoll = poll;
        res.on('close', () => poll.finish(200, { ok: true, result: [] }));
        return;
      }
      case 'sendMessage': {
        const chatId = Number(params.chat_id);
        const failure = failures.get(chatId);
        if (failure && failure.left > 0) {
          failure.left--;
          if (failure.code === 429) return send(429, error(429, `Too Many Requests: retry after ${failure.retryAfter}`, { retry_after: failure.retryAfter }));
          if (failure.code === 403) return send(403, error(403, 'Forbidden: bot was blocked by the user'));
          return send(500, error(500, 'Internal Server Error'));
        }
        const messageId = nextMessageId++;
        const keyboard: any[][] = params.reply_markup?.inline_keyboard ?? [];
        fake.sent.push({ chatId, messageId, text: String(params.text ?? ''), buttons: keyboard.flat(), params });
        return send(200, {
          ok: true,
          result: { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: params.text },
        });
      }
      case 'answerCallbackQuery':
      case 'editMessageReplyMarkup':
      case 'editMessageText':
        return send(200, { ok: true, result: true });
      case 'setWebhook':
        fake.webhook = { url: String(params.url), secretToken: params.secret_token };
        return send(200, { ok: true, result: true, description: 'Webhook was set' });
      case 'deleteWebhook':
        fake.webhook = undefined;
        return send(200, { ok: true, result: true, description: 'Webhook was deleted' });
      case 'getWebhookInfo':
        return send(200, { ok: true, result: { url: fake.webhook?.url ?? '', has_custom_certificate: false, pending_update_count: queue.length } });
      default:
        return send(404, error(404, 'Not Found'));
    }
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        if (res.writableEnded || res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const match = /^\/bot([^/]+)\/([A-Za-z]+)/.exec(req.url ?? '');
      if (!match || match[1] !== token) return send(401, error(401, 'Unauthorized'));
      const url = new URL(req.url ?? '/', 'http://x');
      let params: Record<string, any> = Object.fromEntries(url.searchParams);
      const raw = Buffer.concat(chunks).toString('utf8');
      if (raw) {
        try {
          params = { ...params, ...JSON.parse(raw) };
        } catch {
          return send(400, error(400, 'Bad Request: the body is not JSON'));
        }
      }
      const method = match[2] ?? '';
      fake.calls.push({ method, params, at: Date.now() });
      answer(method, params, res, send);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

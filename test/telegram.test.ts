/**
 * Issue 37 items 1, 3, 4 and 5: the Telegram bot against a local stand-in of the Bot API
 * (test/fakes/telegram.ts). Linking by /start <code> for an executor, staff and a merchant; a
 * replayed and an expired code; /stop; the outbox sender (429 retried after retry_after, 403
 * unlinking the chat); two instances sending each message once; one poller at a time with
 * take-over; the webhook with its secret token; the token masked in logs; the metrics.
 */
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { Bot } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/lib/logger.js';
import { enqueuePersonMessage } from '../src/notify/outbox.repo.js';
import { type FakeTelegram, startFakeTelegram } from './fakes/telegram.js';
import {
  adminOk,
  asPerson,
  createExecutor,
  createMerchant,
  type PersonSession,
  personSignIn,
  staffSession,
  startTestService,
  type TestService,
} from './helpers.js';

const PASSWORD = 'correct horse battery';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function counter(service: TestService, name: string, labels = ''): Promise<number> {
  const text = await service.ctx.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('Telegram: linking, the outbox, polling', () => {
  let tg: FakeTelegram;
  let service: TestService;
  let executorPerson: PersonSession & { userId: string };
  let staff: PersonSession & { id: string };
  let merchantPerson: PersonSession & { userId: string };

  const link = async (session: PersonSession, prefix: string) => {
    const res = await asPerson(service.app, session, 'POST', `${prefix}/telegram/link`);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { code: string; url: string; expires_at: string; qr_svg: string };
  };
  const lastReply = (chatId: number) => tg.messagesTo(chatId).at(-1)?.text ?? '';
  const waitReplies = (chatId: number, n: number) => tg.waitFor(() => tg.messagesTo(chatId).length >= n);

  beforeAll(async () => {
    tg = await startFakeTelegram();
    service = await startTestService({ TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot }, { worker: true });
    const executor = await createExecutor(service.app, 'Telegram trader');
    const login = await adminOk<{ id: string; email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, {
      email: 'tg-trader@kassir.test',
      password: PASSWORD,
    });
    executorPerson = { ...(await personSignIn(service.app, login.email, PASSWORD)), userId: login.id };
    staff = await staffSession(service, 'tg-support@kassir.test', 'support');
    const shop = await createMerchant(service.app);
    const user = await adminOk<{ id: string; email: string }>(service.app, 'POST', `/merchants/${shop.merchantId}/users`, {
      email: 'tg-shop@kassir.test',
      password: PASSWORD,
    });
    merchantPerson = { ...(await personSignIn(service.app, user.email, PASSWORD)), userId: user.id };
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await tg?.close();
  });

  it('links an executor by /start <code>: a deep link to the bot, a QR code, the reply in Russian', async () => {
    const answer = await link(executorPerson, '/executor/v1');
    expect(answer.url).toBe(`https://t.me/kassir_test_bot?start=${answer.code}`);
    expect(answer.code).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
    expect(answer.qr_svg).toContain('<svg');
    expect(new Date(answer.expires_at).getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
    // Stored hashed: the code itself is nowhere in the database.
    const stored = await service.ctx.db.query('SELECT 1 FROM telegram_link_codes WHERE encode(code_hash, $$escape$$) LIKE $1', [`%${answer.code}%`]);
    expect(stored.rowCount).toBe(0);

    tg.sendText(1001, `/start ${answer.code}`, { username: 'trader_tg', language_code: 'ru' });
    await waitReplies(1001, 1);
    expect(lastReply(1001)).toMatch(/^Готово: уведомления Kassir приходят сюда/);
    const status = (await asPerson(service.app, executorPerson, 'GET', '/executor/v1/telegram')).json();
    expect(status).toMatchObject({ configured: true, linked: true, username: 'trader_tg', language: 'ru', bot_username: 'kassir_test_bot' });
    expect(status.switches).toContainEqual({ kind: 'payout_available', enabled: true });
    const audit = await service.ctx.db.query(`SELECT actor FROM audit_log WHERE action = 'telegram.link' AND object_id = $1`, [executorPerson.userId]);
    expect(audit.rows[0]?.actor).toBe('tg-trader@kassir.test');
  });

  it('a replayed code, an unknown one and an expired one link nothing and say to make a new code; /start alone says where to get one', async () => {
    const answer = await link(executorPerson, '/executor/v1');
    tg.sendText(1101, `/start ${answer.code}`);
    await waitReplies(1101, 1);
    // The same code again, from another chat: spent.
    tg.sendText(1102, `/start ${answer.code}`);
    await waitReplies(1102, 1);
    expect(lastReply(1102)).toMatch(/Создайте новый на экране Telegram/);
    tg.sendText(1103, '/start notacodeatall', { language_code: 'en' });
    await waitReplies(1103, 1);
    expect(lastReply(1103)).toMatch(/Make a new one on the Telegram screen/);

    const expired = await link(executorPerson, '/executor/v1');
    await service.ctx.db.query(`UPDATE telegram_link_codes SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND used_at IS NULL`, [
      executorPerson.userId,
    ]);
    tg.sendText(1104, `/start ${expired.code}`);
    await waitReplies(1104, 1);
    expect(lastReply(1104)).toMatch(/Код не подошёл/);

    // A newer code retires the older unused one.
    const older = await link(executorPerson, '/executor/v1');
    await link(executorPerson, '/executor/v1');
    tg.sendText(1105, `/start ${older.code}`);
    await waitReplies(1105, 1);
    expect(lastReply(1105)).toMatch(/Код не подошёл/);

    tg.sendText(1106, '/start');
    await waitReplies(1106, 1);
    expect(lastReply(1106)).toMatch(/экран Telegram/);
    const chats = await service.ctx.db.query('SELECT chat_id::int FROM telegram_chats WHERE chat_id IN (1102, 1103, 1104, 1105, 1106)');
    expect(chats.rowCount).toBe(0);
    // The executor is linked to the chat of the last good code (one chat per person).
    const own = await service.ctx.db.query('SELECT chat_id::int FROM telegram_chats WHERE user_id = $1', [executorPerson.userId]);
    expect(own.rows[0]?.chat_id).toBe(1101);
  });

  it('links staff under /auth/v1 (reply in English for an English Telegram) and a merchant under /merchant/v1; a chat linked to someone else moves', async () => {
    const staffCode = await link(staff, '/auth/v1');
    tg.sendText(2001, `/start ${staffCode.code}`, { language_code: 'en' });
    await waitReplies(2001, 1);
    expect(lastReply(2001)).toMatch(/^Done: Kassir notifications come here/);
    expect((await asPerson(service.app, staff, 'GET', '/auth/v1/telegram')).json()).toMatchObject({ linked: true, language: 'en' });

    const shopCode = await link(merchantPerson, '/merchant/v1');
    // The merchant uses the chat the executor had: it moves to the merchant.
    tg.sendText(1101, `/start ${shopCode.code}`);
    await waitReplies(1101, 2);
    expect((await asPerson(service.app, merchantPerson, 'GET', '/merchant/v1/telegram')).json()).toMatchObject({ linked: true });
    expect((await asPerson(service.app, executorPerson, 'GET', '/executor/v1/telegram')).json()).toMatchObject({ linked: false });

    // Switches and language, for the person only; a kind their role never gets is refused.
    const patched = await asPerson(service.app, merchantPerson, 'PATCH', '/merchant/v1/telegram', { language: 'en', switches: { withdrawal_sent: false } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().language).toBe('en');
    expect(patched.json().switches).toContainEqual({ kind: 'withdrawal_sent', enabled: false });
    const refused = await asPerson(service.app, merchantPerson, 'PATCH', '/merchant/v1/telegram', { switches: { payout_available: false } });
    expect(refused.statusCode).toBe(400);
    // The CSRF header is needed like on every other change.
    const noCsrf = await service.app.inject({ method: 'POST', url: '/merchant/v1/telegram/link', headers: { cookie: merchantPerson.cookie } });
    expect(noCsrf.statusCode).toBe(403);
  });

  it('/stop unlinks the chat; DELETE unlinks from the screen', async () => {
    tg.sendText(1101, '/stop');
    await waitReplies(1101, 3);
    expect(lastReply(1101)).toMatch(/no longer come here|больше не приходят/);
    expect((await asPerson(service.app, merchantPerson, 'GET', '/merchant/v1/telegram')).json()).toMatchObject({ linked: false });

    const code = await link(executorPerson, '/executor/v1');
    tg.sendText(1201, `/start ${code.code}`);
    await waitReplies(1201, 1);
    const del = await asPerson(service.app, executorPerson, 'DELETE', '/executor/v1/telegram');
    expect(del.statusCode).toBe(204);
    expect((await asPerson(service.app, executorPerson, 'GET', '/executor/v1/telegram')).json()).toMatchObject({ linked: false });
  });

  it('sends an outbox message in the chat’s language and stores its message_id; 429 is retried after retry_after', async () => {
    const sentBefore = await counter(service, 'kassir_telegram_messages_sent_total');
    tg.failSends(2001, { code: 429, retryAfter: 2 });
    await enqueuePersonMessage(service.ctx.db, { roles: ['support'] }, { kind: 'alert_rate_stale', eventKey: 'alert:test:1', data: { currency: 'RUB' } });
    // The rate alert names its currency (texts.ts); nothing else sent to this chat does.
    await tg.waitFor(() => tg.messagesTo(2001).some((m) => m.text.includes('RUB')), 15_000);
    const tries = tg.callsOf('sendMessage').filter((c) => Number(c.params.chat_id) === 2001 && String(c.params.text).includes('RUB'));
    expect(tries.length).toBe(2);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(1900);
    // Recorded just after Telegram answered.
    const read = async () =>
      (
        await service.ctx.db.query(`SELECT status, message_id::int, attempts FROM telegram_messages WHERE event_key = 'alert:test:1' AND user_id = $1`, [
          staff.id,
        ])
      ).rows[0];
    await expect.poll(async () => (await read()).status).toBe('sent');
    const row = await read();
    // The 429 was not held against the message: one attempt counted.
    expect(row).toMatchObject({ status: 'sent', attempts: 1 });
    expect(row.message_id).toBe(tg.messagesTo(2001).at(-1)!.messageId);
    expect(await counter(service, 'kassir_telegram_messages_sent_total')).toBe(sentBefore + 1);
  });

  it('403 (the bot blocked) unlinks the chat and gives up its messages, counted as failed', async () => {
    const code = await link(executorPerson, '/executor/v1');
    tg.sendText(1301, `/start ${code.code}`);
    await waitReplies(1301, 1);
    const failedBefore = await counter(service, 'kassir_telegram_messages_failed_total', '{reason="blocked"}');
    tg.failSends(1301, { code: 403 });
    const later = new Date(Date.now() + 3600_000);
    const triedBefore = tg.callsOf('sendMessage').filter((c) => Number(c.params.chat_id) === 1301).length;
    await enqueuePersonMessage(service.ctx.db, { userId: executorPerson.userId }, { kind: 'deposit_low', eventKey: 'deposit:1', data: {} });
    await enqueuePersonMessage(service.ctx.db, { userId: executorPerson.userId }, { kind: 'deposit_low', eventKey: 'deposit:2', data: {}, sendAfter: later });
    await tg.waitFor(() => tg.callsOf('sendMessage').filter((c) => Number(c.params.chat_id) === 1301).length > triedBefore);
    await expect
      .poll(async () => (await service.ctx.db.query('SELECT 1 FROM telegram_chats WHERE user_id = $1', [executorPerson.userId])).rowCount, { timeout: 5000 })
      .toBe(0);
    const rows = await service.ctx.db.query(`SELECT status FROM telegram_messages WHERE user_id = $1 AND event_key LIKE 'deposit:%'`, [executorPerson.userId]);
    expect(rows.rows.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(await counter(service, 'kassir_telegram_messages_failed_total', '{reason="blocked"}')).toBe(failedBefore + 2);
    tg.clearFailures(1301);
  });

  it('the Take button is answered, and acts only for the chat’s linked executor', async () => {
    tg.pressButton(9999, 'take:00000000-0000-0000-0000-000000000000', 5);
    await tg.waitFor(() => tg.callsOf('answerCallbackQuery').length >= 1);
    expect(tg.callsOf('answerCallbackQuery')[0]!.params.text).toBeTruthy();
  });
});

describe('Telegram: two instances', () => {
  let tg: FakeTelegram;
  let service: TestService;

  beforeAll(async () => {
    tg = await startFakeTelegram();
    service = await startTestService({ TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot }, { worker: true });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await tg?.close();
  });

  it('send each of 20 messages once, and poll one at a time; the other takes over when the poller stops', async () => {
    const other = await service.startAnother();
    const user = await adminOk<{ id: string }>(service.app, 'POST', '/users', { email: 'twice@kassir.test', role: 'support', password: PASSWORD });
    await service.ctx.db.query(`INSERT INTO telegram_chats (user_id, chat_id, language) VALUES ($1, 4001, 'en')`, [user.id]);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        enqueuePersonMessage(service.ctx.db, { userId: user.id }, { kind: 'alert_ledger', eventKey: `burst:${i}`, data: { n: i } }),
      ),
    );
    await tg.waitFor(() => tg.messagesTo(4001).length >= 20, 15_000);
    await new Promise((r) => setTimeout(r, 2500));
    const texts = tg.messagesTo(4001).map((m) => m.text);
    expect(texts.length).toBe(20);
    // Each of the 20 rows sent once: its own Telegram message.
    const sent = await service.ctx.db.query<{ message_id: string }>(`SELECT message_id FROM telegram_messages WHERE user_id = $1 AND status = 'sent'`, [
      user.id,
    ]);
    expect(new Set(sent.rows.map((r) => r.message_id)).size).toBe(20);

    // One poller: exactly one instance polls, and Telegram never saw two getUpdates at once.
    await tg.waitFor(() => [service.ctx.telegram!.polling, other.ctx.telegram!.polling].filter(Boolean).length === 1);
    await new Promise((r) => setTimeout(r, 2500));
    expect([service.ctx.telegram!.polling, other.ctx.telegram!.polling].filter(Boolean).length).toBe(1);
    expect(tg.conflicts).toBe(0);

    // The poller goes away: the other instance takes over and answers /start.
    const [poller, standby] = service.ctx.telegram!.polling ? [service, other] : [other, service];
    if (poller === other) await other.stop();
    else {
      // Stopping the main service would drop the database: cut its poller's connection instead, as a crash would.
      await standby.ctx.db.query(
        `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.objid = ($1::bigint & x'FFFFFFFF'::bigint) AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [7_370_617_347],
      );
    }
    await tg.waitFor(() => poller.ctx.telegram!.polling === false, 15_000);
    if (poller === other) await tg.waitFor(() => standby.ctx.telegram!.polling === true, 15_000);
    else {
      // Its connection cut, the instance lives on and tries for the lock again after a second, as
      // the other does: either may win it. What must hold is that exactly one polls again.
      await tg.waitFor(() => [service, other].filter((s) => s.ctx.telegram!.polling).length === 1, 15_000);
    }
    tg.sendText(4002, '/start');
    await tg.waitFor(() => tg.messagesTo(4002).length === 1, 10_000);
  }, 60_000);
});

describe('Telegram: webhook mode, the token in logs, the bot off', () => {
  it('sets the webhook with a secret token; the route checks it (401 otherwise) and handles the update', async () => {
    const tg = await startFakeTelegram();
    const port = await freePort();
    const service = await startTestService(
      {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/v1/webhook`,
        PORT: String(port),
      },
      { worker: true, listen: true },
    );
    try {
      expect(tg.webhook?.url).toBe(`http://127.0.0.1:${port}/telegram/v1/webhook`);
      expect(tg.webhook?.secretToken).toMatch(/^[A-Za-z0-9]{16,256}$/);
      const noSecret = await service.app.inject({ method: 'POST', url: '/telegram/v1/webhook', payload: { update_id: 1 } });
      expect(noSecret.statusCode).toBe(401);
      const wrong = await service.app.inject({
        method: 'POST',
        url: '/telegram/v1/webhook',
        payload: { update_id: 1 },
        headers: { 'x-telegram-bot-api-secret-token': 'x'.repeat(32) },
      });
      expect(wrong.statusCode).toBe(401);
      tg.sendText(5001, '/start');
      await tg.waitFor(() => tg.messagesTo(5001).length === 1, 15_000);
      // The bot replies while it handles the delivery: the delivery's answer is recorded a moment after.
      await tg.waitFor(() => tg.webhookDeliveries.length > 0, 15_000);
      expect(tg.webhookDeliveries.at(-1)!.status).toBe(200);
      // No polling while a webhook is set.
      await new Promise((r) => setTimeout(r, 1500));
      expect(tg.callsOf('getUpdates').length).toBe(0);
      expect(service.ctx.telegram!.polling).toBe(false);
    } finally {
      await service.close();
      await tg.close();
    }
  }, 60_000);

  it('the bot token never reaches the log, even in a transport error that quotes the URL', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', sink);
    const token = '987654321:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_';
    const bot = new Bot(token, { client: { apiRoot: 'http://127.0.0.1:1' } });
    const err = await bot.api.getMe().catch((e: unknown) => e);
    log.error({ err }, 'Telegram failed');
    log.warn(`calling https://api.telegram.org/bot${token}/getMe`);
    log.info({ url: `https://api.telegram.org/bot${token}/sendMessage`, token });
    const out = lines.join('');
    expect(out).toContain('987654321:***');
    expect(out).not.toContain('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_');
  });

  it('without TELEGRAM_BOT_TOKEN linking answers a clear 503; the screen shows the bot is off', async () => {
    const service = await startTestService();
    try {
      const staff = await staffSession(service, 'off@kassir.test', 'support');
      const res = await asPerson(service.app, staff, 'POST', '/auth/v1/telegram/link');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: 'TG_001', message: 'Telegram is not configured (operator: set TELEGRAM_BOT_TOKEN)' });
      expect((await asPerson(service.app, staff, 'GET', '/auth/v1/telegram')).json()).toMatchObject({ configured: false, linked: false });
    } finally {
      await service.close();
    }
  }, 60_000);
});

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  executorCall,
  executorCompletesPayout,
  executorTakesPayout,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

// Issue 33: nothing in the executor's cabinet gets stuck (a phone message that names no card of
// theirs is linked to one of their own payments of its amount, or set aside with the reason), what
// waits is counted (the cabinet's badges, the console's dashboard), the day counts money received,
// the executor sees a payer's "I paid" and the payouts they paid; the console links a message by
// the merchant's order id. API checks first, then the screens on a 360 px phone.

const SHOTS = screenshotDir('cabinet-stuck');
const PASSWORD = 'correct horse battery';
const PHONE = { width: 360, height: 740 };

let service: TestService;
let browser: Browser;
let origin: string;
let shop: MerchantCredentials;
let otherShop: MerchantCredentials;

interface Trader {
  id: string;
  token: string;
  cards: { id: string; value: string }[];
  phone: string;
  email: string;
}
let anna: Trader;
let boris: Trader;

let amountSeq = 0;
/** Every payment of this file its own amount, so that tests do not meet each other's payments. */
function nextAmount(): number {
  return 2000 + ++amountSeq * 13;
}

async function trader(name: string, cards: number): Promise<Trader> {
  const executor = await createExecutor(service.app, name);
  const made = [];
  for (let i = 0; i < cards; i++) made.push(await createRequisite(service.app, executor.id));
  const device = await executorCall(service.app, executor.token, 'POST', '/devices', { name: 'Redmi 12' });
  expect(device.statusCode, device.body).toBe(201);
  const email = `${name.toLowerCase()}@kassir.test`;
  await adminOk(service.app, 'POST', `/executors/${executor.id}/login`, { email, password: PASSWORD });
  return { ...executor, cards: made, phone: device.json().token, email };
}

/** A payment of `amount` handed to one of `who`'s cards (only theirs are switched on while it is created). */
async function payTo(
  who: Trader,
  amount: number,
  merchant = shop,
  extId = uniqueExtId('stuck'),
): Promise<{ id: string; requisiteId: string; payment_url: string }> {
  await service.ctx.db.query('UPDATE requisites SET is_active = (executor_id = $1)', [who.id]);
  const res = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: extId, amount }, origin);
  expect(res.statusCode, res.body).toBe(200);
  const detail = await adminOk<{ requisite_id: string }>(service.app, 'GET', `/payments/${res.json().id}`);
  return { id: res.json().id, requisiteId: detail.requisite_id, payment_url: res.json().payment_url };
}

function phoneSends(who: Trader, text: string) {
  return service.app.inject({
    method: 'POST',
    url: '/device/v1/messages',
    headers: { authorization: `Bearer ${who.phone}`, 'content-type': 'application/json' },
    payload: { text, sender: '900' },
  });
}

/** A bank SMS on the card ending in `last4` (9999 is no test card's: testCard() ends in a small sequence number and its check digit). */
const sms = (last4: string, amount: number) => `MIR-${last4} 10:05 зачисление ${amount}р Баланс: 10000р`;

async function statusOf(paymentId: string, merchant = shop): Promise<string> {
  return (await signed(service.app, merchant, 'GET', `/v1/payments/${paymentId}`, undefined, origin)).json().status;
}

/** The payer presses "I paid" on the payment page (its JSON form, as the page's script sends it). */
async function payerPressesPaid(paymentUrl: string): Promise<void> {
  const token = paymentUrl.split('/').pop();
  const res = await service.app.inject({
    method: 'POST',
    url: `/pay/${token}/confirm?lang=en`,
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    payload: '{}',
  });
  expect(res.statusCode, res.body).toBe(200);
}

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  shop = await createMerchant(service.app);
  otherShop = await createMerchant(service.app);
  anna = await trader('Anna', 2);
  boris = await trader('Boris', 1);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

describe('messages nobody can get stuck on (API)', () => {
  it('a message naming a card the executor does not have offers their own payments of its amount, never another executor’s', async () => {
    const amount = nextAmount();
    const theirs = await payTo(boris, amount);
    const mine = await payTo(anna, amount);
    const sent = await phoneSends(anna, sms('9999', amount));
    expect(sent.json()).toMatchObject({ status: 'ambiguous', reason: 'none of your requisites ends in 9999' });
    const id = sent.json().message_id;

    const offered = await executorCall(service.app, anna.token, 'GET', `/device-messages/${id}/payments`);
    expect(offered.statusCode, offered.body).toBe(200);
    expect(offered.json().payments).toEqual([
      expect.objectContaining({ id: mine.id, requisite_id: mine.requisiteId, amount: `${amount}.00`, named_in_text: false, payer_confirmed_at: null }),
    ]);
    // Boris's payment of the same amount is not offered; nor does Boris reach Anna's message.
    const foreign = await executorCall(service.app, boris.token, 'GET', `/device-messages/${id}/payments`);
    expect([foreign.statusCode, foreign.json().error]).toEqual([404, 'NOT_FOUND']);
    const foreignAside = await executorCall(service.app, boris.token, 'POST', `/device-messages/${id}/set-aside`, { note: 'mine now' });
    expect([foreignAside.statusCode, foreignAside.json().error]).toEqual([404, 'NOT_FOUND']);
    expect(await statusOf(theirs.id)).toBe('PENDING');
  });

  it('every message that waits is listed as waiting and can be set aside with the reason, an unmatched one with its notification', async () => {
    const amount = nextAmount();
    const card = anna.cards[0]!;
    // No payment of this amount on that card: the notification is kept, unmatched, with the message.
    const unmatched = (await phoneSends(anna, sms(card.value.slice(-4), amount))).json();
    expect(unmatched).toMatchObject({ status: 'unmatched', notification_id: expect.any(String) });
    const unreadable = (await phoneSends(anna, 'Ваш код подтверждения: 4821. Никому не сообщайте')).json();
    expect(unreadable.status).toBe('unreadable');

    const waiting = (await executorCall(service.app, anna.token, 'GET', '/device-messages?status=waiting&limit=100')).json();
    const ids = waiting.messages.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining([unmatched.message_id, unreadable.message_id]));
    expect(waiting.messages.every((m: { status: string }) => ['unmatched', 'ambiguous', 'unreadable'].includes(m.status))).toBe(true);
    expect(waiting.total).toBe(waiting.messages.length);
    const { rows: counted } = await service.ctx.db.query(
      "SELECT count(*)::int AS n FROM device_messages WHERE executor_id = $1 AND status IN ('unmatched', 'ambiguous', 'unreadable')",
      [anna.id],
    );
    expect(waiting.total).toBe(counted[0].n);
    // Boris's list holds none of them.
    const borisList = (await executorCall(service.app, boris.token, 'GET', '/device-messages?status=waiting')).json();
    expect(borisList.messages.map((m: { id: string }) => m.id)).not.toContain(unmatched.message_id);

    const before = (await adminOk<{ queues: { device_messages_waiting: number } }>(service.app, 'GET', '/dashboard')).queues.device_messages_waiting;
    const aside = await executorCall(service.app, anna.token, 'POST', `/device-messages/${unmatched.message_id}/set-aside`, {
      note: 'a friend paid me back',
    });
    expect(aside.statusCode, aside.body).toBe(200);
    expect(aside.json()).toMatchObject({ status: 'resolved', resolved_note: 'a friend paid me back' });
    const { rows } = await service.ctx.db.query('SELECT status, resolved_note FROM notifications WHERE id = $1', [unmatched.notification_id]);
    expect(rows).toEqual([{ status: 'resolved', resolved_note: 'a friend paid me back' }]);
    expect((await adminOk<{ queues: { device_messages_waiting: number } }>(service.app, 'GET', '/dashboard')).queues.device_messages_waiting).toBe(before - 1);
    // Set aside once: not again, and it offers nothing to link to any more.
    const again = await executorCall(service.app, anna.token, 'POST', `/device-messages/${unmatched.message_id}/set-aside`, { note: 'again' });
    expect([again.statusCode, again.json().error]).toEqual([409, 'CONFLICT']);
    expect((await executorCall(service.app, anna.token, 'GET', `/device-messages/${unmatched.message_id}/payments`)).json().payments).toEqual([]);
    const audit = await service.ctx.db.query("SELECT actor FROM audit_log WHERE action = 'device_message.set_aside' AND object_id = $1", [
      unmatched.message_id,
    ]);
    expect(audit.rows).toEqual([{ actor: 'executor:Anna' }]);
  });

  it('the day counts money received (completed payments), the payer’s “I paid” shows on the payment', async () => {
    const before = (await executorCall(service.app, anna.token, 'GET', '/payments/received-today')).json().received;
    const rub = (list: { currency: string; amount: string; count: number }[]) => list.find((r) => r.currency === 'RUB') ?? { amount: '0', count: 0 };
    const amount = nextAmount();
    const paid = await payTo(anna, amount);
    // Handed out, not yet received: the day's figure does not move.
    expect((await executorCall(service.app, anna.token, 'GET', '/payments/received-today')).json().received).toEqual(before);

    await payerPressesPaid(paid.payment_url);
    const pending = (await executorCall(service.app, anna.token, 'GET', '/payments/pending')).json().payments;
    expect(pending.find((p: { id: string }) => p.id === paid.id)).toMatchObject({ payer_confirmed_at: expect.any(String) });
    // Boris does not see Anna's payments.
    expect((await executorCall(service.app, boris.token, 'GET', '/payments/pending')).json().payments.map((p: { id: string }) => p.id)).not.toContain(paid.id);

    const card = anna.cards.find((c) => c.id === paid.requisiteId)!;
    expect((await phoneSends(anna, sms(card.value.slice(-4), amount))).json()).toMatchObject({ matched: true, payment_id: paid.id });
    const after = rub((await executorCall(service.app, anna.token, 'GET', '/payments/received-today')).json().received);
    expect(Number(after.amount) - Number(rub(before).amount)).toBe(amount);
    expect(after.count - rub(before).count).toBe(1);
    const { rows } = await service.ctx.db.query(
      `SELECT coalesce(sum(payer_amount), 0)::text AS amount FROM payments
        WHERE executor_id = $1 AND status = 'COMPLETED' AND completed_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
      [anna.id],
    );
    expect(Number(after.amount)).toBe(Number(rows[0].amount));
  });

  it('the payouts an executor paid are listed with the recipient masked, when, and the proof, which only they download', async () => {
    await adminOk(service.app, 'POST', `/terminals/${shop.terminalId}/adjustments`, { amount: 500, reason: 'funds for payouts' });
    const created = await signed(
      service.app,
      shop,
      'POST',
      '/v1/payouts',
      { ext_id: uniqueExtId('stuck-po'), amount: 1800, method: 'card', requisites: '4111111111111111', holder_name: 'Olga K.' },
      origin,
    );
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id;
    expect((await executorTakesPayout(service.app, anna.token, id)).statusCode).toBe(200);
    expect((await executorCompletesPayout(service.app, anna.token, id)).statusCode).toBe(200);

    const list = (await executorCall(service.app, anna.token, 'GET', '/payouts')).json();
    const paid = list.paid.find((p: { id: string }) => p.id === id);
    expect(paid).toMatchObject({ amount: 1800, status: 'completed', has_proof: true, completed_at: expect.any(String), holder_name: 'Olga K.' });
    expect(paid.requisites).not.toContain('4111111111111111');
    expect(paid.requisites).toMatch(/1111$/);
    expect((await executorCall(service.app, boris.token, 'GET', '/payouts')).json().paid.map((p: { id: string }) => p.id)).not.toContain(id);

    const proof = await executorCall(service.app, anna.token, 'GET', `/payouts/${id}/proof`);
    expect(proof.statusCode).toBe(200);
    expect(proof.headers['content-type']).toBe('image/png');
    expect(proof.headers['content-disposition']).toMatch(/^attachment;/);
    expect(proof.rawPayload.equals(TINY_PNG)).toBe(true);
    const foreign = await executorCall(service.app, boris.token, 'GET', `/payouts/${id}/proof`);
    expect([foreign.statusCode, foreign.json().error]).toEqual([404, 'PAY_001']);
  });

  it('the operator links a message by the merchant’s order id; an order id two merchants use asks for the merchant', async () => {
    const amount = nextAmount();
    const extId = uniqueExtId('both');
    // Two merchants, one order id, both handed to Anna's cards (one each): the message names neither card.
    await service.ctx.db.query('UPDATE requisites SET is_active = (id = $1)', [anna.cards[0]!.id]);
    const first = (await signed(service.app, shop, 'POST', '/v1/payments', { ext_id: extId, amount }, origin)).json();
    await service.ctx.db.query('UPDATE requisites SET is_active = (id = $1)', [anna.cards[1]!.id]);
    const second = (await signed(service.app, otherShop, 'POST', '/v1/payments', { ext_id: extId, amount }, origin)).json();
    const message = (await phoneSends(anna, `Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам ${amount}.00 RUB`)).json();
    expect(message.status).toBe('ambiguous');

    const ambiguous = await service.app.inject({
      method: 'POST',
      url: `/admin/v1/device-messages/${message.message_id}/link`,
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json', 'idempotency-key': `k-${extId}-1` },
      payload: { ext_id: extId },
    });
    expect([ambiguous.statusCode, ambiguous.json().error]).toEqual([400, 'VALIDATION']);
    expect(ambiguous.json().message).toMatch(/names 2 payments .*give the merchant or terminal too, or the payment's id/);
    expect(
      ambiguous
        .json()
        .data.payments.map((p: { id: string }) => p.id)
        .sort(),
    ).toEqual([first.id, second.id].sort());
    expect(await statusOf(first.id)).toBe('PENDING');

    const unknown = await service.app.inject({
      method: 'POST',
      url: `/admin/v1/device-messages/${message.message_id}/link`,
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json', 'idempotency-key': `k-${extId}-2` },
      payload: { ext_id: 'no-such-order' },
    });
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'PAY_006']);
    const both = await service.app.inject({
      method: 'POST',
      url: `/admin/v1/device-messages/${message.message_id}/link`,
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json', 'idempotency-key': `k-${extId}-3` },
      payload: { ext_id: extId, payment_id: first.id },
    });
    expect([both.statusCode, both.json().error]).toEqual([400, 'VALIDATION']);

    const linked = await service.app.inject({
      method: 'POST',
      url: `/admin/v1/device-messages/${message.message_id}/link`,
      headers: { authorization: 'Bearer test-admin-token', 'content-type': 'application/json', 'idempotency-key': `k-${extId}-4` },
      payload: { ext_id: extId, merchant_id: otherShop.merchantId },
    });
    expect(linked.statusCode, linked.body).toBe(200);
    expect(linked.json()).toMatchObject({ status: 'resolved', payment_id: second.id });
    expect(await statusOf(second.id, otherShop)).toBe('COMPLETED');
    expect(await statusOf(first.id)).toBe('PENDING');
    await expectLedgerOk(service.app);
  });
});

/** The executor signed in to the cabinet on a 360 px phone. */
async function openCabinet(who: Trader): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await page.goto(`${origin}/cabinet`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Shift' }).waitFor();
  return { page, problems };
}

/** Nothing is wider than the phone: no sideways scrolling. */
async function fitsThePhone(page: Page): Promise<void> {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
}

describe('the cabinet on a 360 px phone', () => {
  it('a message naming no card of theirs: the badge counts it, “Which payment” offers their payment of its amount, it is set aside with the reason', async () => {
    const amount = nextAmount();
    const mine = await payTo(anna, amount);
    const sent = (await phoneSends(anna, sms('9999', amount))).json();
    expect(sent.status).toBe('ambiguous');
    const waitingNow = async () => (await executorCall(service.app, anna.token, 'GET', '/device-messages?status=waiting')).json().total as number;
    const count = await waitingNow();
    expect(count).toBeGreaterThan(0);

    const { page, problems } = await openCabinet(anna);
    const nav = page.getByRole('navigation', { name: 'cabinet' });
    await nav.getByRole('link', { name: `Messages (${count})` }).waitFor();
    await nav.getByRole('link', { name: /^Messages/ }).click();
    const card = page.getByLabel(`message ${sent.message_id}`);
    await card.getByRole('combobox', { name: 'Which payment' }).click();
    await page.getByRole('option', { name: new RegExp(`^${amount.toLocaleString('en-US')}\\.00\\sRUB`) }).waitFor();
    expect(await page.getByRole('option').count()).toBe(1);
    await page.screenshot({ path: `${SHOTS}/cabinet-which-payment.png` });
    await page.keyboard.press('Escape');
    await fitsThePhone(page);

    await card.getByRole('button', { name: 'Not a payment — set aside' }).click();
    await card.getByLabel('Why').fill('sent by mistake, returned');
    await card.getByRole('button', { name: 'Set aside', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    const { rows } = await service.ctx.db.query('SELECT status, resolved_note FROM device_messages WHERE id = $1', [sent.message_id]);
    expect(rows).toEqual([{ status: 'resolved', resolved_note: 'sent by mistake, returned' }]);
    expect(await statusOf(mine.id)).toBe('PENDING');
    // The badge refreshes with the list: one fewer waits.
    const left = await waitingNow();
    expect(left).toBe(count - 1);
    await nav.getByRole('link', { name: left > 0 ? `Messages (${left})` : 'Messages', exact: true }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a message the phone could not read waits too, and is linked to the payment picked by amount', async () => {
    const amount = nextAmount();
    const mine = await payTo(anna, amount);
    const another = await payTo(anna, nextAmount());
    // A text with neither amount nor card: every payment waiting on Anna's cards is offered, hers only.
    const sent = (await phoneSends(anna, 'Вам пришёл перевод. Подробности в приложении банка')).json();
    expect(sent.status).toBe('unreadable');
    const offered = (await executorCall(service.app, anna.token, 'GET', `/device-messages/${sent.message_id}/payments`)).json().payments;
    const pending = (await executorCall(service.app, anna.token, 'GET', '/payments/pending')).json().payments;
    expect(offered.map((p: { id: string }) => p.id).sort()).toEqual(pending.map((p: { id: string }) => p.id).sort());
    expect(offered.length).toBeGreaterThan(1);
    const { page, problems } = await openCabinet(anna);
    await page
      .getByRole('navigation', { name: 'cabinet' })
      .getByRole('link', { name: /^Messages/ })
      .click();
    const card = page.getByLabel(`message ${sent.message_id}`);
    await card.getByRole('combobox', { name: 'Which payment' }).click();
    await page.getByRole('option', { name: new RegExp(`^${amount.toLocaleString('en-US')}\\.00\\sRUB`) }).click();
    await card.getByRole('button', { name: 'Link to payment' }).click();
    await card.waitFor({ state: 'detached' });
    expect(await statusOf(mine.id)).toBe('COMPLETED');
    expect(await statusOf(another.id)).toBe('PENDING');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('today: the money received, and a payer’s “I paid” marked on the payment with a badge on the tab', async () => {
    const amount = nextAmount();
    const waiting = await payTo(anna, amount);
    await payerPressesPaid(waiting.payment_url);
    const received = (await executorCall(service.app, anna.token, 'GET', '/payments/received-today')).json().received;
    const rub = received.find((r: { currency: string }) => r.currency === 'RUB');
    expect(rub).toBeDefined();

    const { page, problems } = await openCabinet(anna);
    const today = page.getByLabel('Received today');
    const shown = Number(rub.amount).toLocaleString('en-US', { minimumFractionDigits: 2 });
    await today.getByText(`${shown} RUB`).waitFor();
    await today.getByText(`${rub.count} payments`).waitFor();
    const payment = page.getByLabel(`payment ${waiting.id}`);
    await payment.getByText('The payer pressed “I paid”: check your bank app').waitFor();
    await page
      .getByRole('navigation', { name: 'cabinet' })
      .getByRole('link', { name: /^Today \(\d+\)$/ })
      .waitFor();
    await fitsThePhone(page);
    await page.screenshot({ path: `${SHOTS}/cabinet-today-received.png` });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('payouts: the Paid tab lists what they paid, masked, when, with the proof to download', async () => {
    const { page, problems } = await openCabinet(anna);
    const paid = (await executorCall(service.app, anna.token, 'GET', '/payouts')).json().paid as { id: string; requisites: string }[];
    expect(paid.length).toBeGreaterThan(0);
    await page
      .getByRole('navigation', { name: 'cabinet' })
      .getByRole('link', { name: /^Payouts/ })
      .click();
    await page.getByRole('tab', { name: 'Paid' }).click();
    const card = page.getByLabel(`paid payout ${paid[0]!.id}`);
    await card.getByText('1,800 RUB').waitFor();
    await card.getByText(paid[0]!.requisites, { exact: false }).waitFor();
    expect(await card.getByText('4111111111111111').count()).toBe(0);
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('link', { name: 'Proof' }).click()]);
    const path = await download.path();
    const { readFile } = await import('node:fs/promises');
    expect((await readFile(path)).equals(TINY_PNG)).toBe(true);
    await fitsThePhone(page);
    await page.screenshot({ path: `${SHOTS}/cabinet-payouts-paid.png` });
    // In Russian: the tab, the proof, the day's takings.
    await page.getByRole('banner').getByText('Русский').click();
    await page.getByRole('tab', { name: 'Оплаченные' }).waitFor();
    await card.getByRole('link', { name: 'Подтверждение' }).waitFor();
    await card.getByText(/^1\s800\s₽$/).waitFor();
    await page
      .getByRole('navigation', { name: 'cabinet' })
      .getByRole('link', { name: /^Сегодня/ })
      .click();
    await page.getByLabel('Получено сегодня').waitFor();
    await fitsThePhone(page);
    await page.screenshot({ path: `${SHOTS}/cabinet-today-received-ru.png` });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the console on a 360 px phone', () => {
  it('the dashboard counts phone messages waiting for people; one is linked by the order id, naming the merchant when two use it', async () => {
    const amount = nextAmount();
    const extId = uniqueExtId('phone');
    await service.ctx.db.query('UPDATE requisites SET is_active = (id = $1)', [anna.cards[0]!.id]);
    const first = (await signed(service.app, shop, 'POST', '/v1/payments', { ext_id: extId, amount }, origin)).json();
    await service.ctx.db.query('UPDATE requisites SET is_active = (id = $1)', [anna.cards[1]!.id]);
    const second = (await signed(service.app, otherShop, 'POST', '/v1/payments', { ext_id: extId, amount }, origin)).json();
    const message = (await phoneSends(anna, `Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам ${amount}.00 RUB`)).json();
    expect(message.status).toBe('ambiguous');
    const waiting = (await adminOk<{ queues: { device_messages_waiting: number } }>(service.app, 'GET', '/dashboard')).queues.device_messages_waiting;
    const { rows } = await service.ctx.db.query("SELECT count(*)::int AS n FROM device_messages WHERE status IN ('unmatched', 'ambiguous', 'unreadable')");
    expect(waiting).toBe(rows[0].n);

    const staff = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: 'desk@kassir.test', role: 'support', password: PASSWORD });
    const { page, problems } = await watchedPage(browser, { viewport: PHONE, isMobile: true, hasTouch: true });
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill(staff.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('link', { name: `Phone messages: ${waiting}` }).click();
    const card = page.getByLabel(`message ${message.message_id}`);
    await card.getByLabel('Payment id or order id (ext_id)').fill(extId);
    await card.getByRole('button', { name: 'Link to payment' }).click();
    await card.getByText(/names 2 payments/).waitFor();
    await card.getByRole('combobox', { name: 'Several merchants have this order id: whose is it?' }).click();
    const names = (await adminOk<{ name: string }>(service.app, 'GET', `/merchants/${otherShop.merchantId}`)).name;
    await page.getByRole('option', { name: names }).click();
    await page.screenshot({ path: `${SHOTS}/console-link-by-order.png` });
    await card.getByRole('button', { name: 'Link to payment' }).click();
    await card.waitFor({ state: 'detached' });
    expect(await statusOf(second.id, otherShop)).toBe('COMPLETED');
    expect(await statusOf(first.id)).toBe('PENDING');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

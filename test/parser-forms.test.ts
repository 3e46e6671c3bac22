/**
 * Teaching Kassir a new bank message form in the console (issue 34 item 3; docs/devices.md
 * "Teaching a new message form"), in a real browser against the whole service: a message in a form
 * no parser knows arrives from an executor's phone, support links it to its payment and teaches
 * its form; the next message in that form completes its payment by itself. A form that would
 * credit a negative corpus line is refused, with the line shown. test/parser-forms.api.test.ts
 * walks the API (versions, audit, roles).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  executorCall,
  expectLedgerOk,
  type MerchantCredentials,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

const PASSWORD = 'correct horse battery';
let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let last4: string;
let deviceToken: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Shop' });
  const executor = await createExecutor(service.app, 'Trader');
  const card = await createRequisite(service.app, executor.id);
  last4 = card.value.slice(-4);
  const device = await executorCall(service.app, executor.token, 'POST', '/devices', { name: 'Redmi' });
  expect(device.statusCode, device.body).toBe(201);
  deviceToken = device.json().token;
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

async function phoneSends(text: string): Promise<{ message_id: string; status: string; matched: boolean; payment_id: string | null }> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/device/v1/messages',
    headers: { authorization: `Bearer ${deviceToken}`, 'content-type': 'application/json' },
    payload: { text, received_at: new Date().toISOString() },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function pay(amount: number): Promise<string> {
  const created = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId('teach'), amount }, origin);
  expect(created.statusCode, created.body).toBe(200);
  return created.json().id;
}

const statusOf = async (id: string) => (await signed(service.app, merchant, 'GET', `/v1/payments/${id}`, undefined, origin)).json().status;

/** Selects `part` of the message text on the teaching card and marks it as `hole` (the button's name). */
async function mark(scope: ReturnType<Page['locator']>, part: string, hole: string): Promise<void> {
  const text = scope.getByLabel('Message text');
  const value = await text.inputValue();
  const start = value.indexOf(part);
  expect(start, `"${part}" in "${value}"`).toBeGreaterThanOrEqual(0);
  await text.evaluate((el, [a, b]) => (el as HTMLTextAreaElement).setSelectionRange(a!, b!), [start, start + part.length]);
  await scope.getByRole('button', { name: hole, exact: true }).click();
}

describe('teaching a message form in the console', () => {
  it('support links a message no parser read and teaches its form; the next message in that form completes its payment by itself', async () => {
    const email = 'support.teach@kassir.test';
    await adminOk(service.app, 'POST', '/users', { email, role: 'support', password: PASSWORD });
    const firstAmount = 1500;
    const first = await pay(firstAmount);
    const text = `VOSTOK 12:34 ДЕНЬГИ ПРИШЛИ НА ${last4}: 1 500,00 (АННА К.)`;
    const unread = await phoneSends(text);
    expect(unread).toMatchObject({ status: 'unreadable', matched: false });

    const { page, problems } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } });
    await signIn(page, email);
    await page.goto(`${origin}/console/device-messages?status=unreadable`);
    const card = page.getByLabel(`message ${unread.message_id}`);
    await card.getByText('ДЕНЬГИ ПРИШЛИ').waitFor();
    await card.getByLabel('Payment id').fill(first);
    await card.getByRole('button', { name: 'Link to payment' }).click();
    expect(
      await (async () => {
        await card.waitFor({ state: 'detached' });
        return statusOf(first);
      })(),
    ).toBe('COMPLETED');

    // The screen offers to teach the form, prefilled: the linked payment's amount, the card's digits, the time.
    const teach = page.getByLabel('Teach this form');
    await teach.getByLabel('Message text').waitFor();
    const marks = teach.getByLabel('Marked parts');
    await marks.getByText('Amount: 1 500,00').waitFor();
    await marks.getByText(`Card: ${last4}`).waitFor();
    await marks.getByText('Time: 12:34').waitFor();
    // The payer is selected by hand.
    await mark(teach, 'АННА К.', 'Payer');
    await marks.getByText('Payer: АННА К.').waitFor();
    expect(await teach.getByLabel('Template').inputValue()).toBe('VOSTOK {time} ДЕНЬГИ ПРИШЛИ НА {card}: {amount} ({payer})');
    await teach.getByLabel('Form name').fill('Vostok SMS');
    await teach.getByLabel('Bank code').fill('vostok');
    await teach.getByRole('button', { name: 'Check and put live' }).click();
    await teach.getByText('The form is live').waitFor();
    await teach.getByText(/Kept messages it now reads: 1/).waitFor();

    // The next message in that form completes its payment with no one looking.
    const second = await pay(2750);
    const read = await phoneSends(`VOSTOK 18:02 ДЕНЬГИ ПРИШЛИ НА ${last4}: 2 750,00 (ПЁТР С.)`);
    expect(read).toMatchObject({ matched: true, payment_id: second, status: 'matched' });
    expect(await statusOf(second)).toBe('COMPLETED');
    await expectLedgerOk(service.app);
    const forms = await adminOk<{ forms: { name: string; status: string; created_by: string }[] }>(service.app, 'GET', '/parser-forms');
    expect(forms.forms).toEqual([expect.objectContaining({ name: 'Vostok SMS', status: 'live', created_by: email })]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('on a phone: a form that would credit a negative corpus line is refused, and the line is shown', async () => {
    const email = 'support.refused@kassir.test';
    await adminOk(service.app, 'POST', '/users', { email, role: 'support', password: PASSWORD });
    // MKB's cashback SMS: no payer's money, a negative line of corpus/mkb.tsv.
    const cashback = await phoneSends(
      'MKB: 02.07.18 Вам начислен cashback 12.50 RUB по карте *3418. Баланс 100.00 RUB. Расплачивайтесь картой и зарабатывайте на покупках.',
    );
    expect(cashback.status).toBe('unreadable');

    const { page, problems } = await watchedPage(browser, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await signIn(page, email);
    await page.goto(`${origin}/console/device-messages?status=unreadable`);
    const card = page.getByLabel(`message ${cashback.message_id}`);
    await card.getByRole('button', { name: 'Teach this form' }).click();
    const marks = card.getByLabel('Marked parts');
    await marks.getByText('Card: *3418').waitFor();
    await mark(card, '12.50', 'Amount');
    await mark(card, 'Расплачивайтесь картой и зарабатывайте на покупках.', 'Any text');
    // The template follows the marks once the page has drawn them (not at the click's return).
    await expect
      .poll(() => card.getByLabel('Template').inputValue())
      .toBe('MKB: {date} Вам начислен cashback {amount} RUB по карте {card}. Баланс {balance} RUB. {any}');
    await card.getByLabel('Form name').fill('MKB cashback');
    await card.getByLabel('Bank code').fill('mkb');
    await card.getByRole('button', { name: 'Check and put live' }).click();
    const refused = card.getByRole('alert').filter({ hasText: 'Refused: the form would read these lines wrongly' });
    await refused.waitFor();
    const line = refused.getByLabel('offending line').filter({ hasText: /corpus\/mkb\.tsv:\d+/ });
    await line.getByText('Вам начислен cashback 1678.26 RUB по карте *3418').waitFor();
    await line.getByText(/a text that must not be read, read as money received \(the form reads 1678\.26 · 3418\)/).waitFor();
    await card.getByText('Saved as draft version 1').waitFor();
    const forms = await adminOk<{ forms: { name: string; status: string }[] }>(service.app, 'GET', '/parser-forms');
    expect(forms.forms.find((f) => f.name === 'MKB cashback')).toMatchObject({ status: 'draft' });
    // The message itself is still waiting: nothing reads it.
    expect(
      (await phoneSends('MKB: 03.07.18 Вам начислен cashback 9.00 RUB по карте *3418. Баланс 109.00 RUB. Расплачивайтесь картой и зарабатывайте на покупках.'))
        .status,
    ).toBe('unreadable');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

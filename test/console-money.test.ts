/**
 * Issue 30, items 1 and 5, in a real browser against the built console (test/browser.ts): a
 * money form sends one Idempotency-Key per intended action and is disabled while its request
 * runs, so a double click moves money once; cancelling a payment and deciding a dispute ask for a
 * confirmation that names what will happen, and cancel and reject ask a reason that is stored.
 */
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
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
let executor: { id: string; token: string };

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Shop' });
  executor = await createExecutor(service.app, 'Trader', { deposit: 1000 });
  await createRequisite(service.app, executor.id);
  // Two-factor is beside the point here: the people of these tests sign in with a password.
  await adminOk(service.app, 'PUT', '/two-factor-roles', { roles: [] });
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
async function person(role: string): Promise<{ email: string }> {
  return adminOk(service.app, 'POST', '/users', { email: `money.${role}.${++seq}@kassir.test`, role, password: PASSWORD });
}

function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${origin}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

/** Confirms it is the person (POST /auth/v1/confirm) from the page, as the dialog would: what follows is inside the confirmation window. */
async function confirmFromPage(page: Page): Promise<void> {
  const status = await page.evaluate(async (password) => {
    const me = await (await fetch('/auth/v1/me')).json();
    const res = await fetch('/auth/v1/confirm', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrf_token },
      body: JSON.stringify({ password }),
    });
    return res.status;
  }, PASSWORD);
  expect(status).toBe(200);
}

/** Every POST the page sends to a path matching `path`, with its answer's status once it comes. */
function watchPosts(page: Page, path: RegExp): { key: string | undefined; status: Promise<number | undefined> }[] {
  const seen: { key: string | undefined; status: Promise<number | undefined> }[] = [];
  page.on('request', (request: Request) => {
    if (request.method() !== 'POST' || !path.test(new URL(request.url()).pathname)) return;
    seen.push({ key: request.headers()['idempotency-key'], status: request.response().then((r) => r?.status()) });
  });
  return seen;
}

async function postings(kind: string, memo: string): Promise<number> {
  const { rows } = await service.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = $1 AND memo = $2', [kind, memo]);
  return rows[0]!.n;
}

/** A cancelled payment the merchant disputes, claiming `claimed`. */
async function disputed(amount: number, claimed: number): Promise<{ id: string; ext_id: string }> {
  const payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('dispute'), amount })).json();
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`, { reason: 'the payer gave up' });
  const opened = await merchantCall('POST', `/v1/payments/${payment.id}/dispute`, { amount: claimed, comment: 'The payer paid' });
  expect(opened.statusCode, opened.body).toBe(200);
  return payment;
}

describe('money forms in the console (issue 30, item 1)', () => {
  it('a double click on "Adjust deposit" inside the confirmation window posts once, with one key', async () => {
    const finance = await person('finance');
    const { page, problems } = await open();
    await signIn(page, finance.email);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await confirmFromPage(page);
    const sent = watchPosts(page, /\/adjustments$/);
    const memo = uniqueExtId('double-click');
    await page.getByLabel('USDT (+ credit, − debit)').fill('1');
    await page.getByLabel('Reason').fill(memo);
    await page.getByRole('button', { name: 'Adjust deposit' }).dblclick();
    await expect.poll(() => postings('executor_adjustment', memo)).toBe(1);
    await expect.poll(async () => (await Promise.all(sent.map((s) => s.status))).every((s) => s !== undefined)).toBe(true);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sent.map((s) => s.key)).size).toBe(1);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(await Promise.all(sent.map((s) => s.status))).toEqual(sent.map(() => 201));
    // A second, deliberate adjustment with the same values is a new action: a new key, a second posting.
    await expect.poll(() => page.getByLabel('USDT (+ credit, − debit)').inputValue()).toBe('');
    await page.getByLabel('USDT (+ credit, − debit)').fill('1');
    await page.getByRole('button', { name: 'Adjust deposit' }).click();
    await expect.poll(() => postings('executor_adjustment', memo)).toBe(2);
    expect(new Set(sent.map((s) => s.key)).size).toBe(2);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a double click on a payout’s "Complete" sends one action with one key, and no error is shown', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 500, reason: 'top-up for payouts' });
    const created = await merchantCall('POST', '/v1/payouts', {
      ext_id: uniqueExtId('po'),
      amount: 3000,
      method: 'card',
      requisites: '4111111111111111',
      holder_name: 'Ivan Petrov',
    });
    expect(created.statusCode, created.body).toBe(200);
    const payout = created.json();
    const finance = await person('finance');
    const { page, problems } = await open();
    await signIn(page, finance.email);
    await confirmFromPage(page);
    const sent = watchPosts(page, /\/complete$/);
    await page.getByRole('navigation').getByRole('link', { name: 'Payouts' }).click();
    const row = page.getByRole('row', { name: `payout ${payout.ext_id}` });
    await row.getByRole('button', { name: 'Complete' }).dblclick();
    await row.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payouts/${payout.id}`)).json().status).toBe('completed');
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sent.map((s) => s.key)).size).toBe(1);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(await Promise.all(sent.map((s) => s.status))).toEqual(sent.map(() => 200));
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('irreversible actions ask first (issue 30, item 5)', () => {
  it('cancelling a payment opens a confirmation naming it; it cannot be sent without a reason; the reason is stored and shown', async () => {
    const payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('cancel-me'), amount: 2100 })).json();
    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    const sent = watchPosts(page, /\/cancel$/);
    await page.goto(`${origin}/console/payments/${payment.id}`);
    await page.getByRole('button', { name: 'Cancel payment' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this payment?' });
    await dialog.getByText(payment.ext_id).waitFor();
    await dialog
      .getByText(/2[\s,  ]?100/)
      .first()
      .waitFor();
    const confirm = dialog.getByRole('button', { name: 'Cancel payment' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Reason').fill('   ');
    expect(await confirm.isDisabled()).toBe(true);
    expect(sent).toEqual([]);
    expect((await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('PENDING');
    await dialog.getByLabel('Reason').fill('The payer asked to stop: wrong amount');
    await confirm.click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
    expect(sent.map((s) => s.key)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    // Shown on the payment and in its timeline; stored on the payment and in the audit row.
    await page.getByText('The payer asked to stop: wrong amount').first().waitFor();
    const detail = await adminOk<{ cancel_reason: string; cancel_note: string }>(service.app, 'GET', `/payments/${payment.id}`);
    expect(detail).toMatchObject({ cancel_reason: 'manual', cancel_note: 'The payer asked to stop: wrong amount' });
    const { rows } = await service.ctx.db.query(`SELECT actor, after FROM audit_log WHERE action = 'payment.cancel' AND object_id = $1`, [payment.id]);
    expect(rows).toEqual([{ actor: support.email, after: expect.objectContaining({ status: 'CANCELLED', reason: 'The payer asked to stop: wrong amount' }) }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('R opens the rejection dialog instead of rejecting; the reason is required, stored on the dispute and shown', async () => {
    const payment = await disputed(1300, 1300);
    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.goto(`${origin}/console/disputes`);
    await page.getByRole('button', { name: `dispute ${payment.ext_id}` }).click();
    await page.getByText(payment.ext_id, { exact: false }).first().waitFor();
    await page.keyboard.press('r');
    const dialog = page.getByRole('dialog', { name: 'Reject this dispute?' });
    await dialog.getByText(payment.ext_id).waitFor();
    await dialog.getByText(/Cancelled/).waitFor();
    const confirm = dialog.getByRole('button', { name: 'Reject' });
    expect(await confirm.isDisabled()).toBe(true);
    expect((await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('DISPUTE');
    await dialog.getByLabel('Reason').fill('The receipt is for another card');
    await page.screenshot({ path: `${screenshotDir('console-money')}/console-dispute-reject.png` });
    await confirm.click();
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
    const card = await adminOk<{ disputes: { payment: { id: string }; status: string; reason: string | null }[] }>(
      service.app,
      'GET',
      '/disputes?status=rejected',
    );
    expect(card.disputes.find((d) => d.payment.id === payment.id)).toMatchObject({ status: 'rejected', decision_reason: 'The receipt is for another card' });
    await page.goto(`${origin}/console/disputes?status=rejected`);
    await page.getByRole('button', { name: `dispute ${payment.ext_id}` }).click();
    await page.getByText('The receipt is for another card').first().waitFor();
    const { rows } = await service.ctx.db.query(`SELECT after FROM audit_log WHERE action = 'dispute.reject' AND object_id = $1`, [payment.id]);
    expect(rows).toEqual([{ after: expect.objectContaining({ reason: 'The receipt is for another card' }) }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('A opens the approval dialog naming the amount received and the status it leads to; only its button approves', async () => {
    const payment = await disputed(1450, 1400);
    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.goto(`${origin}/console/disputes`);
    await page.getByRole('button', { name: `dispute ${payment.ext_id}` }).click();
    await expect.poll(() => page.getByLabel('Amount received').inputValue()).toBe('1400');
    await page.keyboard.press('a');
    const dialog = page.getByRole('dialog', { name: 'Approve this dispute?' });
    await dialog.getByText(payment.ext_id).waitFor();
    await dialog.getByText('Completed on appeal').waitFor();
    await dialog
      .getByText(/1[\s,  ]?400/)
      .first()
      .waitFor();
    // Closing the dialog decides nothing.
    await dialog.getByRole('button', { name: 'Back' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('DISPUTE');
    // The order amount received: COMPLETED.
    await page.getByLabel('Amount received').fill('1450');
    await page.getByRole('button', { name: 'Approve (A)' }).click();
    await dialog.getByText('Completed', { exact: true }).waitFor();
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('COMPLETED');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

function open(width = 1280, height = 860): Promise<{ page: Page; problems: string[] }> {
  return watchedPage(browser, { viewport: { width, height } });
}

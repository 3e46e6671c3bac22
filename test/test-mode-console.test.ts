import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  createTerminal,
  enrolTwoFactor,
  type MerchantCredentials,
  personSignIn,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  TINY_PNG,
  testCard,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

// Test mode in the browser (issue 33 items 4 and 8): the operator makes a test terminal, the
// merchant tries its integration on it from the cabinet — the test console's payment link, a test
// payment completed, expired, disputed with a receipt and decided on a click, payouts created and
// settled — and the TEST badge marks test objects in the cabinet and the console.
const SHOTS = screenshotDir('test-mode');
const PASSWORD = 'correct horse battery';

let service: TestService;
let browser: Browser;
let origin: string;
let live: MerchantCredentials;
let test: MerchantCredentials;
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
let email: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { worker: true }));
  browser = await launchChromium(inject('chromiumPath'));
  hooks = await webhookReceiver();
  await setRate(service.app, 'RUB', 95.5);
  live = await createMerchant(service.app);
  const sandbox = await createTerminal(service.app, live.merchantId, { name: 'Sandbox', is_test: true });
  test = { ...live, terminalId: sandbox.id, apiKey: sandbox.api_key };
  const executor = await createExecutor(service.app);
  await createRequisite(service.app, executor.id);
  email = `dev.${Date.now()}@shop.test`;
  await adminOk(service.app, 'POST', `/merchants/${live.merchantId}/users`, { email, password: PASSWORD });
});
afterAll(async () => {
  await browser?.close();
  hooks?.server.close();
  await service?.close();
});

async function testPayment(amount: number): Promise<{ id: string; ext_id: string }> {
  const res = await signed(service.app, test, 'POST', '/v1/payments', { ext_id: uniqueExtId('try'), amount, notify_url: hooks.url }, origin);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function webhookFor(id: string, event: string) {
  return until(() => hooks.received.find((r) => r.body.includes(id) && JSON.parse(r.body).event === event), 20_000, 100, `${event} for ${id}`);
}

async function signIn(viewport = { width: 1280, height: 860 }): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport });
  await page.goto(`${origin}/merchant`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Transfer between terminals' }).waitFor();
  return { page, problems };
}

describe('test mode in the merchant cabinet', () => {
  it("the test console's payment_url is a link; a test payment is marked TEST and completed on a click, its webhook delivered", async () => {
    const { page, problems } = await signIn();
    await page.getByLabel('terminal Sandbox').getByText('TEST', { exact: true }).waitFor();
    expect(await page.getByLabel('terminal Main').getByText('TEST', { exact: true }).count()).toBe(0);

    await page.getByRole('navigation').getByRole('link', { name: 'Test console' }).click();
    await page.getByLabel('X-Identity (API key)').fill(test.apiKey);
    await page.getByLabel('Secret key').fill(test.secretKey);
    await page.getByLabel('Amount').fill('1750');
    await page.getByLabel('notify_url').fill(hooks.url);
    await page.getByRole('button', { name: 'Create a test payment' }).click();
    await page.getByLabel('response').getByText('Response · 200').waitFor();
    const link = page.getByLabel('response').getByRole('link', { name: new RegExp(`^${origin}/pay/`) });
    const href = (await link.getAttribute('href'))!;
    const body = JSON.parse((await page.getByLabel('response').locator('pre, code').last().textContent()) ?? '{}');
    expect(href).toBe(body.payment_url);
    expect(body.requisites.value).toMatch(/^400000/);
    // The payer's page says it is a test payment.
    const payPage = await page.context().newPage();
    await payPage.goto(href);
    await payPage
      .getByRole('note')
      .getByText(/^(TEST: a test payment|ТЕСТ: тестовый платёж)/)
      .waitFor();
    await payPage.close();
    await page.screenshot({ path: `${SHOTS}/merchant-test-console-link.png`, fullPage: true });

    await page.getByRole('navigation').getByRole('link', { name: 'Payments' }).click();
    await page.getByLabel('Search').fill(body.ext_id);
    const row = page.getByRole('row').filter({ hasText: body.ext_id });
    await row.getByText('TEST', { exact: true }).waitFor();
    await row.getByRole('link', { name: body.ext_id }).click();
    const panel = page.getByLabel('Test mode');
    await panel.getByRole('button', { name: 'Complete as paid' }).click();
    await page.getByText('Completed', { exact: true }).first().waitFor();
    await panel.getByText('Nothing to try in this status.').waitFor();
    const hook = await webhookFor(body.id, 'payment.completed');
    expect(JSON.parse(hook.body).data.status).toBe('COMPLETED');
    await page.screenshot({ path: `${SHOTS}/merchant-test-payment.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('on a phone, in Russian: expires a test payment, opens its dispute with a receipt file and approves it', async () => {
    const payment = await testPayment(1888);
    const { page, problems } = await signIn({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('navigation').getByText('Русский').click();
    await page.goto(`${origin}/merchant/payments/${payment.id}`);
    const panel = page.getByLabel('Тестовый режим');
    await panel.getByRole('button', { name: 'Истечь срок' }).click();
    await page.getByRole('heading', { name: 'Открыть спор' }).waitFor();
    await webhookFor(payment.id, 'payment.cancelled');
    await page.getByLabel('Комментарий').fill('Оплатил в 10:07');
    await page.locator('input[type="file"]').setInputFiles({ name: 'receipt.png', mimeType: 'image/png', buffer: TINY_PNG });
    await page.screenshot({ path: `${SHOTS}/merchant-dispute-phone-ru.png`, fullPage: true });
    await page.getByRole('button', { name: 'Открыть спор' }).click();
    await panel.getByRole('button', { name: 'Одобрить спор' }).click();
    await webhookFor(payment.id, 'payment.completed');
    const stored = await adminOk<{ status: string }>(service.app, 'GET', `/payments/${payment.id}`);
    expect(stored.status).toBe('COMPLETED');
    const { rows } = await service.ctx.db.query<{ comment: string; receipt_id: string | null }>(
      'SELECT comment, receipt_id FROM disputes WHERE payment_id = $1',
      [payment.id],
    );
    expect(rows).toEqual([{ comment: 'Оплатил в 10:07', receipt_id: expect.any(String) }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('creates payouts from the cabinet (a double click sends one), a live one reserved, a test one completed on a click', async () => {
    await adminOk(service.app, 'POST', `/terminals/${live.terminalId}/adjustments`, { amount: 100, reason: 'funds' });
    const { page, problems } = await signIn();
    await page.getByRole('navigation').getByRole('link', { name: 'Payouts' }).click();
    const create = async (terminal: string, extId: string) => {
      await page.getByRole('combobox', { name: 'Terminal' }).click();
      await page.getByRole('option', { name: terminal }).click();
      await page.getByLabel('Your payout id (ext_id)').fill(extId);
      await page.getByLabel('Amount, RUB').fill('950');
      await page.getByLabel('Card number').fill(testCard());
      await page.getByLabel("Recipient's name").fill('Ivan I.');
      await page.getByLabel('notify_url').fill(hooks.url);
      await page.getByRole('button', { name: 'Create the payout' }).dblclick();
      await page.getByText('Payout created.').waitFor();
      await page.getByRole('row').filter({ hasText: extId }).waitFor();
    };
    const liveId = uniqueExtId('out');
    await create('Main', liveId);
    const testId = uniqueExtId('try-out');
    await create('Sandbox · TEST', testId);
    const stored = await adminOk<{ payouts: { ext_id: string; is_test: boolean; status: string; id: string }[] }>(service.app, 'GET', '/payouts');
    expect(stored.payouts.filter((p) => p.ext_id === liveId)).toHaveLength(1);
    expect(stored.payouts.filter((p) => p.ext_id === testId)).toHaveLength(1);
    expect(stored.payouts.find((p) => p.ext_id === liveId)?.is_test).toBe(false);
    expect((await adminOk<{ balance_frozen: number }>(service.app, 'GET', `/terminals/${live.terminalId}`)).balance_frozen).toBeGreaterThan(0);
    expect((await adminOk<{ balance_frozen: number }>(service.app, 'GET', `/terminals/${test.terminalId}`)).balance_frozen).toBe(0);

    const liveRow = page.getByRole('row').filter({ hasText: liveId });
    expect(await liveRow.getByRole('button').count()).toBe(0);
    const testRow = page.getByRole('row').filter({ hasText: testId });
    await testRow.getByText('TEST', { exact: true }).waitFor();
    await page.screenshot({ path: `${SHOTS}/merchant-payouts.png`, fullPage: true });
    await testRow.getByRole('button', { name: `Complete ${testId}` }).click();
    await testRow.getByText('Completed', { exact: true }).waitFor();
    const payout = stored.payouts.find((p) => p.ext_id === testId)!;
    await webhookFor(payout.id, 'payout.completed');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the operator creates a test terminal in the console; its payments carry the TEST badge in the console', async () => {
    const admin = await adminOk<{ email: string }>(service.app, 'POST', '/users', {
      email: `admin.${Date.now()}@kassir.test`,
      role: 'admin',
      password: PASSWORD,
    });
    const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, admin.email, PASSWORD), PASSWORD);
    const { page, problems } = await watchedPage(browser, { viewport: { width: 1280, height: 860 } });
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Code from the authenticator app').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();

    await page.goto(`${origin}/console/merchants/${live.merchantId}`);
    await page.getByLabel('Name', { exact: true }).fill('Staging');
    await page.getByLabel('Test terminal').check();
    await page.getByRole('button', { name: 'New terminal' }).click();
    await page.getByText('Staging: ').waitFor();
    const { rows } = await service.ctx.db.query<{ is_test: boolean }>('SELECT is_test FROM terminals WHERE merchant_id = $1 AND name = $2', [
      live.merchantId,
      'Staging',
    ]);
    expect(rows).toEqual([{ is_test: true }]);
    await page.screenshot({ path: `${SHOTS}/console-test-terminal.png`, fullPage: true });

    const payment = await testPayment(1999);
    await page.goto(`${origin}/console/payments?q=${payment.ext_id}`);
    await page.getByRole('row').filter({ hasText: payment.ext_id }).getByText('TEST', { exact: true }).waitFor();
    await page.getByRole('link', { name: payment.ext_id }).click();
    await page.getByText('TEST', { exact: true }).first().waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

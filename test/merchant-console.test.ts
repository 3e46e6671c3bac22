import { readFile } from 'node:fs/promises';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
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
  until,
  webhookReceiver,
} from './helpers.js';

// The merchant cabinet at /merchant, in Chromium: a merchant's developer and accountant at work.
const SHOTS = screenshotDir('merchant');
const PASSWORD = 'correct horse battery';

let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
let email: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService({ WEBHOOK_ALLOW_PRIVATE: 'true' }, { worker: true }));
  browser = await launchChromium(inject('chromiumPath'));
  hooks = await webhookReceiver();
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  await createRequisite(service.app, executor.id);
  await createRequisite(service.app, executor.id);
  email = (await adminOk<{ email: string }>(service.app, 'POST', `/merchants/${merchant.merchantId}/users`, { email: 'dev@shop.test', password: PASSWORD }))
    .email;
});
afterAll(async () => {
  await browser?.close();
  hooks?.server.close();
  await service?.close();
});

function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

async function signIn(otp?: () => Promise<string>): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(browser, { viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  await page.goto(`${origin}/merchant`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (otp) {
    await page.getByLabel('Code from the authenticator app').fill(await otp());
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('heading', { name: 'Transfer between terminals' }).waitFor();
  return { page, problems };
}

describe('the merchant cabinet', () => {
  it('finds a payment by ext_id, sees its life, exports the list as CSV and sends a webhook again', async () => {
    const extId = uniqueExtId('shop-order');
    const payment = (await merchantCall('POST', '/v1/payments', { ext_id: extId, amount: 2500, notify_url: hooks.url })).json();
    await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('other'), amount: 2600 });
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const deliveries = () => hooks.received.filter((r) => r.body.includes(payment.id)).length;
    await until(() => (deliveries() > 0 ? true : undefined));

    const { page, problems } = await signIn();
    await page.getByRole('navigation').getByRole('link', { name: 'Payments' }).click();
    await page.getByLabel('Search').fill(extId);
    await expect.poll(() => page.getByRole('row').count()).toBe(2);
    await page.getByRole('link', { name: extId }).click();
    await page.getByText('status changed').first().waitFor();
    expect(await page.getByText('notification', { exact: true }).count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/merchant-payment.png`, fullPage: true });

    await page.getByRole('navigation').getByRole('link', { name: 'Payments' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toMatch(/^id,created_at,status,/);
    expect(csv).toContain(extId);
    expect(csv).not.toContain('executor_id');

    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    const row = page.getByRole('row').filter({ hasText: payment.id });
    await row.getByRole('button', { name: 'Re-send' }).click();
    await until(() => (deliveries() > 1 ? true : undefined));
    await row.getByRole('button', { name: /^\d+$/ }).click();
    await page.getByText(`"id": "${payment.id}"`).waitFor();
    await page.screenshot({ path: `${SHOTS}/merchant-webhooks.png` });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('signs a test payment in the browser and shows the request it sent; with two-factor on, rotates an API key that then works', async () => {
    let secret = '';
    {
      const { page, problems } = await signIn();
      await page.getByRole('navigation').getByRole('link', { name: 'Test console' }).click();
      await page.getByLabel('X-Identity (API key)').fill(merchant.apiKey);
      await page.getByLabel('Secret key').fill(merchant.secretKey);
      await page.getByLabel('Amount').fill('1750');
      await page.getByRole('button', { name: 'Create a test payment' }).click();
      const response = page.getByLabel('response');
      await response.getByText('Response · 200').waitFor();
      await response.getByText('"status": "PENDING"').waitFor();
      await page.getByLabel('signed request').getByText(`POST${origin}/v1/payments{"ext_id":"test-`).waitFor();
      await page.screenshot({ path: `${SHOTS}/merchant-test-console.png`, fullPage: true });

      // Rotating keys needs two-factor: enrolled on the Security screen, with the password first.
      await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('button', { name: /^Rotate API key/ }).click();
      await page
        .getByRole('dialog', { name: 'Confirm it is you' })
        .getByLabel(/^Password/)
        .fill(PASSWORD);
      await page.getByRole('dialog', { name: 'Confirm it is you' }).getByRole('button', { name: 'Confirm' }).click();
      await page.getByText('Turn on two-factor first').waitFor();
      await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();
      await page.getByRole('button', { name: 'Set up two-factor' }).click();
      secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').trim();
      await page.getByLabel('Code from the authenticator app').fill(await generate({ secret }));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByLabel('recovery codes').waitFor();
      expect(problems).toEqual([]);
      await page.context().close();
    }
    // A code is used once: the next sign-in waits for the next time step.
    const nextCode = () => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const { page, problems } = await signIn(nextCode);
    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: /^Rotate API key/ }).click();
    await page.getByText('Shown once: copy it now').waitFor();
    // Where signatures are checked: the page spells out the URL a request signs.
    await page.getByText('Requests are signed over this address').waitFor();
    await page.getByText(`${origin}/v1/payments`, { exact: true }).waitFor();
    const fresh = ((await page.getByText(/^tk_/).textContent()) ?? '').trim();
    expect((await signed(service.app, { ...merchant, apiKey: fresh }, 'GET', '/v1/balance', undefined, origin)).statusCode).toBe(200);
    expect((await merchantCall('GET', '/v1/balance')).statusCode).toBe(200);
    await page.screenshot({ path: `${SHOTS}/merchant-keys.png` });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows up in the operator's metrics: the payments and webhooks this merchant's journeys made", async () => {
    const { page, problems } = await watchedPage(browser, { viewport: { width: 1100, height: 700 } });
    const answer = await page.goto(`${origin}/metrics`);
    expect(answer?.status()).toBe(200);
    const text = (await page.locator('body').textContent()) ?? '';
    const created = text.split('\n').filter((line) => line.startsWith('kassir_payments_created_total{'));
    expect(created.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^kassir_webhook_deliveries_total\{[^}]*\} [1-9]/m);
    // Chromium shows the text in one <pre>: scroll to Kassir's own figures for the picture.
    await page.evaluate(() => {
      const pre = document.querySelector('pre')!;
      const at = pre.textContent!.indexOf('# HELP kassir_http_requests_total');
      const range = document.createRange();
      range.setStart(pre.firstChild!, at);
      range.setEnd(pre.firstChild!, at + 1);
      window.scrollTo(0, range.getBoundingClientRect().top + window.scrollY - 8);
    });
    await page.screenshot({ path: `${SHOTS}/metrics.png` });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

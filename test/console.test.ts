/**
 * The operator console (issue 18) in a real browser: Chromium driven through playwright-core
 * (test/browser.ts), against the whole service listening on a real port, the console built by
 * `npm run build:web`. The journeys people make every day, by role and label as a person reads
 * the screen; screenshots for the README land in docs/screenshots/.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sweepSilence } from '../src/devices/devices.service.js';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  ADMIN_TOKEN,
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  enrolTwoFactor,
  executorCompletesPayout,
  executorTakesPayout,
  type MerchantCredentials,
  multipartBody,
  notifyTransfer,
  personSignIn,
  setRate,
  signed,
  signedMultipart,
  startWebTestService,
  type TestService,
  testCard,
  uniqueExtId,
} from './helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SHOTS = screenshotDir('console');
const PASSWORD = 'correct horse battery';

let service: TestService;
let browser: Browser;
let origin: string;
let merchant: MerchantCredentials;
let executor: { id: string; token: string };
let requisite: { id: string; value: string };

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 95.5);
  merchant = await createMerchant(service.app, { name: 'Shop' });
  executor = await createExecutor(service.app, 'Trader', { deposit: 1000 });
  requisite = await createRequisite(service.app, executor.id);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
/** Recovery codes of the people made here who enrolled two-factor: each signs in or confirms once. */
const recovery = new Map<string, string[]>();
/** A staff person as the default policy has them: admin and finance enrolled in two-factor (required of them). */
async function person(role: string): Promise<{ email: string }> {
  const made = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: `${role}.${++seq}@kassir.test`, role, password: PASSWORD });
  if (role === 'admin' || role === 'finance') {
    const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, made.email, PASSWORD), PASSWORD);
    recovery.set(made.email, recoveryCodes);
  }
  return made;
}

/** A fresh browser on a laptop screen (or the size given), failing the test on any CSP violation or page error. */
function open(width = 1280, height = 860): Promise<{ page: Page; problems: string[] }> {
  return watchedPage(browser, { viewport: { width, height } });
}

/** The merchant API, signed for the address the service knows itself by. */
function merchantCall(method: string, url: string, body?: unknown) {
  return signed(service.app, merchant, method, url, body, origin);
}

/** Signs in on the console's page; a person with two-factor gives `otp`, or else one of their recovery codes. */
async function signIn(page: Page, email: string, given?: string): Promise<void> {
  const otp = given ?? recovery.get(email)?.shift();
  await page.goto(`${origin}/console`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (otp) {
    await page.getByLabel('Code from the authenticator app').fill(otp);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
}

/** A receipt as a payer's banking app would show it, drawn by the browser itself, as PNG. */
async function receiptImage(amount: string): Promise<Buffer> {
  const page = await browser.newPage({ viewport: { width: 360, height: 480 } });
  await page.setContent(
    `<body style="font-family:sans-serif;margin:0;background:#f4f6f8"><div style="margin:24px;padding:24px;background:#fff;border-radius:12px">
     <div style="color:#2e7d32;font-size:20px">✓ Перевод выполнен</div><div style="font-size:36px;margin:16px 0">${amount} ₽</div>
     <div>Получатель: Иван И.</div><div>Карта: •• 4821</div><div>Сбербанк</div><div style="color:#777;margin-top:16px">24.11.2026 14:05</div></div></body>`,
  );
  const png = await page.screenshot();
  await page.close();
  return png;
}

/** A cancelled payment the merchant disputes, claiming `claimed` with a receipt image. */
async function disputeWithReceipt(claimed: number, shown: string): Promise<{ id: string; ext_id: string }> {
  const payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: claimed + 50 })).json();
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
  const opened = await signedMultipart(
    service.app,
    merchant,
    `/v1/payments/${payment.id}/dispute`,
    multipartBody(
      { data: JSON.stringify({ amount: claimed, comment: `The payer sent ${shown}, receipt attached` }) },
      { field: 'proof', content: await receiptImage(shown) },
    ),
    origin,
  );
  expect(opened.statusCode, opened.body).toBe(200);
  return payment;
}

describe('the operator console', () => {
  it('serves the app with a strict CSP and long-cached hashed assets', async () => {
    const page = await fetch(`${origin}/console/disputes`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'self';/);
    expect(csp).toMatch(/style-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const script = await fetch(`${origin}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable/);
  });

  it('a fresh admin made with `kassir user create` signs in, chooses their own password, enrols two-factor as required, signs in again with a code and decides a dispute', async () => {
    // The CLI, as a real child process against the listening service, as the README tells the operator to run it.
    const cli = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'user', 'create', '--email', 'owner@kassir.test', '--role', 'admin'],
        { cwd: ROOT, env: { ...process.env, ADMIN_TOKEN, KASSIR_URL: origin }, timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const password = /Password: shown once.*\n\n {2}(\S+)\n/.exec(cli)![1]!;
    const payment = await disputeWithReceipt(1800, '1 800');

    const { page, problems } = await open();
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill('owner@kassir.test');
    await page.getByLabel(/^Password/).fill(password);
    await page.screenshot({ path: `${SHOTS}/console-login.png` });
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The password was generated (the CLI printed it): the admin chooses their own before anything else.
    const own = 'the owner’s own secret';
    await page.getByRole('heading', { name: 'Choose your own password' }).waitFor();
    await page.getByLabel('Password you signed in with').fill(password);
    await page.getByLabel(/^New password \(/).fill(own);
    await page.getByLabel('New password again').fill(own);
    await page.getByRole('button', { name: 'Save and continue' }).click();

    // Two-factor is required of admins by default: the Security screen only, until enrolled.
    await page.getByText('Your role requires two-factor').waitFor();
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    // Enrolling asks for the password again first.
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.getByLabel(/^Password/).fill(own);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!;
    expect(await page.getByRole('img', { name: 'QR' }).evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(50);
    await page.screenshot({ path: `${SHOTS}/console-two-factor.png` });
    await page.getByLabel('Code from the authenticator app').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => page.getByRole('list', { name: 'recovery codes' }).getByRole('listitem').count()).toBe(10);
    // The codes stay until the admin says they stored them; then the whole console opens.
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill('owner@kassir.test');
    await page.getByLabel(/^Password/).fill(own);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The step used at enrolment is spent: the next one, as the phone shows it half a minute on.
    await page.getByLabel('Code from the authenticator app').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in again where the person left off.
    await page.getByRole('heading', { name: 'Security' }).waitFor();

    await page.getByRole('navigation').getByRole('link', { name: 'Disputes' }).click();
    await page.getByRole('button', { name: `dispute ${payment.ext_id}` }).click();
    await page.getByRole('img', { name: 'Receipt' }).waitFor();
    await page.getByRole('button', { name: 'Reject (R)' }).click();
    // Irreversible: it asks to confirm, with a reason (issue 30).
    const reject = page.getByRole('dialog', { name: 'Reject this dispute?' });
    await reject.getByLabel('Reason').fill('The receipt shows another card');
    await reject.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(async () => (await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
    const { rows } = await service.ctx.db.query(`SELECT actor FROM audit_log WHERE action = 'dispute.reject' AND object_id = $1`, [payment.id]);
    expect(rows).toEqual([{ actor: 'owner@kassir.test' }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('support decides a dispute with its receipt shown beside the evidence, from the keyboard', async () => {
    const payment = await disputeWithReceipt(1450, '1 450');

    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Disputes' }).click();
    const receipt = page.getByRole('img', { name: 'Receipt' });
    await receipt.waitFor();
    await expect.poll(() => receipt.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(300);
    await expect.poll(() => page.getByLabel('Amount received').inputValue()).toBe('1450');
    await page.screenshot({ path: `${SHOTS}/console-disputes.png` });
    await page.keyboard.press('a');
    // A opens the confirmation (issue 30); its button approves.
    await page.getByRole('dialog', { name: 'Approve this dispute?' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByText('No open disputes').waitFor();

    const after = await merchantCall('GET', `/v1/payments/${payment.id}`);
    expect(after.json().status).toMatch(/^COMPLETED/);
    const { rows } = await service.ctx.db.query(`SELECT actor FROM audit_log WHERE action = 'dispute.approve' AND object_id = $1`, [payment.id]);
    expect(rows).toEqual([{ actor: support.email }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('support links an unmatched notification to its payment, in Russian on a phone', async () => {
    const payment = (await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 2000 })).json();
    const requisiteId = (await admin(service.app, 'GET', `/payments/${payment.id}`)).json().requisite_id;
    expect(requisiteId).toBe(requisite.id);
    const notice = await notifyTransfer(service.app, executor.token, requisiteId, 1990);
    expect(notice.status).toBe('unmatched');

    const support = await person('support');
    const { page, problems } = await open(390, 844);
    await signIn(page, support.email);
    await page.getByRole('button', { name: 'menu' }).click();
    await page.getByRole('navigation').getByText('Русский').click();
    await page.getByRole('navigation').getByRole('link', { name: 'Уведомления' }).click();
    await page.getByRole('heading', { name: 'Уведомления' }).waitFor();
    const card = page.getByLabel(`notification ${notice.notification_id}`);
    await card.getByLabel('ID платежа').fill(payment.id);
    await page.screenshot({ path: `${SHOTS}/console-notifications-phone-ru.png` });
    await card.getByRole('button', { name: 'Привязать к платежу' }).click();
    await card.waitFor({ state: 'detached' });

    expect((await merchantCall('GET', `/v1/payments/${payment.id}`)).json().status).toBe('COMPLETED');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('finance completes a payout after confirming with a code; support is refused the same action', async () => {
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

    const support = await person('support');
    const first = await open();
    await signIn(first.page, support.email);
    await first.page.getByRole('navigation').getByRole('link', { name: 'Payouts' }).click();
    const supportRow = first.page.getByRole('row', { name: `payout ${payout.ext_id}` });
    await supportRow.getByRole('button', { name: 'Complete' }).click();
    await expect.poll(() => supportRow.getByRole('alert').textContent()).toMatch(/This needs the finance role/);
    await first.page.context().close();
    expect((await merchantCall('GET', `/v1/payouts/${payout.id}`)).json().status).toBe('pending');

    const finance = await person('finance');
    const { page, problems } = await open();
    await signIn(page, finance.email);
    // Signing in with a code counts as confirming: five minutes on, the person is asked again.
    await service.ctx.db.query('UPDATE sessions SET confirmed_at = NULL WHERE user_id = (SELECT id FROM users WHERE email = $1)', [finance.email]);
    await page.getByRole('navigation').getByRole('link', { name: 'Payouts' }).click();
    const row = page.getByRole('row', { name: `payout ${payout.ext_id}` });
    await row.getByRole('button', { name: 'Complete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.getByLabel('Code from the authenticator app').fill(recovery.get(finance.email)!.shift()!);
    await page.screenshot({ path: `${SHOTS}/console-payouts-confirm.png` });
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payouts/${payout.id}`)).json().status).toBe('completed');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the dashboard shows the hour so far: payments, conversion, what waits, lost demand', async () => {
    // Demand nobody could serve: no requisite takes SBP.
    const refused = await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('order'), amount: 700, method: 'SBP' });
    expect(refused.json().error).toBe('PAY_004');
    const admin = await person('admin');
    const { page, problems } = await open();
    await signIn(page, admin.email);
    const dashboard = await adminOk<{ totals: { created: number }; lost_demand: { total: number } }>(service.app, 'GET', '/dashboard');
    expect(dashboard.totals.created).toBeGreaterThanOrEqual(2);
    await page.getByText('Lost demand: 1').waitFor();
    await page.getByText(`${dashboard.totals.created}`, { exact: true }).first().waitFor();
    await expect.poll(() => page.locator('.recharts-surface').count()).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: `${SHOTS}/console-dashboard.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('support switches a requisite off on the executor screen', async () => {
    const extra = await createRequisite(service.app, executor.id);
    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Executors' }).click();
    await page.getByRole('link', { name: 'Trader' }).click();
    const toggle = page.getByRole('switch', { name: new RegExp(`${extra.value.slice(-4)}$`) });
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await toggle.click({ force: true });
    await expect.poll(async () => (await adminOk<{ is_active: boolean }>(service.app, 'GET', `/requisites/${extra.id}`)).is_active).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('support finds a payment by its ext_id and reads its life on one screen; the filters are in the link', async () => {
    const extId = uniqueExtId('find-me');
    const payment = (await merchantCall('POST', '/v1/payments', { ext_id: extId, amount: 2500 })).json();
    await notifyTransfer(service.app, executor.token, requisite.id, 2500);
    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Payments' }).click();
    await page.getByLabel('Search').fill(extId);
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe(extId);
    await page.getByRole('link', { name: extId }).click();
    await page.getByText('requisite handed out').waitFor();
    await page.getByText('status changed').first().waitFor();
    await page.getByText('ledger posting').first().waitFor();
    expect(page.url()).toBe(`${origin}/console/payments/${payment.id}`);
    await page.screenshot({ path: `${SHOTS}/console-payment-timeline.png`, fullPage: true });

    // A shared link opens the same filtered list.
    await page.goto(`${origin}/console/payments?q=${extId}&status=COMPLETED`);
    await page.getByRole('link', { name: extId }).waitFor();
    await page.goto(`${origin}/console/payments?q=${extId}&status=CANCELLED`);
    await page.getByText('Nothing here').waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("an admin sets a terminal's route to its executors for RUB, then a provider", async () => {
    const provider = await adminOk<{ id: string }>(service.app, 'POST', '/providers', {
      name: 'Upstream One',
      kind: 'kassir',
      base_url: 'https://upstream.example',
      api_key: 'ak_upstream',
      secret_key: 'sk_upstream',
    });
    const admin = await person('admin');
    const { page, problems } = await open();
    await signIn(page, admin.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Merchants' }).click();
    await page.getByRole('link', { name: 'Shop' }).click();
    await page.getByRole('button', { name: 'Add step' }).click();
    await expect.poll(() => page.getByRole('combobox', { name: 'Step' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Add step' }).click();
    const steps = page.getByRole('combobox', { name: 'Step' });
    await steps.nth(1).click();
    await page.getByRole('option', { name: 'Upstream One' }).click();
    await page.getByPlaceholder('Currencies (all)').first().fill('rub');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect
      .poll(() => adminOk(service.app, 'GET', `/terminals/${merchant.terminalId}/routes`))
      .toEqual([{ executors: true, currencies: ['RUB'] }, { provider_id: provider.id }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('an admin finds on the Audit screen the payout an executor took and completed, named as the executor, by kind of object', async () => {
    await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 100, reason: 'funds for a payout' });
    const created = await merchantCall('POST', '/v1/payouts', {
      ext_id: uniqueExtId('payout'),
      amount: 700,
      method: 'card',
      requisites: testCard(),
      holder_name: 'Ivan I.',
    });
    expect(created.statusCode, created.body).toBe(200);
    const payout = created.json().id as string;
    expect((await executorTakesPayout(service.app, executor.token, payout)).statusCode).toBe(200);
    expect((await executorCompletesPayout(service.app, executor.token, payout)).statusCode).toBe(200);

    // An admin with two-factor (required of admins by default), signing in with a recovery code.
    const admin = await person('admin');
    const { page, problems } = await open();
    await signIn(page, admin.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('combobox', { name: 'Kind of object' }).click();
    await page.getByRole('option', { name: 'Payout', exact: true }).click();
    await page.getByLabel('Object', { exact: true }).fill(payout);
    for (const action of ['payout.take', 'payout.complete']) {
      const row = page.getByRole('row').filter({ hasText: action });
      await expect.poll(() => row.count()).toBe(1);
      // Who: the executor's apps, by kind and name; what: the payout, by kind and id.
      expect(await row.getByText('Executor', { exact: true }).count()).toBe(1);
      expect(await row.getByText('Trader', { exact: true }).count()).toBe(1);
      expect(await row.getByText('Payout', { exact: true }).count()).toBe(1);
      expect(await row.getByText(payout, { exact: true }).count()).toBe(1);
    }
    // The kind of object is in the link, so the view can be shared.
    expect(new URL(page.url()).searchParams.get('object_type')).toBe('payout');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("an executor's sign-in is told the console is not theirs, and can sign out", async () => {
    const login = await adminOk<{ email: string }>(service.app, 'POST', `/executors/${executor.id}/login`, { email: 'trader@kassir.test', password: PASSWORD });
    const { page, problems } = await open(390, 844);
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill(login.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('This sign-in is for a cabinet').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('an admin sets up a merchant and its terminal; each secret is shown once', async () => {
    const admin = await person('admin');
    const { page, problems } = await open();
    await signIn(page, admin.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Merchants' }).click();
    await page.getByLabel('Name').fill('Book Shop');
    await page.getByRole('button', { name: 'New merchant' }).click();
    const secret = (await page.getByRole('alert').filter({ hasText: 'Book Shop' }).locator('code').textContent())!;
    expect(secret).toMatch(/^sk_/);
    await page.getByRole('link', { name: 'Book Shop' }).click();
    // The merchant's page is in place before its form is filled: the list's own "Name" field is
    // still on screen for a moment after the click, and a fill there leaves the terminal unnamed.
    await page.getByRole('button', { name: 'New terminal' }).waitFor();
    await page.getByLabel('Name').fill('Main');
    await page.getByLabel('Pay-in fee, %').fill('2.5');
    await page.getByRole('button', { name: 'New terminal' }).click();
    const apiKey = (await page.getByRole('alert').filter({ hasText: 'Main' }).locator('code').textContent())!;
    expect(apiKey.length).toBeGreaterThan(20);
    const merchants = await adminOk<{ merchants: { id: string; name: string }[] }>(service.app, 'GET', '/merchants');
    const created = merchants.merchants.find((m) => m.name === 'Book Shop')!;
    const terminals = await adminOk<{ terminals: { name: string; payin_rate: number }[] }>(service.app, 'GET', `/merchants/${created.id}/terminals`);
    expect(terminals.terminals).toEqual([expect.objectContaining({ name: 'Main', payin_rate: 2.5 })]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("an admin registers an executor's phone; support links its message no one could match to the payment, and sees the phone gone silent", async () => {
    const owner = await createExecutor(service.app, 'Polina');
    await createRequisite(service.app, owner.id);
    await createRequisite(service.app, owner.id);
    // The other executors' cards step aside for a moment, so that both payments land on Polina's two cards.
    const { rows: others } = await service.ctx.db.query<{ id: string }>(
      'UPDATE requisites SET is_active = false WHERE is_active AND executor_id <> $1 RETURNING id',
      [owner.id],
    );
    let payments: { id: string }[];
    try {
      payments = [];
      for (let i = 0; i < 2; i++) payments.push((await merchantCall('POST', '/v1/payments', { ext_id: uniqueExtId('phone'), amount: 1700 })).json());
    } finally {
      await service.ctx.db.query('UPDATE requisites SET is_active = true WHERE id = ANY($1)', [others.map((r) => r.id)]);
    }
    const cardsUsed = await Promise.all(
      payments.map(async (p) => (await adminOk<{ requisite_id: string }>(service.app, 'GET', `/payments/${p.id}`)).requisite_id),
    );
    expect(new Set(cardsUsed).size).toBe(2);

    // An admin registers the executor's phone (its token shown once) and how long it may be silent.
    const staff = await person('admin');
    const setup = await open();
    await signIn(setup.page, staff.email);
    await setup.page.goto(`${origin}/console/executors/${owner.id}`);
    await setup.page.getByLabel('Phone name').fill('Pixel 7');
    await setup.page.getByRole('button', { name: 'Register phone' }).click();
    const token = (await setup.page.getByTestId('device-token').textContent())!;
    expect(await setup.page.getByTestId('device-signing-secret').textContent()).toMatch(/^\S{20,}$/);
    await setup.page.getByLabel(/^Silence allowed, minutes/).fill('5');
    await setup.page.getByLabel('Phones').getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => (await adminOk<{ device_silence_minutes: number }>(service.app, 'GET', `/executors/${owner.id}`)).device_silence_minutes)
      .toBe(5);
    expect(setup.problems).toEqual([]);
    await setup.page.context().close();

    // A forwarded bank message that names no card, for an amount both cards wait for: it waits for a person.
    const sent = await service.app.inject({
      method: 'POST',
      url: '/device/v1/messages',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: { text: 'Сбербанк Онлайн. ИВАН ИВАНОВИЧ И. перевел(а) Вам 1700.00 RUB', sender: '900', battery: 64, app_version: '3.2.1' },
    });
    expect(sent.json()).toMatchObject({ status: 'ambiguous', matched: false });

    const support = await person('support');
    const { page, problems } = await open();
    await signIn(page, support.email);
    await page.getByRole('navigation').getByRole('link', { name: 'Phone messages' }).click();
    await page.getByRole('heading', { name: 'Phone messages' }).waitFor();
    const card = page.getByLabel(`message ${sent.json().message_id}`);
    await card.getByText('перевел(а) Вам 1700.00 RUB').waitFor();
    await card.getByText(/2 requisites that fit the text wait for/).waitFor();
    await card.getByRole('link', { name: 'Polina' }).waitFor();
    await card.getByLabel('Payment id').fill(payments[0]!.id);
    await page.screenshot({ path: `${SHOTS}/console-device-messages.png` });
    await card.getByRole('button', { name: 'Link to payment' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await merchantCall('GET', `/v1/payments/${payments[0]!.id}`)).json().status).toBe('COMPLETED');
    expect((await merchantCall('GET', `/v1/payments/${payments[1]!.id}`)).json().status).toBe('PENDING');

    // The phone goes quiet longer than the executor's rule allows: the sweep takes its cards out of the cascade.
    await service.ctx.db.query("UPDATE devices SET last_seen_at = now() - interval '6 minutes' WHERE executor_id = $1", [owner.id]);
    await sweepSilence(service.ctx);
    expect(await adminOk(service.app, 'GET', `/executors/${owner.id}`)).toMatchObject({ devices_silent: true, device_silence_minutes: 5 });

    await page.getByRole('navigation').getByRole('link', { name: 'Executors' }).click();
    await page.getByRole('row').filter({ hasText: 'Polina' }).getByText('phones silent').waitFor();
    await page.getByRole('link', { name: 'Polina' }).click();
    const phone = page.getByRole('row', { name: 'phone Pixel 7' });
    await phone.getByText('64%').waitFor();
    await phone.getByText('3.2.1').waitFor();
    await page.getByText('its cards are out of the cascade').waitFor();
    await page.screenshot({ path: `${SHOTS}/console-executor-phones.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

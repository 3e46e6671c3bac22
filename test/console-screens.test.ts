/**
 * Console screens that existed only in the API or the CLI (issue 33, items 2, 3 and part of 8), in
 * a real browser: the first steps an empty console greets its first admin with, webhook deliveries
 * that fail shown as failing from their first failure, adding and changing requisites (numbers
 * checked by the server as the CLI's are, refusals on their field), executors' and merchants'
 * sign-ins and a two-factor reset from the Users screen, and the forwarder apps' addresses of a
 * phone just registered.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  enrolTwoFactor,
  type MerchantCredentials,
  personSignIn,
  setRate,
  signed,
  startWebTestService,
  type TestService,
  testCard,
  uniqueExtId,
  until,
} from './helpers.js';

const PASSWORD = 'correct horse battery';
const SHOTS = screenshotDir('console-screens');

let service: TestService;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  ensureWebBuilt();
  // As installed: webhooks to internal addresses are refused (the terminal's notify_url guard is tested on it).
  ({ service, origin } = await startWebTestService({ WEBHOOK_ALLOW_PRIVATE: 'false' }));
  browser = await launchChromium(inject('chromiumPath'));
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
const address = (role: string) => `${role}.${++seq}@screens.test`;

function open(options: { width?: number; height?: number; locale?: string } = {}): Promise<{ page: Page; problems: string[] }> {
  const { width = 1280, height = 860, locale = 'en-US' } = options;
  return watchedPage(browser, { viewport: { width, height }, locale });
}

/** An admin as the default policy has them (two-factor enrolled), signed in in the browser with a recovery code (which counts as confirming). */
const EN = { email: 'Email', password: /^Password/, signIn: 'Sign in', code: 'Code from the authenticator app', home: 'Dashboard' };
const RU = { email: 'Эл. почта', password: /^Пароль/, signIn: 'Войти', code: 'Код из приложения-аутентификатора', home: 'Сводка' };

async function adminInBrowser(page: Page, labels = EN) {
  const made = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', { email: address('admin'), role: 'admin', password: PASSWORD });
  const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, made.email, PASSWORD), PASSWORD);
  await page.goto(`${origin}/console`);
  await page.getByLabel(labels.email).fill(made.email);
  await page.getByLabel(labels.password).fill(PASSWORD);
  await page.getByRole('button', { name: labels.signIn }).click();
  await page.getByLabel(labels.code).fill(recoveryCodes.shift()!);
  await page.getByRole('button', { name: labels.signIn }).click();
  await page.getByRole('heading', { name: labels.home }).waitFor();
  return made;
}

async function auditRows(action: string, objectId: string): Promise<{ actor: string; before: unknown; after: unknown }[]> {
  const { rows } = await service.ctx.db.query(`SELECT actor, before, after FROM audit_log WHERE action = $1 AND object_id = $2 ORDER BY id`, [
    action,
    objectId,
  ]);
  return rows;
}

describe('first steps', () => {
  // First in the file: the database is empty until this test sets each thing up.
  it('an empty console greets the first admin with the steps to a first payment, each linked and ticked off from the data, in English and Russian', {
    timeout: 120_000,
  }, async () => {
    const { page, problems } = await open();
    await adminInBrowser(page);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const steps = page.getByRole('list', { name: 'Steps to a first payment' });
    const step = (name: string, done: boolean) => steps.getByRole('listitem', { name: `${name}: ${done ? 'done' : 'not done'}` });
    const names = ['A USDT rate', 'A merchant', 'A terminal', 'An executor', "Money on an executor's deposit", 'A card or other requisite', 'A phone'];
    for (const name of names) await step(name, false).waitFor();
    await page.getByText('7 of 7 left').waitFor();
    await page.screenshot({ path: `${SHOTS}/console-first-steps.png` });

    // Each step's link opens the screen where it is taken.
    await step('A USDT rate', false).getByRole('link', { name: 'Open' }).click();
    await page.waitForURL(/\/console\/rates$/);
    await page.goBack();

    await setRate(service.app, 'RUB', 95.5);
    const merchant = await createMerchant(service.app);
    const executor = await createExecutor(service.app, 'First trader', { deposit: 0 });
    await page.reload();
    for (const name of ['A USDT rate', 'A merchant', 'A terminal', 'An executor']) await step(name, true).waitFor();
    await step("Money on an executor's deposit", false).waitFor();
    await page.getByText('3 of 7 left').waitFor();

    // A terminal switched off is not a step done.
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: false });
    await page.reload();
    await step('A terminal', false).waitFor();
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: true });

    await adminOk(service.app, 'POST', `/executors/${executor.id}/adjustments`, { amount: 500, reason: 'first deposit' });
    await createRequisite(service.app, executor.id);
    await page.reload();
    await step("Money on an executor's deposit", true).waitFor();
    await step('A card or other requisite', true).waitFor();
    await step('A phone', false).waitFor();

    // In Russian, the same steps in Russian words.
    const ru = await open({ locale: 'ru-RU' });
    await adminInBrowser(ru.page, RU);
    const ruSteps = ru.page.getByRole('list', { name: 'Шаги до первого платежа' });
    await ruSteps.getByRole('listitem', { name: 'Телефон: не сделано' }).waitFor();
    await ruSteps.getByRole('listitem', { name: 'Курс USDT: готово' }).waitFor();
    await ru.page.getByText('осталось 1 из 7').waitFor();
    expect(ru.problems).toEqual([]);
    await ru.page.context().close();

    // The last step done, the greeting goes away.
    await adminOk(service.app, 'POST', `/executors/${executor.id}/devices`, { name: 'Pixel' });
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await expect.poll(() => page.getByRole('heading', { name: 'Steps to a first payment' }).count()).toBe(0);
    expect(await adminOk(service.app, 'GET', '/first-steps')).toMatchObject({ done: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('webhooks', () => {
  let receiver: Server;
  let receiverUrl: string;
  let merchant: MerchantCredentials;
  let deliverer: Awaited<ReturnType<TestService['startAnother']>>;
  beforeAll(async () => {
    // A second instance on the same database, allowed to call this machine, delivers the webhooks
    // (its worker); a failed attempt is retried only after a minute, so it stays failing while the test looks.
    deliverer = await service.startAnother({
      PORT: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      KASSIR_WORKER: 'true',
      KASSIR_WEBHOOK_RETRY_BASE_MS: '60000',
      KASSIR_WEBHOOK_TIMEOUT_MS: '1000',
    });
    // A receiver that answers every delivery 500: the merchant's endpoint is broken.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(500).end('upstream down'));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
    await setRate(service.app, 'RUB', 95.5);
    merchant = await createMerchant(service.app);
    const executor = await createExecutor(service.app, 'Webhook trader');
    await createRequisite(service.app, executor.id);
  });
  afterAll(() => new Promise<void>((resolve) => receiver?.close(() => resolve())));

  it('a delivery that failed once is failing at once — on the tab the screen opens on, with its last error and next retry — while the API still says pending', {
    timeout: 90_000,
  }, async () => {
    const created = await signed(
      deliverer.app,
      merchant,
      'POST',
      '/v1/payments',
      { ext_id: uniqueExtId(), amount: 1234, currency: 'RUB', method: 'CARD', notify_url: receiverUrl },
      origin,
    );
    expect(created.statusCode).toBe(200);
    const paymentId = (created.json() as { id: string }).id;
    await adminOk(service.app, 'POST', `/payments/${paymentId}/cancel`);
    // The first attempt fails; the next is a minute away.
    const failing = await until(async () => {
      const { webhooks } = await adminOk<{ webhooks: { id: string; status: string; attempts: number; failing: boolean; last_error: string | null }[] }>(
        service.app,
        'GET',
        `/webhooks?resource_id=${paymentId}`,
      );
      return webhooks.find((w) => w.attempts > 0);
    });
    expect(failing).toMatchObject({ status: 'pending', failing: true, last_error: expect.stringContaining('500') });
    // The status filters: failing and attention find it, failed does not (it is not given up yet).
    const ids = async (status: string) =>
      (await adminOk<{ webhooks: { id: string }[] }>(service.app, 'GET', `/webhooks?status=${status}&resource_id=${paymentId}`)).webhooks.map((w) => w.id);
    expect(await ids('failing')).toEqual([failing.id]);
    expect(await ids('attention')).toEqual([failing.id]);
    expect(await ids('failed')).toEqual([]);
    expect(await ids('pending')).toEqual([failing.id]);

    const { page, problems } = await open();
    await adminInBrowser(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    // Opens on what needs attention.
    await expect.poll(() => page.getByRole('radio', { name: 'Needs attention' }).isChecked()).toBe(true);
    const row = page.getByRole('row').filter({ hasText: paymentId });
    await row.getByText('failing', { exact: true }).waitFor();
    await row.getByText(/^Last error: .*500/).waitFor();
    await row.getByText(/^Next retry:/).waitFor();
    await page.screenshot({ path: `${SHOTS}/console-webhooks-failing.png` });
    // The Failed tab is empty of it: it is not given up yet.
    await page.getByText('Failed', { exact: true }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: paymentId }).count()).toBe(0);
    await page.getByText('Failing', { exact: true }).click();
    await page.getByRole('row').filter({ hasText: paymentId }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('requisites', () => {
  it('adds a card from the console: a number that fails the Luhn check is refused on its field and nothing is stored; changing one is audited', {
    timeout: 90_000,
  }, async () => {
    const executor = await createExecutor(service.app, 'Card trader');
    const { page, problems } = await open();
    const me = await adminInBrowser(page);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await page.getByRole('button', { name: 'Add requisite' }).click();
    const dialog = page.getByRole('dialog', { name: 'New requisite' });
    const card = testCard();
    // One digit off: the Luhn check fails, as the CLI's add would.
    const wrong = `${card.slice(0, -1)}${(Number(card.at(-1)) + 1) % 10}`;
    await dialog.getByLabel('Card number').fill(wrong);
    await dialog.getByLabel('Bank').click();
    await page
      .getByRole('option', { name: /Sberbank|Сбербанк/ })
      .first()
      .click();
    await dialog.getByLabel('Holder shown to payers').fill('Ivan I.');
    await dialog.getByRole('button', { name: 'Add requisite' }).click();
    await dialog.getByText('This is not a card number: 13–19 digits whose check digit (Luhn) is right').waitFor();
    expect(await dialog.getByLabel('Card number').getAttribute('aria-invalid')).toBe('true');
    const stored = async () => (await adminOk<{ requisites: { value: string }[] }>(service.app, 'GET', `/requisites?executor_id=${executor.id}`)).requisites;
    expect(await stored()).toEqual([]);
    // The server answers the field it refused, as the CLI gets it.
    const refused = await admin(service.app, 'POST', `/executors/${executor.id}/requisites`, {
      type: 'card',
      value: wrong,
      currency: 'RUB',
      country: 'RU',
      methods: ['CARD'],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'VALIDATION', data: { field: 'value' } });

    // Spaces are allowed, as in the CLI; the right number goes in.
    await dialog.getByLabel('Card number').fill(card.replace(/(\d{4})/g, '$1 ').trim());
    await dialog.getByLabel('Largest payment').fill('50000');
    await dialog.getByRole('button', { name: 'Add requisite' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    const [added] = await stored();
    expect(added).toMatchObject({ type: 'card', holder: 'Ivan I.', max_amount: 50000, methods: ['CARD'], is_active: true });
    const full = await adminOk<{ id: string; value: string }>(service.app, 'GET', `/requisites/${(added as unknown as { id: string }).id}`);
    expect(full.value).toBe(card);
    expect((await auditRows('requisite.create', full.id)).map((r) => r.actor)).toEqual([me.email]);

    // Change the holder, the daily limit, and switch it off: only those go, audited under the person.
    await page.getByRole('button', { name: `Edit ${added!.value}` }).click();
    const edit = page.getByRole('dialog', { name: `Requisite ${added!.value}` });
    await edit.getByLabel('Holder shown to payers').fill('Petr P.');
    await edit.getByLabel('Payments per day').fill('20');
    await edit.getByLabel('Handed out to payers').uncheck();
    await page.screenshot({ path: `${SHOTS}/console-requisite-edit.png` });
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    const after = await adminOk<Record<string, unknown>>(service.app, 'GET', `/requisites/${full.id}`);
    expect(after).toMatchObject({ holder: 'Petr P.', daily_count_limit: 20, is_active: false, value: card, max_amount: 50000 });
    const updates = await auditRows('requisite.update', full.id);
    expect(updates).toEqual([
      {
        actor: me.email,
        before: expect.objectContaining({ holder: 'Ivan I.', is_active: true }),
        after: expect.objectContaining({ holder: 'Petr P.', is_active: false }),
      },
    ]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('an SBP phone number in a wrong form is refused on its field, on a 360 px phone too, in Russian', { timeout: 90_000 }, async () => {
    const executor = await createExecutor(service.app, 'Phone trader');
    const { page, problems } = await open({ width: 360, height: 780, locale: 'ru-RU' });
    await adminInBrowser(page, RU);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await page.getByRole('button', { name: 'Добавить реквизит' }).click();
    const dialog = page.getByRole('dialog', { name: 'Новый реквизит' });
    await dialog.getByLabel('Тип').click();
    await page.getByRole('option', { name: 'СБП (номер телефона)' }).click();
    await dialog.getByLabel('Номер телефона для СБП').fill('12345');
    await dialog.getByRole('button', { name: 'Добавить реквизит' }).click();
    await dialog.getByText('Это не номер телефона: укажите его в международном формате, например +79123456789').waitFor();
    await dialog.getByLabel('Номер телефона для СБП').fill('+7 912 555-01-02');
    await dialog.getByRole('button', { name: 'Добавить реквизит' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    const { requisites } = await adminOk<{ requisites: { type: string; value: string; methods: string[] }[] }>(
      service.app,
      'GET',
      `/requisites?executor_id=${executor.id}`,
    );
    expect(requisites).toEqual([expect.objectContaining({ type: 'sbp', value: '+79125550102', methods: ['SBP'] })]);
    // Nothing wider than the phone's screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('users', () => {
  it("creates an executor's and a merchant's sign-in from the Users screen, each password shown once under its email, and each opens its own cabinet", {
    timeout: 90_000,
  }, async () => {
    const executorName = `Cabinet trader ${++seq}`;
    const executor = await createExecutor(service.app, executorName);
    const merchantName = `Cabinet shop ${++seq}`;
    const merchant = await adminOk<{ id: string }>(service.app, 'POST', '/merchants', { name: merchantName });
    const { page, problems } = await open();
    const me = await adminInBrowser(page);
    await page.goto(`${origin}/console/users`);
    await page.getByRole('heading', { name: 'Users' }).waitFor();

    const shown = page.getByRole('alert').filter({ has: page.getByTestId('one-time-password') });
    const issue = async (role: 'executor' | 'merchant', owner: string, email: string) => {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Role', { exact: true }).first().click();
      await page.getByRole('option', { name: role === 'executor' ? 'Executor' : 'Merchant', exact: true }).click();
      await page.getByRole('combobox', { name: role === 'executor' ? 'Executor' : 'Merchant' }).click();
      await page.getByRole('option', { name: owner }).click();
      await page.getByRole('button', { name: 'New user' }).click();
      await shown.getByText(`Password for ${email}`).waitFor();
      return (await shown.getByTestId('one-time-password').textContent())!;
    };
    const executorEmail = address('executor');
    const executorPassword = await issue('executor', executorName, executorEmail);
    const merchantEmail = address('merchant');
    const merchantPassword = await issue('merchant', merchantName, merchantEmail);

    const { users } = await adminOk<{ users: { id: string; email: string; role: string }[] }>(service.app, 'GET', '/users?q=screens.test');
    const executorUser = users.find((u) => u.email === executorEmail)!;
    const merchantUser = users.find((u) => u.email === merchantEmail)!;
    expect([executorUser.role, merchantUser.role]).toEqual(['executor', 'merchant']);
    // Whose cabinet each opens, and who made it, from the audit log.
    const { rows } = await service.ctx.db.query(`SELECT id, executor_id, merchant_id FROM users WHERE id = ANY($1) ORDER BY role`, [
      [executorUser.id, merchantUser.id],
    ]);
    expect(rows).toEqual([
      { id: executorUser.id, executor_id: executor.id, merchant_id: null },
      { id: merchantUser.id, executor_id: null, merchant_id: merchant.id },
    ]);
    expect((await auditRows('user.create', executorUser.id)).map((r) => r.actor)).toEqual([me.email]);
    const executorSession = await personSignIn(service.app, executorEmail, executorPassword);
    const merchantSession = await personSignIn(service.app, merchantEmail, merchantPassword);
    expect(executorSession.cookie).toBeTruthy();
    expect(merchantSession.cookie).toBeTruthy();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("resets a person's lost two-factor after a confirmation, audited under the admin; they sign in with the password alone and enrol again", {
    timeout: 90_000,
  }, async () => {
    const finance = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', {
      email: address('finance'),
      role: 'finance',
      password: PASSWORD,
    });
    await enrolTwoFactor(service.app, await personSignIn(service.app, finance.email, PASSWORD), PASSWORD);
    const before = await adminOk<{ two_factor: boolean }>(service.app, 'GET', `/users/${finance.id}`);
    expect(before.two_factor).toBe(true);

    const { page, problems } = await open();
    const me = await adminInBrowser(page);
    await page.goto(`${origin}/console/users?q=${encodeURIComponent(finance.email)}`);
    await page.getByRole('button', { name: `Reset two-factor ${finance.email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Reset the two-factor of ${finance.email}?` });
    await dialog.getByText('set up two-factor again').waitFor();
    // Cancelling changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await adminOk<{ two_factor: boolean }>(service.app, 'GET', `/users/${finance.id}`)).two_factor).toBe(true);
    expect(await auditRows('user.reset_two_factor', finance.id)).toEqual([]);

    await page.getByRole('button', { name: `Reset two-factor ${finance.email}` }).click();
    await page
      .getByRole('dialog', { name: `Reset the two-factor of ${finance.email}?` })
      .getByRole('button', { name: 'Reset two-factor' })
      .click();
    await page.getByText(`Two-factor of ${finance.email} is reset`).waitFor();
    await page.screenshot({ path: `${SHOTS}/console-users-two-factor-reset.png` });
    expect((await adminOk<{ two_factor: boolean }>(service.app, 'GET', `/users/${finance.id}`)).two_factor).toBe(false);
    expect((await auditRows('user.reset_two_factor', finance.id)).map((r) => r.actor)).toEqual([me.email]);
    // No reset button for someone without two-factor.
    await expect.poll(() => page.getByRole('button', { name: `Reset two-factor ${finance.email}` }).count()).toBe(0);
    // The password alone signs them in again (to enrol).
    expect((await personSignIn(service.app, finance.email, PASSWORD)).cookie).toBeTruthy();
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('phones', () => {
  it("a phone registered from the console shows each forwarder app's address on PUBLIC_BASE_URL, copied with one click, and the pasted address takes the phone's messages", {
    timeout: 90_000,
  }, async () => {
    const executor = await createExecutor(service.app, 'Phone owner');
    const { page, problems } = await open();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await adminInBrowser(page);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    await page.getByLabel('Phone name').fill('Redmi');
    await page.getByRole('button', { name: 'Register phone' }).click();
    const token = (await page.getByTestId('device-token').textContent())!;
    const secret = (await page.getByTestId('device-signing-secret').textContent())!;
    expect(token).toMatch(/^dev_/);
    for (const format of ['smsforwarder', 'sms-gateway', 'incoming-sms']) {
      expect(await page.getByTestId(`forwarder-url-${format}`).textContent()).toBe(`${origin}/device/v1/hooks/${token}/${format}`);
    }
    await page.getByRole('button', { name: 'Copy: Incoming SMS to URL forwarder — Webhook URL' }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(`${origin}/device/v1/hooks/${token}/incoming-sms`);
    await page.screenshot({ path: `${SHOTS}/console-phone-forwarders.png` });

    // What was copied is the address the app posts to: a signed message through it is taken.
    const body = JSON.stringify({ from: '900', text: 'Test message from the forwarder', sentStamp: Date.now(), receivedStamp: Date.now(), sim: 'sim1' });
    const answer = await fetch(copied, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': createHmac('sha256', secret).update(body).digest('hex') },
      body,
    });
    expect(answer.status).toBeLessThan(300);
    const { rows } = await service.ctx.db.query(`SELECT m.text FROM device_messages m JOIN devices d ON d.id = m.device_id WHERE d.executor_id = $1`, [
      executor.id,
    ]);
    expect(rows).toEqual([{ text: 'Test message from the forwarder' }]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('terminals', () => {
  it("sets a terminal's webhook address (an internal one refused on its field, as the API refuses it) and its ways back; a payment without its own notify_url uses it, a cancelled one's page links to fail_url; the route is said in words", {
    timeout: 90_000,
  }, async () => {
    await setRate(service.app, 'RUB', 95.5);
    const merchant = await createMerchant(service.app, { name: 'Settings terminal' });
    const executor = await createExecutor(service.app, 'Route trader');
    await createRequisite(service.app, executor.id);
    const { page, problems } = await open();
    const me = await adminInBrowser(page);
    await page.goto(`${origin}/console/merchants/${merchant.merchantId}`);
    const form = page.getByRole('form', { name: 'Addresses of Settings terminal' });
    await form.getByLabel('Webhook address (notify_url)').fill('http://127.0.0.1:8080/hooks');
    await form.getByRole('button', { name: 'Save addresses' }).click();
    await form.getByText('An absolute http(s) address on the internet, not an internal or private one').waitFor();
    const refused = await admin(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { notify_url: 'http://10.0.0.5/hooks' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'VALIDATION', data: { field: 'notify_url' } });
    expect((await adminOk<{ notify_url: string | null }>(service.app, 'GET', `/terminals/${merchant.terminalId}`)).notify_url).toBeNull();

    const urls = { notify_url: 'https://shop.example/kassir/hooks', return_url: 'https://shop.example/thanks', fail_url: 'https://shop.example/try-again' };
    await form.getByLabel('Webhook address (notify_url)').fill(urls.notify_url);
    await form.getByLabel('After a successful payment').fill(urls.return_url);
    await form.getByLabel('After a payment that did not go through').fill(urls.fail_url);
    await form.getByRole('button', { name: 'Save addresses' }).click();
    await form.getByText('Saved').waitFor();
    expect(await adminOk(service.app, 'GET', `/terminals/${merchant.terminalId}`)).toMatchObject(urls);
    expect(await auditRows('terminal.update', merchant.terminalId)).toEqual([
      { actor: me.email, before: expect.objectContaining({ notify_url: null, fail_url: null }), after: expect.objectContaining(urls) },
    ]);

    // A payment created without a notify_url of its own sends its webhooks to the terminal's address.
    const created = await signed(
      service.app,
      merchant,
      'POST',
      '/v1/payments',
      { ext_id: uniqueExtId(), amount: 777, currency: 'RUB', method: 'CARD' },
      origin,
    );
    expect(created.statusCode).toBe(200);
    const payment = created.json() as { id: string; payment_url: string };
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const { rows } = await service.ctx.db.query('SELECT event, url FROM webhook_events WHERE resource_id = $1', [payment.id]);
    expect(rows).toEqual([{ event: 'payment.cancelled', url: urls.notify_url }]);
    // Its page sends the payer back to fail_url.
    const payer = await open({ width: 390, height: 844 });
    await payer.page.goto(payment.payment_url);
    expect(await payer.page.getByRole('link', { name: 'Return to the store' }).getAttribute('href')).toBe(urls.fail_url);
    await payer.page.context().close();

    // The route editor says what each step means.
    await page.getByText("No steps: the terminal's payments go to its own executors only.").waitFor();
    await page.getByRole('button', { name: 'Add step' }).click();
    expect(await page.getByTestId('route-step-1').textContent()).toBe(
      "Kassir's own executors take it (any currency; any method). If it cannot, the payment is refused: no requisite free.",
    );
    await page.getByRole('button', { name: 'Add step' }).click();
    expect(await page.getByTestId('route-step-1').textContent()).toMatch(/If it cannot, the next step\.$/);
    await page.screenshot({ path: `${SHOTS}/console-terminal-settings.png`, fullPage: true });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

/**
 * Traffic classes in the console (issue 36 item 3; docs/risk-classes.md), in a real browser: the
 * executor's page and the requisite form set "Takes traffic: new / returning / trusted", and the
 * payment card shows its payer's class — in English, and in Russian on a 360 px phone.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, watchedPage } from './browser.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  enrolTwoFactor,
  personSignIn,
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

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
  await setRate(service.app, 'RUB', 100);
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
const EN = { email: 'Email', password: /^Password/, signIn: 'Sign in', code: 'Code from the authenticator app', home: 'Dashboard' };
const RU = { email: 'Эл. почта', password: /^Пароль/, signIn: 'Войти', code: 'Код из приложения-аутентификатора', home: 'Сводка' };

async function adminInBrowser(page: Page, labels = EN): Promise<void> {
  const made = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', {
    email: `admin.${++seq}@classes.test`,
    role: 'admin',
    password: PASSWORD,
  });
  const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, made.email, PASSWORD), PASSWORD);
  await page.goto(`${origin}/console`);
  await page.getByLabel(labels.email).fill(made.email);
  await page.getByLabel(labels.password).fill(PASSWORD);
  await page.getByRole('button', { name: labels.signIn }).click();
  await page.getByLabel(labels.code).fill(recoveryCodes.shift()!);
  await page.getByRole('button', { name: labels.signIn }).click();
  await page.getByRole('heading', { name: labels.home }).waitFor();
}

describe('traffic classes in the console', () => {
  it('limits a requisite to trusted payers and an executor to new and returning ones; the payment card shows the payer’s class', {
    timeout: 120_000,
  }, async () => {
    const executor = await createExecutor(service.app, 'Class trader');
    const card = await createRequisite(service.app, executor.id, { max_amount: null });
    const merchant = await createMerchant(service.app);
    const created = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount: 1500, client_id: 'buyer-1' }, origin);
    expect(created.statusCode).toBe(200);
    const payment = { body: created.json() as { id: string } };

    const { page, problems } = await watchedPage(browser, { viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    await adminInBrowser(page);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    const [listed] = (await adminOk<{ requisites: { value: string }[] }>(service.app, 'GET', `/requisites?executor_id=${executor.id}`)).requisites;
    await page.getByRole('button', { name: `Edit ${listed!.value}` }).click();
    const edit = page.getByRole('dialog', { name: `Requisite ${listed!.value}` });
    await edit.getByRole('checkbox', { name: 'new', exact: true }).uncheck();
    await edit.getByRole('checkbox', { name: 'returning', exact: true }).uncheck();
    // The last class checked stays: a requisite that takes no one is switched off instead.
    await edit.getByRole('checkbox', { name: 'trusted', exact: true }).click();
    expect(await edit.getByRole('checkbox', { name: 'trusted', exact: true }).isChecked()).toBe(true);
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect((await adminOk(service.app, 'GET', `/requisites/${card.id}`)).traffic_classes).toEqual(['trusted']);

    // The executor's own classes, on its page.
    const classes = page.getByRole('form', { name: 'Takes traffic' });
    await classes.getByRole('checkbox', { name: 'trusted', exact: true }).uncheck();
    await classes.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await adminOk(service.app, 'GET', `/executors/${executor.id}`)).traffic_classes).toEqual(['new', 'returning']);
    const [audited] = (
      await service.ctx.db.query(
        `SELECT after->'traffic_classes' AS classes FROM audit_log WHERE action = 'executor.update' AND object_id = $1 ORDER BY id DESC LIMIT 1`,
        [executor.id],
      )
    ).rows;
    expect(audited?.classes).toEqual(['new', 'returning']);

    await page.goto(`${origin}/console/payments/${payment.body.id}`);
    const row = page.getByRole('row', { name: /Payer class/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('new');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('in Russian on a 360 px phone: «Принимает трафик: новые / вернувшиеся / доверенные», nothing wider than the screen', { timeout: 120_000 }, async () => {
    const executor = await createExecutor(service.app, 'Телефон');
    const card = await createRequisite(service.app, executor.id, { max_amount: null });
    const { page, problems } = await watchedPage(browser, { viewport: { width: 360, height: 780 }, locale: 'ru-RU' });
    await adminInBrowser(page, RU);
    await page.goto(`${origin}/console/executors/${executor.id}`);
    const classes = page.getByRole('form', { name: 'Принимает трафик' });
    await classes.getByRole('checkbox', { name: 'доверенные', exact: true }).uncheck();
    await classes.getByRole('button', { name: 'Сохранить' }).click();
    await expect.poll(async () => (await adminOk(service.app, 'GET', `/executors/${executor.id}`)).traffic_classes).toEqual(['new', 'returning']);
    const [listed] = (await adminOk<{ requisites: { value: string }[] }>(service.app, 'GET', `/requisites?executor_id=${executor.id}`)).requisites;
    await page.getByRole('button', { name: new RegExp(listed!.value.replace(/[*]/g, '\\*')) }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('checkbox', { name: 'новые', exact: true }).uncheck();
    await dialog.getByRole('button', { name: 'Сохранить' }).click();
    await expect.poll(async () => (await adminOk(service.app, 'GET', `/requisites/${card.id}`)).traffic_classes).toEqual(['returning', 'trusted']);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

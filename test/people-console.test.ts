/**
 * People in the console, in a real browser (issue 30, items 2, 3, 4, 5 and 10): the one-time
 * password shown under its own email, confirmations before switching a sign-in off or resetting a
 * password, a wrong code that stays an error in its dialog, a session that ended asked back over the
 * screen, the first sign-in with a generated password, and failed sign-ins found on the Audit screen.
 * The service runs as a fresh install: two-factor is required of admin and finance.
 */
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureWebBuilt, launchChromium, screenshotDir, watchedPage } from './browser.js';
import { adminOk, enrolTwoFactor, personSignIn, startWebTestService, type TestService } from './helpers.js';

const PASSWORD = 'correct horse battery';

let service: TestService;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  ensureWebBuilt();
  ({ service, origin } = await startWebTestService());
  browser = await launchChromium(inject('chromiumPath'));
});
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

let seq = 0;
const address = (role: string) => `${role}.${++seq}@people.test`;

function open(width = 1280, height = 860): Promise<{ page: Page; problems: string[] }> {
  return watchedPage(browser, { viewport: { width, height } });
}

/** An admin as the default policy has them — two-factor enrolled — signed in in the browser with a recovery code (which counts as confirming). */
async function adminInBrowser(page: Page): Promise<{ id: string; email: string; codes: string[] }> {
  const admin = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', { email: address('admin'), role: 'admin', password: PASSWORD });
  const { recoveryCodes } = await enrolTwoFactor(service.app, await personSignIn(service.app, admin.email, PASSWORD), PASSWORD);
  await page.goto(`${origin}/console`);
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Code from the authenticator app').fill(recoveryCodes.shift()!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  return { ...admin, codes: recoveryCodes };
}

async function userByEmail(email: string): Promise<{ id: string; is_active: boolean; must_change_password: boolean }> {
  const { users } = await adminOk<{ users: { id: string; email: string; is_active: boolean; must_change_password: boolean }[] }>(
    service.app,
    'GET',
    `/users?q=${encodeURIComponent(email)}`,
  );
  return users.find((u) => u.email === email)!;
}

describe('the Users screen', () => {
  it('shows each one-time password under its own email — after a reload too — and a double click on "New user" creates one and shows its password', async () => {
    const { page, problems } = await open();
    await adminInBrowser(page);
    const support = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', {
      email: address('support'),
      role: 'support',
      password: PASSWORD,
    });
    await page.goto(`${origin}/console/users`);
    await page.getByRole('heading', { name: 'Users' }).waitFor();

    // A double click on "New user": one request, one user, and its password on screen (no 409).
    const creates: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/admin/v1/users') creates.push(request.url());
    });
    const finance = address('finance');
    await page.getByLabel('Email').fill(finance);
    await page.getByLabel('Role', { exact: true }).first().click();
    await page.getByRole('option', { name: 'finance' }).click();
    await page.getByRole('button', { name: 'New user' }).dblclick();
    const shown = page.getByRole('alert').filter({ has: page.getByTestId('one-time-password') });
    await shown.getByText(`Password for ${finance}`).waitFor();
    const financePassword = (await shown.getByTestId('one-time-password').textContent())!;
    expect(creates).toHaveLength(1);
    await expect.poll(() => page.getByText('already exists').count()).toBe(0);
    expect((await personSignIn(service.app, finance, financePassword)).cookie).toBeTruthy();

    // Resetting support's password replaces the finance one on screen with support's, under support's email.
    await page.getByRole('button', { name: `Reset password ${support.email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Reset the password of ${support.email}?` });
    await dialog.getByText('they choose their own at the next sign-in').waitFor();
    await dialog.getByRole('button', { name: 'Reset password' }).click();
    await shown.getByText(`Password for ${support.email}`).waitFor();
    expect(await shown.textContent()).not.toContain(finance);
    const supportPassword = (await shown.getByTestId('one-time-password').textContent())!;
    expect(supportPassword).not.toBe(financePassword);
    await page.screenshot({ path: `${screenshotDir('people')}/console-users-password.png` });
    expect((await personSignIn(service.app, support.email, supportPassword)).cookie).toBeTruthy();

    // After a reload, a reset still names the person by email, never by id.
    await page.reload();
    await page.getByRole('button', { name: `Reset password ${support.email}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reset password' }).click();
    await shown.getByText(`Password for ${support.email}`).waitFor();
    expect(await shown.textContent()).not.toContain(support.id);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('switching a sign-in off asks for a yes and a reason, which the audit log keeps; one’s own row says it is theirs', async () => {
    const { page, problems } = await open();
    const me = await adminInBrowser(page);
    const support = await adminOk<{ id: string; email: string }>(service.app, 'POST', '/users', {
      email: address('support'),
      role: 'support',
      password: PASSWORD,
    });
    await page.goto(`${origin}/console/users`);

    await page.getByRole('button', { name: `Switch off ${support.email}` }).click();
    const dialog = page.getByRole('dialog', { name: `Switch off ${support.email}?` });
    await dialog.getByText('their sessions end at once').waitFor();
    const yes = dialog.getByRole('button', { name: 'Switch off' });
    expect(await yes.isDisabled()).toBe(true);
    // Nothing happened on the first click.
    expect((await userByEmail(support.email)).is_active).toBe(true);
    await dialog.getByLabel('Reason').fill('left the company');
    await yes.click();
    await expect.poll(async () => (await userByEmail(support.email)).is_active).toBe(false);
    const { rows } = await service.ctx.db.query(`SELECT actor, after FROM audit_log WHERE action = 'user.update' AND object_id = $1`, [support.id]);
    expect(rows).toEqual([{ actor: me.email, after: expect.objectContaining({ is_active: false, reason: 'left the company' }) }]);

    // Cancelling changes nothing; one's own row says so explicitly.
    await page.getByRole('button', { name: `Switch off ${me.email}` }).click();
    const own = page.getByRole('dialog', { name: `Switch off ${me.email}?` });
    await own.getByText('This is your own sign-in').waitFor();
    expect(await own.getByRole('button', { name: 'Switch off' }).isDisabled()).toBe(true);
    await own.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: `Reset password ${me.email}` }).click();
    await page
      .getByRole('dialog', { name: `Reset the password of ${me.email}?` })
      .getByText('you will be signed out at once')
      .waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await userByEmail(me.email)).is_active).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('codes and sessions', () => {
  it('a wrong password or code at enrolment is an error in its place; a session that ended asks to sign in again over the screen, which keeps what was typed', async () => {
    const finance = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: address('finance'), role: 'finance', password: PASSWORD });
    const { page, problems } = await open();
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill(finance.email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Finance must enrol first: the Security screen only.
    await page.getByText('Your role requires two-factor').waitFor();
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const confirm = page.getByRole('dialog', { name: 'Confirm it is you' });
    await confirm.getByLabel(/^Password/).fill('not my password');
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await confirm.getByText('The password is wrong; try again').waitFor();
    await confirm.getByLabel(/^Password/).fill(PASSWORD);
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    const secret = (await page.getByTestId('totp-secret').textContent())!;
    await page.getByLabel('Code from the authenticator app').fill('000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText(/^The code is wrong; try again/).waitFor();
    // Still signed in, on the same step: the right code finishes enrolment.
    expect(await page.getByTestId('totp-secret').textContent()).toBe(secret);
    await page.getByLabel('Code from the authenticator app').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByRole('list', { name: 'recovery codes' }).getByRole('listitem');
    // The recovery codes stay on screen until the person says they stored them, though two-factor is now on.
    await expect.poll(() => list.count()).toBe(10);
    const codes = await list.allTextContents();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Security' }).click();

    // Typing a new password when the session ends under the person (here: ended in the database).
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel(/^New password/).fill('a brand new secret');
    await service.ctx.db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = (SELECT id FROM users WHERE email = $1) AND revoked_at IS NULL', [
      finance.email,
    ]);
    await page.getByRole('button', { name: 'Save' }).click();
    const again = page.getByRole('dialog', { name: 'Sign in to Kassir' });
    await again.getByText('Your session has ended').waitFor();
    // The screen is still there under the dialog, with what was typed.
    expect(await page.getByLabel(/^New password/).inputValue()).toBe('a brand new secret');
    expect(await again.getByLabel('Email').inputValue()).toBe(finance.email);
    await page.screenshot({ path: `${screenshotDir('people')}/console-sign-in-again.png` });
    await again.getByLabel(/^Password/).fill(PASSWORD);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.getByLabel('Code from the authenticator app').fill(codes[0]!.trim());
    await again.getByRole('button', { name: 'Sign in' }).click();
    // Signed in again, the change went through.
    await page.getByText('Password changed').waitFor();
    expect((await personSignIn(service.app, finance.email, 'a brand new secret', codes[1]!.trim())).cookie).toBeTruthy();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a staff member given a generated password chooses their own first, then enrols two-factor where their role requires it', async () => {
    const created = await adminOk<{ email: string; password: string }>(service.app, 'POST', '/users', { email: address('finance'), role: 'finance' });
    const { page, problems } = await open(390, 844);
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill(created.email);
    await page.getByLabel(/^Password/).fill(created.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Choose your own password' }).waitFor();
    await page.getByLabel('Password you signed in with').fill(created.password);
    await page.getByLabel(/^New password \(/).fill('my very own secret');
    await page.getByLabel('New password again').fill('my very own secret');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.getByText('Your role requires two-factor').waitFor();
    expect((await userByEmail(created.email)).must_change_password).toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the Audit screen', () => {
  it('finds failed sign-ins and the lock by the email tried', async () => {
    const target = await adminOk<{ email: string }>(service.app, 'POST', '/users', { email: address('support'), role: 'support', password: PASSWORD });
    const attempt = (password: string) => service.app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: target.email, password } });
    // Skip ahead to the eighth failure rather than wait out the growing delays.
    await service.ctx.db.query('INSERT INTO login_throttle (email, failures) VALUES ($1, 8)', [target.email]);
    expect((await attempt('wrong guess one')).statusCode).toBe(401);
    expect((await attempt('wrong guess two')).statusCode).toBe(401);
    expect((await attempt(PASSWORD)).statusCode).toBe(429);

    const { page, problems } = await open();
    await adminInBrowser(page);
    await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Object', { exact: true }).fill(target.email);
    await page.getByRole('cell', { name: 'auth.locked' }).waitFor();
    await expect.poll(() => page.getByRole('cell', { name: 'auth.login_failed' }).count()).toBe(3);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

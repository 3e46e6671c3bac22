import type { FastifyInstance } from 'fastify';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, asPerson, createExecutor, personSignIn, startTestService, type TestService } from './helpers.js';

// People, sessions and roles: DESIGN.md "People, sessions and roles (contract)".
let service: TestService;
let app: FastifyInstance;

beforeAll(async () => {
  // This file signs in a hundred times from one address; the per-address limit has its own test.
  service = await startTestService({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' });
  app = service.app;
  // This file tries each mechanism on its own, so the operator here requires two-factor of no role;
  // the default (admin and finance) is tried on a fresh install below ('a fresh install …').
  await adminOk(app, 'PUT', '/two-factor-roles', { roles: [] });
});
afterAll(async () => service?.close());

let seq = 0;
const email = (role: string) => `${role}.${++seq}@kassir.test`;

interface Session {
  cookie: string;
  csrf: string;
}

async function createUser(role: string, password = 'correct horse battery'): Promise<{ id: string; email: string; password: string }> {
  return adminOk(app, 'POST', '/users', { email: email(role), role, password });
}

async function login(address: string, password: string, otp?: string) {
  return app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: address, password, ...(otp ? { otp } : {}) } });
}

async function signIn(address: string, password: string, otp?: string): Promise<Session> {
  const res = await login(address, password, otp);
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  return { cookie: setCookie.split(';')[0]!, csrf: res.json().csrf_token };
}

/** A request as the console makes it: the session cookie, and the CSRF token on changes. */
function as(session: Session, method: string, url: string, payload?: unknown, csrf = true) {
  const headers: Record<string, string> = { cookie: session.cookie };
  if (csrf && method !== 'GET') headers['x-csrf-token'] = session.csrf;
  return app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
}

async function staff(role: string): Promise<Session & { id: string; email: string }> {
  const user = await createUser(role);
  return { ...(await signIn(user.email, user.password)), id: user.id, email: user.email };
}

describe('users', () => {
  it('creates a user with a generated password shown once; the email is unique, the role one of three', async () => {
    const res = await admin(app, 'POST', '/users', { email: ' Ann.Support@Kassir.test ', role: 'support' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(String), email: 'ann.support@kassir.test', role: 'support', password: expect.stringMatching(/^\S{20}$/) });
    const stored = await service.ctx.db.query('SELECT password_hash FROM users WHERE id = $1', [body.id]);
    expect(stored.rows[0].password_hash).toMatch(/^\$argon2id\$/);
    expect(stored.rows[0].password_hash).not.toContain(body.password);

    const again = await admin(app, 'POST', '/users', { email: 'ANN.SUPPORT@kassir.test', role: 'finance' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('CONFLICT');
    const badRole = await admin(app, 'POST', '/users', { email: email('x'), role: 'owner' });
    expect([badRole.statusCode, badRole.json().error]).toEqual([400, 'VALIDATION']);
    const short = await admin(app, 'POST', '/users', { email: email('x'), role: 'admin', password: 'short' });
    expect([short.statusCode, short.json().message]).toEqual([400, 'The password must be at least 10 characters long']);
    const notEmail = await admin(app, 'POST', '/users', { email: 'nobody', role: 'admin' });
    expect(notEmail.statusCode).toBe(400);

    const listed = await adminOk<{ users: { email: string; two_factor: boolean }[] }>(app, 'GET', '/users?q=ann.support');
    expect(listed.users).toEqual([expect.objectContaining({ email: 'ann.support@kassir.test', role: 'support', two_factor: false })]);
    expect(JSON.stringify(listed)).not.toMatch(/argon2|password_hash|"password"/);
  });

  it('executors and merchants get sign-ins of their own, which the operator API refuses', async () => {
    const executor = await createExecutor(app);
    const res = await admin(app, 'POST', `/executors/${executor.id}/login`, { email: email('executor') });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toEqual({ id: expect.any(String), email: expect.any(String), role: 'executor', password: expect.any(String) });
    const missing = await admin(app, 'POST', '/executors/00000000-0000-4000-8000-000000000000/login', { email: email('executor') });
    expect([missing.statusCode, missing.json().error]).toEqual([404, 'NOT_FOUND']);

    const session = await signIn(res.json().email, res.json().password);
    const me = await as(session, 'GET', '/auth/v1/me');
    expect(me.json().user).toMatchObject({ role: 'executor', executor_id: executor.id });
    const refused = await as(session, 'GET', '/admin/v1/payments');
    expect([refused.statusCode, refused.json().error]).toEqual([403, 'AUTH_003']);
  });
});

describe('signing in', () => {
  it('answers the user and a CSRF token with an HttpOnly, SameSite=Strict cookie; Secure behind HTTPS', async () => {
    const user = await createUser('support');
    const res = await login(user.email.toUpperCase(), user.password);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ user: { id: user.id, email: user.email, role: 'support' }, csrf_token: expect.any(String), must_change_password: false });
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^kassir_session=[\w-]{40,};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);

    const proxied = await startTestService({ TRUST_PROXY: 'true' });
    try {
      await adminOk(proxied.app, 'POST', '/users', { email: 'tls@kassir.test', role: 'admin', password: 'correct horse battery' });
      const secure = await proxied.app.inject({
        method: 'POST',
        url: '/auth/v1/login',
        headers: { 'x-forwarded-proto': 'https' },
        payload: { email: 'tls@kassir.test', password: 'correct horse battery' },
      });
      expect(String(secure.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('gives the same answer for a wrong password and an unknown email, and audits both', async () => {
    const user = await createUser('finance');
    const wrong = await login(user.email, 'not the password');
    const unknown = await login('nobody.here@kassir.test', 'not the password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(wrong.json()).toEqual({ error: 'AUTH_002', message: 'Wrong email, password or code' });
    const { rows } = await service.ctx.db.query(`SELECT actor, user_id, ip FROM audit_log WHERE action = 'auth.login_failed' ORDER BY id`);
    expect(rows).toEqual(
      expect.arrayContaining([
        { actor: user.email, user_id: null, ip: '127.0.0.1' },
        { actor: 'nobody.here@kassir.test', user_id: null, ip: '127.0.0.1' },
      ]),
    );
  });

  it('slows repeated failures, then locks the email — known or not — for a while', async () => {
    const user = await createUser('admin');
    for (const address of [user.email, 'ghost@kassir.test']) {
      for (let i = 0; i < 3; i++) expect((await login(address, 'wrong password')).statusCode).toBe(401);
      const started = Date.now();
      expect((await login(address, 'wrong password')).statusCode).toBe(401);
      expect(Date.now() - started).toBeGreaterThanOrEqual(240);
      // Skip ahead to the ninth failure rather than wait out the growing delays.
      await service.ctx.db.query('UPDATE login_throttle SET failures = 9 WHERE email = $1', [address]);
      expect((await login(address, 'wrong password')).statusCode).toBe(401);
    }
    const locked = await login(user.email, user.password);
    const lockedUnknown = await login('ghost@kassir.test', user.password);
    expect(locked.statusCode).toBe(429);
    expect(locked.json()).toEqual(lockedUnknown.json());
    expect(locked.json().error).toBe('RATE_LIMITED');
    expect(locked.json().message).toMatch(/try again in 15 min/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);

    // The lock ends on its own; a right password then clears the count.
    await service.ctx.db.query(`UPDATE login_throttle SET locked_until = now() - interval '1 second', last_failed_at = now() - interval '2 hours'`);
    await signIn(user.email, user.password);
    const { rows } = await service.ctx.db.query('SELECT 1 FROM login_throttle WHERE email = $1', [user.email]);
    expect(rows).toEqual([]);
  });

  it('limits sign-in attempts per client address', async () => {
    const strict = await startTestService({ LOGIN_ATTEMPTS_PER_MINUTE: '3' });
    try {
      const attempt = () => strict.app.inject({ method: 'POST', url: '/auth/v1/login', payload: { email: 'a@kassir.test', password: 'whatever it is' } });
      for (let i = 0; i < 3; i++) expect((await attempt()).statusCode).toBe(401);
      const limited = await attempt();
      expect([limited.statusCode, limited.json().error]).toEqual([429, 'RATE_LIMITED']);
    } finally {
      await strict.close();
    }
  });

  it('a switched-off user cannot sign in, and their sessions end at once', async () => {
    const user = await staff('support');
    expect((await as(user, 'GET', '/admin/v1/payments')).statusCode).toBe(200);
    await adminOk(app, 'PATCH', `/users/${user.id}`, { is_active: false });
    expect((await as(user, 'GET', '/admin/v1/payments')).statusCode).toBe(401);
    expect((await login(user.email, 'correct horse battery')).statusCode).toBe(401);
  });
});

describe('sessions', () => {
  it('end after the idle time, at the absolute expiry, and at sign-out', async () => {
    const user = await createUser('support');
    const idle = await signIn(user.email, user.password);
    await service.ctx.db.query(`UPDATE sessions SET last_seen_at = now() - interval '31 minutes' WHERE user_id = $1`, [user.id]);
    const expired = await as(idle, 'GET', '/admin/v1/payments');
    expect([expired.statusCode, expired.json().error]).toEqual([401, 'AUTH_001']);

    const old = await signIn(user.email, user.password);
    await service.ctx.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1 AND revoked_at IS NULL`, [user.id]);
    expect((await as(old, 'GET', '/auth/v1/me')).statusCode).toBe(401);

    const current = await signIn(user.email, user.password);
    const out = await as(current, 'POST', '/auth/v1/logout');
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/kassir_session=;/);
    expect((await as(current, 'GET', '/auth/v1/me')).statusCode).toBe(401);
  });

  it('are listed and revoked by their owner only', async () => {
    const user = await createUser('support');
    const laptop = await signIn(user.email, user.password);
    const phone = await signIn(user.email, user.password);
    const listed = (await as(laptop, 'GET', '/auth/v1/sessions')).json().sessions;
    expect(listed).toHaveLength(2);
    expect(listed.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
    const phoneId = listed.find((s: { current: boolean }) => !s.current).id;

    const stranger = await staff('admin');
    const foreign = await as(stranger, 'DELETE', `/auth/v1/sessions/${phoneId}`);
    expect([foreign.statusCode, foreign.json().error]).toEqual([404, 'NOT_FOUND']);
    expect((await as(phone, 'GET', '/auth/v1/me')).statusCode).toBe(200);

    expect((await as(laptop, 'DELETE', `/auth/v1/sessions/${phoneId}`)).statusCode).toBe(204);
    expect((await as(phone, 'GET', '/auth/v1/me')).statusCode).toBe(401);
    expect((await as(laptop, 'GET', '/auth/v1/me')).statusCode).toBe(200);
  });

  it('refuse a change without the CSRF token, or with another session’s', async () => {
    const one = await staff('support');
    const two = await staff('support');
    const missing = await as(one, 'POST', '/admin/v1/notifications/00000000-0000-4000-8000-000000000000/resolve', { note: 'x' }, false);
    expect([missing.statusCode, missing.json().error]).toEqual([403, 'AUTH_003']);
    expect(missing.json().message).toMatch(/X-CSRF-Token/);
    const foreign = await app.inject({
      method: 'POST',
      url: '/auth/v1/logout',
      headers: { cookie: one.cookie, 'x-csrf-token': two.csrf },
    });
    expect(foreign.statusCode).toBe(403);
    // Reads need no token.
    expect((await as(one, 'GET', '/admin/v1/notifications')).statusCode).toBe(200);
  });

  it('a password change ends the other sessions; an admin’s reset ends all and shows the new password once', async () => {
    const user = await createUser('finance');
    const here = await signIn(user.email, user.password);
    const there = await signIn(user.email, user.password);
    const wrong = await as(here, 'POST', '/auth/v1/password', { current_password: 'nope nope nope', new_password: 'a brand new secret' });
    // A wrong password inside a live session is not "signed out" (401): the person stays and tries again.
    expect([wrong.statusCode, wrong.json().error]).toEqual([400, 'AUTH_005']);
    expect((await as(here, 'GET', '/auth/v1/me')).statusCode).toBe(200);
    const weak = await as(here, 'POST', '/auth/v1/password', { current_password: user.password, new_password: 'short' });
    expect(weak.statusCode).toBe(400);
    expect((await as(here, 'POST', '/auth/v1/password', { current_password: user.password, new_password: 'a brand new secret' })).statusCode).toBe(204);
    expect((await as(there, 'GET', '/auth/v1/me')).statusCode).toBe(401);
    expect((await as(here, 'GET', '/auth/v1/me')).statusCode).toBe(200);
    expect((await login(user.email, user.password)).statusCode).toBe(401);

    const { password } = await adminOk<{ password: string }>(app, 'POST', `/users/${user.id}/password`);
    expect((await as(here, 'GET', '/auth/v1/me')).statusCode).toBe(401);
    await signIn(user.email, password);
  });
});

describe('two-factor', () => {
  it('enrols with a QR code and a first code, then asks for a code at sign-in, each code once; recovery codes work once', async () => {
    const user = await staff('admin');
    // Enrolling asks for the password first: a stolen session alone cannot tie the account to another phone.
    const unconfirmed = await as(user, 'POST', '/auth/v1/two-factor/setup');
    expect([unconfirmed.statusCode, unconfirmed.json().error, unconfirmed.json().data]).toEqual([403, 'AUTH_004', { method: 'password' }]);
    await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    const setup = (await as(user, 'POST', '/auth/v1/two-factor/setup')).json();
    expect(setup.otpauth_url).toMatch(/^otpauth:\/\/totp\/Kassir:.+\?secret=[A-Z2-7]+/);
    expect(setup.qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    const wrong = await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: '000000' });
    expect([wrong.statusCode, wrong.json().error]).toEqual([400, 'AUTH_005']);
    expect(wrong.json().message).toMatch(/^The code is wrong; try again/);
    const enabled = await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
    expect(enabled.statusCode, enabled.body).toBe(200);
    const codes: string[] = enabled.json().recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect((await as(user, 'GET', '/auth/v1/me')).json().two_factor).toBe(true);

    const noCode = await login(user.email, 'correct horse battery');
    expect([noCode.statusCode, noCode.json().data]).toEqual([401, { otp_required: true }]);
    const badCode = await login(user.email, 'correct horse battery', '123456');
    expect(badCode.json()).toEqual({ error: 'AUTH_002', message: 'Wrong email, password or code' });
    // The code accepted at enrolment cannot sign in again: each time step once.
    const replay = await login(user.email, 'correct horse battery', await generate({ secret: setup.secret }));
    expect(replay.statusCode).toBe(401);
    // A future step is accepted (one step of drift either way), and then only once.
    const next = await generate({ secret: setup.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    expect((await login(user.email, 'correct horse battery', next)).statusCode).toBe(200);
    expect((await login(user.email, 'correct horse battery', next)).statusCode).toBe(401);

    expect((await login(user.email, 'correct horse battery', codes[0])).statusCode).toBe(200);
    expect((await login(user.email, 'correct horse battery', codes[0])).statusCode).toBe(401);
    const { rows } = await service.ctx.db.query('SELECT totp_secret, recovery_codes FROM users WHERE id = $1', [user.id]);
    expect(rows[0].totp_secret).not.toContain(setup.secret);
    expect(rows[0].recovery_codes).toHaveLength(9);
  });

  it('required per role by the operator: until enrolled, the operator API is closed to that role', async () => {
    const user = await staff('finance');
    const set = await admin(app, 'PUT', '/two-factor-roles', { roles: ['finance', 'admin'] });
    expect(set.json()).toEqual({ roles: ['finance', 'admin'] });
    try {
      const refused = await as(user, 'GET', '/admin/v1/payouts');
      expect([refused.statusCode, refused.json().error, refused.json().data]).toEqual([403, 'AUTH_003', { two_factor_required: true }]);
      const me = (await as(user, 'GET', '/auth/v1/me')).json();
      expect(me).toMatchObject({ two_factor: false, two_factor_required: true });
      await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
      const setup = (await as(user, 'POST', '/auth/v1/two-factor/setup')).json();
      await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
      expect((await as(user, 'GET', '/admin/v1/payouts')).statusCode).toBe(200);
      const off = await as(user, 'POST', '/auth/v1/two-factor/disable', { otp: '000000' });
      expect([off.statusCode, off.json().error]).toEqual([403, 'AUTH_003']);
    } finally {
      await admin(app, 'PUT', '/two-factor-roles', { roles: [] });
    }
  });

  it('an admin clears a lost factor; the user signs in with the password and enrols again', async () => {
    const user = await staff('support');
    await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    const setup = (await as(user, 'POST', '/auth/v1/two-factor/setup')).json();
    await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
    expect((await admin(app, 'POST', `/users/${user.id}/two-factor/reset`)).statusCode).toBe(204);
    expect((await as(user, 'GET', '/auth/v1/me')).statusCode).toBe(401);
    const again = await signIn(user.email, 'correct horse battery');
    expect((await as(again, 'GET', '/auth/v1/me')).json().two_factor).toBe(false);
  });
});

describe('risky actions ask to confirm again', () => {
  it('with the password without two-factor, good for five minutes', async () => {
    const user = await staff('admin');
    const first = await as(user, 'POST', '/admin/v1/users', { email: email('new'), role: 'support' });
    expect([first.statusCode, first.json().error, first.json().data]).toEqual([403, 'AUTH_004', { method: 'password' }]);
    const wrong = await as(user, 'POST', '/auth/v1/confirm', { password: 'nope' });
    expect([wrong.statusCode, wrong.json()]).toEqual([400, { error: 'AUTH_005', message: 'The password is wrong; try again', data: { method: 'password' } }]);
    const confirmed = await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(new Date(confirmed.json().confirmed_until).getTime() - Date.now()).toBeGreaterThan(4 * 60_000);
    expect((await as(user, 'POST', '/admin/v1/users', { email: email('new'), role: 'support' })).statusCode).toBe(201);

    await service.ctx.db.query(`UPDATE sessions SET confirmed_at = now() - interval '6 minutes' WHERE user_id = $1`, [user.id]);
    expect((await as(user, 'POST', '/admin/v1/users', { email: email('new'), role: 'support' })).json().error).toBe('AUTH_004');
  });

  it('wrong passwords or codes within a session count against the same limit as signing in', async () => {
    const user = await staff('finance');
    await service.ctx.db.query('INSERT INTO login_throttle (email, failures) VALUES ($1, 9)', [user.email]);
    const wrong = await as(user, 'POST', '/auth/v1/confirm', { password: 'guess number ten' });
    expect([wrong.statusCode, wrong.json().error]).toEqual([400, 'AUTH_005']);
    const locked = await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    expect([locked.statusCode, locked.json().error]).toEqual([429, 'RATE_LIMITED']);
    const change = await as(user, 'POST', '/auth/v1/password', { current_password: 'correct horse battery', new_password: 'a brand new secret' });
    expect(change.statusCode).toBe(429);
    expect((await login(user.email, 'correct horse battery')).statusCode).toBe(429);
  });

  it('with a code when two-factor is on; signing in with a code counts as confirming', async () => {
    const user = await staff('admin');
    await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    const setup = (await as(user, 'POST', '/auth/v1/two-factor/setup')).json();
    await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
    const later = await generate({ secret: setup.secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const session = await signIn(user.email, 'correct horse battery', later);
    expect((await as(session, 'POST', '/admin/v1/users', { email: email('new'), role: 'support' })).statusCode).toBe(201);
    await service.ctx.db.query(`UPDATE sessions SET confirmed_at = NULL WHERE user_id = $1`, [user.id]);
    const refused = await as(session, 'POST', '/admin/v1/users', { email: email('new'), role: 'support' });
    expect(refused.json().data).toEqual({ method: 'otp' });
    const byPassword = await as(session, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    expect([byPassword.statusCode, byPassword.json().error, byPassword.json().data]).toEqual([400, 'AUTH_005', { method: 'otp' }]);
    // Still signed in: a wrong code never ends the session.
    expect((await as(session, 'GET', '/auth/v1/me')).statusCode).toBe(200);
  });
});

describe('the audit log', () => {
  it('names the person, their address and the values before and after; the token acts as "token"', async () => {
    const user = await staff('admin');
    await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    const target = await createUser('support');
    const res = await as(user, 'PATCH', `/admin/v1/users/${target.id}`, { role: 'finance' });
    expect(res.statusCode, res.body).toBe(200);
    const log = (await as(user, 'GET', `/admin/v1/audit?object_id=${target.id}&action=user.`)).json();
    expect(log.entries[0]).toMatchObject({
      actor: user.email,
      user_id: user.id,
      ip: '127.0.0.1',
      action: 'user.update',
      before: expect.objectContaining({ role: 'support' }),
      after: expect.objectContaining({ role: 'finance' }),
    });
    expect(log.entries[1]).toMatchObject({ actor: 'token', action: 'user.create', user_id: null });
    expect(log.total).toBe(2);
  });

  it('an admin cannot switch off or demote themselves', async () => {
    const user = await staff('admin');
    const res = await as(user, 'PATCH', `/admin/v1/users/${user.id}`, { role: 'support' });
    expect([res.statusCode, res.json().error]).toEqual([409, 'CONFLICT']);
  });
});

describe('first sign-in', () => {
  it('staff made with a generated password choose their own before anything else, and the API says so', async () => {
    const created = await adminOk<{ id: string; email: string; password: string }>(app, 'POST', '/users', { email: email('first'), role: 'support' });
    const res = await login(created.email, created.password);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().must_change_password).toBe(true);
    const session = await signIn(created.email, created.password);
    expect((await as(session, 'GET', '/auth/v1/me')).json()).toMatchObject({ must_change_password: true });

    // Nothing but "who am I", signing out and choosing a password, with a sentence saying what to do.
    const refused = await as(session, 'GET', '/admin/v1/payments');
    expect([refused.statusCode, refused.json().error, refused.json().data]).toEqual([403, 'AUTH_006', { password_change_required: true }]);
    expect(refused.json().message).toMatch(/choose your own first \(POST \/auth\/v1\/password/);
    expect((await as(session, 'GET', '/auth/v1/sessions')).json().error).toBe('AUTH_006');
    expect((await as(session, 'POST', '/auth/v1/confirm', { password: created.password })).json().error).toBe('AUTH_006');

    const changed = await as(session, 'POST', '/auth/v1/password', { current_password: created.password, new_password: 'my very own secret' });
    expect(changed.statusCode, changed.body).toBe(204);
    expect((await as(session, 'GET', '/auth/v1/me')).json().must_change_password).toBe(false);
    expect((await as(session, 'GET', '/admin/v1/payments')).statusCode).toBe(200);
    expect(await adminOk(app, 'GET', `/users/${created.id}`)).toMatchObject({ must_change_password: false });

    // An admin's reset hands out a password someone else read: chosen again at the next sign-in.
    const reset = await adminOk<{ id: string; email: string; password: string }>(app, 'POST', `/users/${created.id}/password`);
    expect(reset).toEqual({ id: created.id, email: created.email, password: expect.stringMatching(/^\S{20}$/) });
    expect((await login(created.email, reset.password)).json().must_change_password).toBe(true);

    // A password the admin chose with the person, and the cabinets' sign-ins, are not asked again.
    const chosen = await createUser('support');
    expect((await login(chosen.email, chosen.password)).json().must_change_password).toBe(false);
    const executor = await createExecutor(app);
    const cabinet = await adminOk<{ email: string; password: string }>(app, 'POST', `/executors/${executor.id}/login`, { email: email('executor') });
    expect((await login(cabinet.email, cabinet.password)).json().must_change_password).toBe(false);
  });

  it('a fresh install requires two-factor of admin and finance; the first admin gets in: their own password, then enrolment', async () => {
    const fresh = await startTestService({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' });
    try {
      expect(await adminOk(fresh.app, 'GET', '/two-factor-roles')).toEqual({ roles: ['finance', 'admin'] });
      // The first admin, as `kassir user create` makes them: a generated password.
      const first = await adminOk<{ email: string; password: string }>(fresh.app, 'POST', '/users', { email: 'owner@kassir.test', role: 'admin' });
      let session = await personSignIn(fresh.app, first.email, first.password);
      expect((await asPerson(fresh.app, session, 'GET', '/admin/v1/payments')).json().error).toBe('AUTH_006');
      const own = 'the owner’s own secret';
      expect((await asPerson(fresh.app, session, 'POST', '/auth/v1/password', { current_password: first.password, new_password: own })).statusCode).toBe(204);
      const closed = await asPerson(fresh.app, session, 'GET', '/admin/v1/payments');
      expect([closed.statusCode, closed.json().error, closed.json().data]).toEqual([403, 'AUTH_003', { two_factor_required: true }]);
      expect((await asPerson(fresh.app, session, 'GET', '/auth/v1/me')).json()).toMatchObject({ two_factor: false, two_factor_required: true });
      // Enrolling is open to them (confirm with the password, set up, a first code).
      await asPerson(fresh.app, session, 'POST', '/auth/v1/confirm', { password: own });
      const setup = (await asPerson(fresh.app, session, 'POST', '/auth/v1/two-factor/setup')).json();
      const enabled = await asPerson(fresh.app, session, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
      expect(enabled.statusCode, enabled.body).toBe(200);
      expect((await asPerson(fresh.app, session, 'GET', '/admin/v1/payments')).statusCode).toBe(200);
      session = await personSignIn(fresh.app, first.email, own, enabled.json().recovery_codes[0]);
      expect((await asPerson(fresh.app, session, 'GET', '/admin/v1/users')).statusCode).toBe(200);

      // Finance is held the same way; support is not, unless the operator says so.
      const finance = await adminOk<{ email: string }>(fresh.app, 'POST', '/users', {
        email: 'money@kassir.test',
        role: 'finance',
        password: 'correct horse battery',
      });
      const financeSession = await personSignIn(fresh.app, finance.email, 'correct horse battery');
      expect((await asPerson(fresh.app, financeSession, 'GET', '/admin/v1/payouts')).json().data).toEqual({ two_factor_required: true });
      const support = await adminOk<{ email: string }>(fresh.app, 'POST', '/users', {
        email: 'help@kassir.test',
        role: 'support',
        password: 'correct horse battery',
      });
      const supportSession = await personSignIn(fresh.app, support.email, 'correct horse battery');
      expect((await asPerson(fresh.app, supportSession, 'GET', '/admin/v1/payouts')).statusCode).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});

describe('a wrong code inside a session', () => {
  it('at enrolment and in "Confirm it is you" answers 400 AUTH_005 and the session stays', async () => {
    const user = await staff('finance');
    const confirmWrong = await as(user, 'POST', '/auth/v1/confirm', { password: 'not my password' });
    expect([confirmWrong.statusCode, confirmWrong.json().error]).toEqual([400, 'AUTH_005']);
    await as(user, 'POST', '/auth/v1/confirm', { password: 'correct horse battery' });
    const setup = (await as(user, 'POST', '/auth/v1/two-factor/setup')).json();
    const enrolWrong = await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: '123456' });
    expect([enrolWrong.statusCode, enrolWrong.json().error]).toEqual([400, 'AUTH_005']);
    // The same session goes on: enrolment finishes with the right code.
    const enabled = await as(user, 'POST', '/auth/v1/two-factor/enable', { otp: await generate({ secret: setup.secret }) });
    expect(enabled.statusCode, enabled.body).toBe(200);
    const codeWrong = await as(user, 'POST', '/auth/v1/confirm', { otp: '000000' });
    expect([codeWrong.statusCode, codeWrong.json().error, codeWrong.json().data]).toEqual([400, 'AUTH_005', { method: 'otp' }]);
    expect((await as(user, 'GET', '/auth/v1/me')).statusCode).toBe(200);
    // Signing in keeps answering 401 AUTH_002 for a wrong password (DESIGN.md).
    expect((await login(user.email, 'not my password')).json().error).toBe('AUTH_002');
    // The OpenAPI document says so.
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/auth/v1/confirm', '/auth/v1/two-factor/enable']) expect(Object.keys(doc.paths[path].post.responses)).toContain('400');
  });
});

describe('audit of sign-ins', () => {
  it('failed sign-ins and the lock they lead to are found by the email', async () => {
    const user = await createUser('support');
    await service.ctx.db.query('INSERT INTO login_throttle (email, failures) VALUES ($1, 8)', [user.email]);
    expect((await login(user.email, 'wrong guess one')).statusCode).toBe(401);
    expect((await login(user.email, 'wrong guess two')).statusCode).toBe(401);
    expect((await login(user.email, user.password)).statusCode).toBe(429);
    const log = await adminOk<{ entries: { action: string; object_type: string; object_id: string; after: unknown }[] }>(
      app,
      'GET',
      `/audit?object_id=${encodeURIComponent(user.email)}`,
    );
    expect(log.entries.map((e) => [e.action, e.object_type, e.after])).toEqual([
      ['auth.login_failed', 'sign-in', { reason: 'RATE_LIMITED' }],
      ['auth.locked', 'sign-in', { minutes: 15 }],
      ['auth.login_failed', 'sign-in', { reason: 'AUTH_002' }],
      ['auth.login_failed', 'sign-in', { reason: 'AUTH_002' }],
    ]);
  });
});

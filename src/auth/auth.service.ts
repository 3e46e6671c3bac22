import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Queryable, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { PersonActor } from '../lib/actor.js';
import { hashToken, randomToken } from '../lib/crypto.js';
import { getSetting, putSetting } from '../settings.repo.js';
import {
  checkNewPassword,
  generatePassword,
  generateRecoveryCodes,
  hashPassword,
  looksLikeRecoveryCode,
  newTotpEnrolment,
  passwordMatches,
  recoveryCodeHash,
  totpStep,
} from './factors.js';
import * as sessions from './sessions.repo.js';
import * as users from './users.repo.js';
import { ROLES, type Role, STAFF_ROLES, type StaffRole, type UserRow } from './users.repo.js';

/** Failed sign-ins are counted over this window per email... */
const FAILURE_WINDOW_SECONDS = 3600;
/** ...answered slower and slower from the third on... */
const SLOW_AFTER = 3;
/** ...and lock the email for a while at the tenth. */
const LOCK_AFTER = 10;
const LOCK_SECONDS = 15 * 60;
export const LOCK_MINUTES = LOCK_SECONDS / 60;
/** A risky action needs the person to have confirmed it was them this recently. */
export const CONFIRM_FRESH_SECONDS = 5 * 60;
/** A session's last-seen time is written at most this often (not on every request). */
const TOUCH_EVERY_SECONDS = 60;

const WRONG_CREDENTIALS = 'Wrong email, password or code';

export interface Client {
  ip: string;
  userAgent: string | null;
}

export interface SignIn {
  user: UserRow;
  session: sessions.SessionRow;
  /** The cookie's value: shown to the browser once, stored only as a hash. */
  token: string;
}

/** Emails are compared and stored in lower case, without surrounding spaces. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** What a refused sign-in tells its caller, for the audit log: the answer's key, and whether this attempt locked the email. */
export interface SignInFailure {
  email: string;
  reason: 'AUTH_002' | 'RATE_LIMITED';
  /** This failure was the one that locked the email. */
  locked: boolean;
}

/**
 * Counts an attempt for the email before anything is checked (sessions.repo reserveAttempt), and
 * slows it when earlier ones failed: a burst, on any number of instances, gets at most LOCK_AFTER
 * checks. Locked: 429 with how long it holds.
 */
async function takeAttempt(ctx: AppContext, email: string, lockedMessage: (minutes: number) => string): Promise<sessions.Attempt> {
  const reserved = await sessions.reserveAttempt(ctx.db, email, FAILURE_WINDOW_SECONDS, LOCK_AFTER, LOCK_SECONDS);
  if ('lockedSeconds' in reserved) {
    throw new DomainError('RATE_LIMITED', lockedMessage(Math.ceil(reserved.lockedSeconds / 60)), undefined, { retryAfter: reserved.lockedSeconds });
  }
  const { attempt } = reserved;
  if (attempt.before >= SLOW_AFTER) await sleep(Math.min(250 * 2 ** (attempt.before - SLOW_AFTER), 3000));
  return attempt;
}

/**
 * DESIGN.md: `POST /auth/v1/login {email, password, otp?}`. A wrong password, a wrong code and an
 * unknown email all get the same AUTH_002 after the same work (a password hash is checked either
 * way); every attempt per email is counted before its check, answered slower from the third
 * failure, and the tenth locks the email. With two-factor enrolled and no code sent, the answer
 * says a code is needed — only to someone who knew the password (that attempt is handed back).
 * `record` writes the sign-in's audit row in the transaction that starts the session; `onFailure`
 * hears of each refusal (the route audits it).
 */
export async function login(
  ctx: AppContext,
  input: { email: string; password: string; otp?: string },
  client: Client,
  record: (tx: Queryable, signIn: SignIn) => Promise<void>,
  onFailure: (failure: SignInFailure) => Promise<void> = async () => undefined,
): Promise<SignIn> {
  const email = normaliseEmail(input.email);
  let attempt: sessions.Attempt;
  try {
    attempt = await takeAttempt(
      ctx,
      email,
      (minutes) => `Too many failed sign-ins for this email; try again in ${minutes} min, or ask an admin to reset the password`,
    );
  } catch (err) {
    if (err instanceof DomainError) await onFailure({ email, reason: 'RATE_LIMITED', locked: false });
    throw err;
  }
  const refuse = async (): Promise<never> => {
    await onFailure({ email, reason: 'AUTH_002', locked: attempt.locked });
    throw new DomainError('AUTH_002', WRONG_CREDENTIALS);
  };

  const user = await users.findUserByEmail(ctx.db, email);
  const passwordOk = await passwordMatches(user?.password_hash, input.password);
  if (!user || !passwordOk || !user.is_active) return refuse();
  let secondFactor = false;
  if (user.totp_enabled_at) {
    if (!input.otp) {
      await sessions.refundAttempt(ctx.db, email, attempt);
      throw new DomainError('AUTH_002', 'Enter the six-digit code from your authenticator app, or a recovery code', { otp_required: true });
    }
    if (!(await secondFactorMatches(ctx, user, input.otp))) return refuse();
    secondFactor = true;
  }
  const token = randomToken('', 32);
  return transaction(ctx.db, async (tx) => {
    await sessions.clearThrottle(tx, email);
    const session = await sessions.insertSession(tx, {
      tokenHash: hashToken(token),
      userId: user.id,
      csrfToken: randomToken('', 24),
      ip: client.ip,
      userAgent: client.userAgent,
      ttlSeconds: ctx.config.sessions.maxSeconds,
      confirmed: secondFactor,
    });
    const signIn = { user, session, token };
    // No session starts without its audit row.
    await record(tx, signIn);
    return signIn;
  });
}

/** A code from the authenticator (each time step accepted once) or an unused recovery code (spent). */
async function secondFactorMatches(ctx: AppContext, user: UserRow, code: string): Promise<boolean> {
  if (!user.totp_secret) return false;
  if (looksLikeRecoveryCode(code)) return users.spendRecoveryCode(ctx.db, user.id, recoveryCodeHash(code));
  const step = await totpStep(ctx.box.open(user.totp_secret), code.trim());
  return step !== undefined && (await users.acceptTotpStep(ctx.db, user.id, step));
}

/**
 * The person a session cookie names, or undefined when the session is unknown, revoked, past its
 * absolute expiry, idle too long, or its user was switched off. Marks the session used.
 */
export async function resolveSession(ctx: AppContext, token: string): Promise<PersonActor | undefined> {
  const row = await sessions.findLiveSession(ctx.db, hashToken(token));
  if (!row?.is_active) return undefined;
  if (row.idle_seconds > ctx.config.sessions.idleSeconds) {
    await sessions.revokeSession(ctx.db, row.user_id, row.id);
    return undefined;
  }
  if (row.idle_seconds > TOUCH_EVERY_SECONDS) await sessions.touchSession(ctx.db, row.id);
  const required = parseRoles(row.two_factor_roles);
  return {
    kind: 'user',
    id: row.user_id,
    email: row.email,
    role: row.role,
    executorId: row.executor_id,
    merchantId: row.merchant_id,
    sessionId: row.id,
    csrfToken: row.csrf_token,
    twoFactor: row.two_factor,
    twoFactorRequired: required.includes(row.role),
    mustChangePassword: row.must_change_password,
    confirmedAt: row.confirmed_at,
  };
}

export async function logout(ctx: AppContext, actor: PersonActor): Promise<void> {
  await sessions.revokeSession(ctx.db, actor.id, actor.sessionId);
}

/**
 * A password or code check made within a session (confirming, changing the password, turning
 * two-factor off) counts against the same per-email limit as signing in: a stolen session cookie
 * must not become unlimited guesses at the password or the code. Counted before the check; a
 * right one is handed back. Locked: 429.
 */
async function guardedCheck(ctx: AppContext, email: string, check: () => Promise<boolean>): Promise<boolean> {
  const attempt = await takeAttempt(ctx, email, (minutes) => `Too many wrong passwords or codes; try again in ${minutes} min`);
  if (!(await check())) return false;
  await sessions.refundAttempt(ctx.db, email, attempt);
  return true;
}

/** Whether the person confirmed it was them recently enough for a risky action. */
export function recentlyConfirmed(actor: PersonActor): boolean {
  return actor.confirmedAt !== null && Date.now() - actor.confirmedAt.getTime() < CONFIRM_FRESH_SECONDS * 1000;
}

/**
 * `POST /auth/v1/confirm`: the person proves again it is them before risky actions — with a code
 * when two-factor is enrolled, with the password otherwise. Good for CONFIRM_FRESH_SECONDS.
 */
export async function confirm(ctx: AppContext, actor: PersonActor, input: { otp?: string; password?: string }): Promise<Date> {
  const user = await mustFindUser(ctx, actor.id);
  const ok = await guardedCheck(ctx, user.email, async () =>
    user.totp_enabled_at
      ? input.otp !== undefined && (await secondFactorMatches(ctx, user, input.otp))
      : input.password !== undefined && (await passwordMatches(user.password_hash, input.password)),
  );
  if (!ok) {
    // Not 401: the session is alive, and the person stays where they were to try again.
    throw new DomainError(
      'WRONG_CODE',
      user.totp_enabled_at ? 'The code is wrong; try again with the current code from your authenticator app' : 'The password is wrong; try again',
      { method: user.totp_enabled_at ? 'otp' : 'password' },
    );
  }
  await sessions.confirmSession(ctx.db, actor.sessionId);
  return new Date();
}

/** Starts two-factor enrolment: a new secret, kept until confirmed with a code from it. */
export async function startTwoFactor(ctx: AppContext, actor: PersonActor): Promise<{ secret: string; uri: string; qr: string }> {
  const enrolment = await newTotpEnrolment(actor.email, 'Kassir');
  if (!(await users.setPendingTotpSecret(ctx.db, actor.id, ctx.box.seal(enrolment.secret)))) {
    throw new DomainError('CONFLICT', 'Two-factor is already on; turn it off first to enrol a new device');
  }
  return enrolment;
}

/** Confirms enrolment with a first code; answers the recovery codes, shown this once. Audited in the same transaction. */
export async function enableTwoFactor(ctx: AppContext, actor: PersonActor, otp: string, record: AuditRecorder): Promise<{ recovery_codes: string[] }> {
  return transaction(ctx.db, async (tx) => {
    const user = await users.findUser(tx, actor.id, true);
    if (!user) throw new DomainError('NOT_FOUND', 'User not found');
    if (user.totp_enabled_at) throw new DomainError('CONFLICT', 'Two-factor is already on');
    if (!user.totp_secret) throw new DomainError('CONFLICT', 'Start enrolment first: POST /auth/v1/two-factor/setup');
    const step = await totpStep(ctx.box.open(user.totp_secret), otp.trim());
    if (step === undefined || !(await users.acceptTotpStep(tx, user.id, step))) {
      throw new DomainError('WRONG_CODE', 'The code is wrong; try again: check the time on your phone and enter the current code');
    }
    const { codes, hashes } = generateRecoveryCodes();
    await users.enableTotp(tx, user.id, hashes);
    // The code just given proves the person is here: risky actions may follow without asking again.
    await sessions.confirmSession(tx, actor.sessionId);
    await record(tx, 'auth.two_factor_on', 'user', user.id, { two_factor: false }, { two_factor: true });
    return { recovery_codes: codes };
  });
}

/** Turns one's own two-factor off, with a current code; refused when the role requires it. Audited in the same transaction. */
export async function disableTwoFactor(ctx: AppContext, actor: PersonActor, otp: string, record: AuditRecorder): Promise<void> {
  if (actor.twoFactorRequired)
    throw new DomainError('AUTH_003', `Two-factor is required for the ${actor.role} role; an admin can reset it if the phone is lost`);
  const user = await mustFindUser(ctx, actor.id);
  if (!user.totp_enabled_at) throw new DomainError('CONFLICT', 'Two-factor is not on');
  if (!(await guardedCheck(ctx, user.email, () => secondFactorMatches(ctx, user, otp))))
    throw new DomainError('WRONG_CODE', 'The code is wrong; try again with the current code from your authenticator app');
  await transaction(ctx.db, async (tx) => {
    // Read again under the row's lock: turned off meanwhile (another session) is not turned off twice.
    if (!(await users.findUser(tx, user.id, true))?.totp_enabled_at) throw new DomainError('CONFLICT', 'Two-factor is not on');
    await users.disableTotp(tx, user.id);
    await record(tx, 'auth.two_factor_off', 'user', user.id, { two_factor: true }, { two_factor: false });
  });
}

/** Changes one's own password (also the first thing a person with a generated one does); the person's other sessions end. Audited in the same transaction. */
export async function changePassword(ctx: AppContext, actor: PersonActor, current: string, next: string, record: AuditRecorder): Promise<void> {
  checkNewPassword(next);
  const user = await mustFindUser(ctx, actor.id);
  if (!(await guardedCheck(ctx, user.email, () => passwordMatches(user.password_hash, current)))) {
    throw new DomainError('WRONG_CODE', 'The current password is wrong; try again');
  }
  const passwordHash = await hashPassword(next);
  await transaction(ctx.db, async (tx) => {
    await users.setPasswordHash(tx, user.id, passwordHash);
    await sessions.revokeUserSessions(tx, user.id, actor.sessionId);
    await record(tx, 'auth.change_password', 'user', user.id, null, null);
  });
}

async function mustFindUser(ctx: AppContext, id: string): Promise<UserRow> {
  const user = await users.findUser(ctx.db, id);
  if (!user) throw new DomainError('NOT_FOUND', `User ${id} not found`);
  return user;
}

// ---------------------------------------------------------------------------------------------
// Managing people (admins, and the CLI with the bearer token)
// ---------------------------------------------------------------------------------------------

export interface NewUserInput {
  email: string;
  role: Role;
  password?: string;
  executorId?: string;
  merchantId?: string;
}

/**
 * Creates a sign-in; a generated password when none was given, answered once. Staff with a
 * generated password choose their own at first sign-in (whoever read it out knows it). Audited in
 * the same transaction.
 */
export async function createUser(ctx: AppContext, input: NewUserInput, record: AuditRecorder): Promise<{ user: UserRow; password: string }> {
  const email = normaliseEmail(input.email);
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new DomainError('VALIDATION', `"${input.email}" is not an email address`, { email: input.email });
  if (input.password !== undefined) checkNewPassword(input.password);
  const password = input.password ?? generatePassword();
  const passwordHash = await hashPassword(password);
  const user = await transaction(ctx.db, async (tx) => {
    const created = await users.insertUser(tx, {
      email,
      role: input.role,
      passwordHash,
      executorId: input.executorId,
      merchantId: input.merchantId,
      mustChangePassword: input.password === undefined && isStaff(input.role),
    });
    await record(tx, 'user.create', 'user', created.id, null, toUser(created));
    return created;
  });
  return { user, password };
}

export async function getUser(ctx: AppContext, id: string): Promise<UserRow> {
  return mustFindUser(ctx, id);
}

/**
 * Changes a user's role or switches the sign-in off (which ends its sessions at once); audited in
 * the same transaction, with `reason` when given.
 */
export async function updateUser(
  ctx: AppContext,
  actor: { id?: string },
  id: string,
  patch: { role?: StaffRole; is_active?: boolean },
  reason: string | undefined,
  record: AuditRecorder,
): Promise<UserRow> {
  if (actor.id === id && (patch.is_active === false || (patch.role !== undefined && patch.role !== 'admin'))) {
    throw new DomainError('CONFLICT', 'You cannot switch off or demote yourself; ask another admin');
  }
  return transaction(ctx.db, async (tx) => {
    const before = await users.findUser(tx, id, true);
    if (!before) throw new DomainError('NOT_FOUND', `User ${id} not found`);
    if (patch.role !== undefined && !(STAFF_ROLES as readonly string[]).includes(before.role)) {
      throw new DomainError('CONFLICT', `The ${before.role} sign-in's role cannot be changed`);
    }
    const after = await users.updateUserFields(tx, id, patch);
    if (patch.is_active === false || (patch.role !== undefined && patch.role !== before.role)) await sessions.revokeUserSessions(tx, id);
    await record(tx, 'user.update', 'user', id, toUser(before), { ...toUser(after), ...(reason ? { reason } : {}) });
    return after;
  });
}

function isStaff(role: Role): boolean {
  return (STAFF_ROLES as readonly string[]).includes(role);
}

/**
 * An admin's password reset: a new generated password (answered once); the user's sessions end.
 * Staff choose their own at the next sign-in. Audited in the same transaction.
 */
export async function resetPassword(ctx: AppContext, id: string, record: AuditRecorder): Promise<{ user: UserRow; password: string }> {
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return transaction(ctx.db, async (tx) => {
    const user = await users.findUser(tx, id, true);
    if (!user) throw new DomainError('NOT_FOUND', `User ${id} not found`);
    await users.setPasswordHash(tx, id, passwordHash, isStaff(user.role));
    await sessions.revokeUserSessions(tx, id);
    await sessions.clearThrottle(tx, user.email);
    await record(tx, 'user.reset_password', 'user', id, null, { email: user.email });
    return { user, password };
  });
}

/** An admin's reset of a lost second factor: the user enrols again at the next sign-in. Audited in the same transaction. */
export async function resetTwoFactor(ctx: AppContext, id: string, record: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    if (!(await users.findUser(tx, id, true))) throw new DomainError('NOT_FOUND', `User ${id} not found`);
    await users.disableTotp(tx, id);
    await sessions.revokeUserSessions(tx, id);
    await record(tx, 'user.reset_two_factor', 'user', id, null, null);
  });
}

const TWO_FACTOR_ROLES_KEY = 'two_factor_roles';

/** Until the operator chooses, two-factor is required of those who move money and manage people. */
export const DEFAULT_TWO_FACTOR_ROLES: Role[] = ['finance', 'admin'];

/** The two_factor_roles setting as stored (a JSON array written by setTwoFactorRoles), or the default. */
function parseRoles(stored: string | null | undefined): Role[] {
  return stored ? (JSON.parse(stored) as Role[]) : DEFAULT_TWO_FACTOR_ROLES;
}

/** The roles the operator requires two-factor of. */
export async function twoFactorRoles(ctx: AppContext): Promise<Role[]> {
  const stored = await getSetting(ctx.db, TWO_FACTOR_ROLES_KEY);
  return parseRoles(stored);
}

/** Requires two-factor of these roles; the roles before are read under the setting's lock and audited with the change. */
export async function setTwoFactorRoles(ctx: AppContext, roles: Role[], record: AuditRecorder): Promise<Role[]> {
  const unique = ROLES.filter((role) => roles.includes(role));
  return transaction(ctx.db, async (tx) => {
    const before = parseRoles(await getSetting(tx, TWO_FACTOR_ROLES_KEY, true));
    await putSetting(tx, TWO_FACTOR_ROLES_KEY, JSON.stringify(unique));
    await record(tx, 'settings.two_factor_roles', 'settings', TWO_FACTOR_ROLES_KEY, { roles: before }, { roles: unique });
    return unique;
  });
}

export async function listUsers(ctx: AppContext, filter: users.UserFilter): Promise<{ rows: UserRow[]; total: number }> {
  return users.listUsers(ctx.db, filter);
}

export async function listSessions(ctx: AppContext, actor: PersonActor): Promise<sessions.SessionRow[]> {
  return sessions.listUserSessions(ctx.db, actor.id);
}

/** Ends one of the person's own sessions, audited in the same transaction. */
export async function revokeSession(ctx: AppContext, actor: PersonActor, id: string, record: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    if (!(await sessions.revokeSession(tx, actor.id, id))) throw new DomainError('NOT_FOUND', `You have no session ${id}`);
    await record(tx, 'auth.revoke_session', 'session', id, null, null);
  });
}

/** The user as the API shows it: never a hash, a secret or a recovery code. */
export function toUser(user: UserRow) {
  return {
    id: user.id,
    email: user.email,
    role: user.role,
    executor_id: user.executor_id,
    merchant_id: user.merchant_id,
    is_active: user.is_active,
    two_factor: user.totp_enabled_at !== null,
    must_change_password: user.must_change_password,
    recovery_codes_left: user.totp_enabled_at ? user.recovery_codes.length : null,
    created_at: user.created_at.toISOString(),
  };
}

export function toSession(session: sessions.SessionRow, current: string) {
  return {
    id: session.id,
    current: session.id === current,
    ip: session.ip,
    user_agent: session.user_agent,
    created_at: session.created_at.toISOString(),
    last_seen_at: session.last_seen_at.toISOString(),
    expires_at: session.expires_at.toISOString(),
  };
}

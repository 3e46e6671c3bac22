import rateLimit from '@fastify/rate-limit';
import { Type } from 'typebox';
import { audit, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import {
  ConfirmIdentityAnswer,
  EnableTwoFactorAnswer,
  GetMeAnswer,
  ListSessionsAnswer,
  NoContent,
  SetupTwoFactorAnswer,
  SignInAnswer,
} from './auth.routes.answers.js';
import * as auth from './auth.service.js';
import { clearSessionCookie, person, setSessionCookie } from './session-cookie.js';

const tags = ['people'];
const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1000 }),
  otp: Type.Optional(Type.String({ maxLength: 32, description: 'six-digit code from the authenticator app, or a recovery code' })),
});
const OtpBody = Type.Object({ otp: Type.String({ minLength: 1, maxLength: 32 }) });
const ConfirmBody = Type.Object({
  otp: Type.Optional(Type.String({ maxLength: 32, description: 'with two-factor on' })),
  password: Type.Optional(Type.String({ maxLength: 1000, description: 'with two-factor off' })),
});
const PasswordBody = Type.Object({ current_password: Type.String({ maxLength: 1000 }), new_password: Type.String({ maxLength: 1000 }) });
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
/** A wrong code or password inside a live session: 400, never 401 (which means the session has ended). */
const WRONG_CODE = 'The code (or the password) is wrong: the session stays, try again (`data.method` says which is expected where it may be either)';
/** Routes a person with a generated password cannot use before choosing their own. */
const FIRST_PASSWORD = 'The password you signed in with was generated for you: choose your own first (`POST /auth/v1/password`)';
/** Too many wrong passwords or codes for the email: the same lock as signing in. */
const LOCKED = 'Too many wrong passwords or codes for this email: locked for a while (`Retry-After`)';

/** A person's own routes: sign in and out, their sessions, password and two-factor (DESIGN.md "People, sessions and roles"). */
export async function authRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  await app.register(rateLimit, { global: false });

  app.post(
    '/login',
    {
      schema: {
        documentedResponse: { 200: SignInAnswer },
        tags,
        summary: 'Sign in; sets the session cookie and answers the CSRF token',
        description:
          'With two-factor on, send `otp` too: without it the answer is `401 AUTH_002` with `data.otp_required`. Failures per email are answered slower from the third and lock the email at the tenth.',
        body: LoginBody,
        errors: {
          AUTH_002: 'Wrong email, password or code (the same answer for each), or a code is needed (`data.otp_required`)',
          RATE_LIMITED: `Too many sign-ins from this address in a minute; or ${LOCKED.replace(/^T/, 't')}`,
        },
      },
      config: {
        secret: true,
        access: 'public',
        // Per client address, on top of the per-email slowing and lock.
        rateLimit: {
          max: ctx.config.sessions.loginsPerMinute,
          timeWindow: 60_000,
          errorResponseBuilder: () => new DomainError('RATE_LIMITED', 'Too many sign-ins from this address; wait a minute'),
        },
      },
    },
    async (request, reply) => {
      const client = { ip: request.ip, userAgent: request.headers['user-agent'] ?? null };
      const { user, session, token } = await auth.login(
        ctx,
        request.body,
        client,
        // The session starts in the transaction of its row; no one is signed in yet, so the row names the person.
        (tx, started) =>
          audit(
            tx,
            request,
            'auth.login',
            'user',
            started.user.id,
            null,
            { session: started.session.id, two_factor: started.user.totp_enabled_at !== null },
            { name: started.user.email, userId: started.user.id },
          ),
        // Failed sign-ins and the lock they lead to are in the audit log too, under the email tried (as
        // the actor and as the object, so the Audit screen finds them by the email); never the password.
        // Written on their own, not in a transaction with a change: a refusal changes nothing but the
        // attempt count, and that count commits before the password is checked (sessions.repo
        // reserveAttempt), on purpose — holding its row through a slow hash check would queue every
        // attempt at the email behind it, and a burst must be counted even if this process dies.
        // Lost with a crash, the row loses the record of a refused attempt, never of a change.
        async (failure) => {
          await audit(ctx.db, request, 'auth.login_failed', 'sign-in', failure.email, null, { reason: failure.reason }, failure.email);
          if (failure.locked) await audit(ctx.db, request, 'auth.locked', 'sign-in', failure.email, null, { minutes: auth.LOCK_MINUTES }, failure.email);
        },
      );
      request.actor = await auth.resolveSession(ctx, token);
      setSessionCookie(request, reply, token, ctx.config.sessions.maxSeconds);
      // A generated password (a new staff sign-in, an admin's reset) is replaced before anything else.
      return { user: { id: user.id, email: user.email, role: user.role }, csrf_token: session.csrf_token, must_change_password: user.must_change_password };
    },
  );

  app.post(
    '/logout',
    { schema: { documentedResponse: { 204: NoContent }, tags, summary: 'Sign out: ends this session' }, config: { access: 'person', firstSignIn: true } },
    async (request, reply) => {
      await auth.logout(ctx, person(request));
      clearSessionCookie(request, reply);
      return reply.status(204).send();
    },
  );

  app.get(
    '/me',
    {
      schema: { documentedResponse: { 200: GetMeAnswer }, tags, summary: 'Who is signed in, with the CSRF token' },
      config: { secret: true, access: 'person', firstSignIn: true },
    },
    async (request) => {
      const me = person(request);
      return {
        user: { id: me.id, email: me.email, role: me.role, executor_id: me.executorId, merchant_id: me.merchantId },
        two_factor: me.twoFactor,
        two_factor_required: me.twoFactorRequired,
        must_change_password: me.mustChangePassword,
        confirmed_until: me.confirmedAt ? new Date(me.confirmedAt.getTime() + auth.CONFIRM_FRESH_SECONDS * 1000).toISOString() : null,
        csrf_token: me.csrfToken,
      };
    },
  );

  app.post(
    '/confirm',
    {
      schema: {
        documentedResponse: { 200: ConfirmIdentityAnswer },
        tags,
        summary: 'Confirm it is you before risky actions (a code, or the password without two-factor)',
        description: 'Risky actions (`403 AUTH_004` until then) are allowed for five minutes from now (`confirmed_until`).',
        body: ConfirmBody,
        errors: { WRONG_CODE, RATE_LIMITED: LOCKED, PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD },
      },
      config: { access: 'person' },
    },
    async (request) => {
      const at = await auth.confirm(ctx, person(request), request.body);
      return { confirmed_until: new Date(at.getTime() + auth.CONFIRM_FRESH_SECONDS * 1000).toISOString() };
    },
  );

  app.get(
    '/sessions',
    {
      schema: {
        documentedResponse: { 200: ListSessionsAnswer },
        tags,
        summary: 'My sessions still in force',
        errors: { PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD },
      },
      config: { access: 'person' },
    },
    async (request) => {
      const me = person(request);
      return { sessions: (await auth.listSessions(ctx, me)).map((s) => auth.toSession(s, me.sessionId)) };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'End one of my sessions',
        params: IdParams,
        errors: { PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD },
      },
      config: { access: 'person' },
    },
    async (request, reply) => {
      await auth.revokeSession(ctx, person(request), request.params.id, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.post(
    '/password',
    {
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'Change my password; my other sessions end',
        description:
          'Also the first step of a person who signed in with a password generated for them (`must_change_password` at sign-in): nothing else is open to them until they do.',
        body: PasswordBody,
        errors: {
          WRONG_CODE: 'The current password is wrong: the session stays, try again',
          VALIDATION: 'Invalid parameters: the message names the field (a new password shorter than 10 characters)',
          RATE_LIMITED: LOCKED,
        },
      },
      config: { access: 'person', firstSignIn: true },
    },
    async (request, reply) => {
      await auth.changePassword(ctx, person(request), request.body.current_password, request.body.new_password, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.post(
    '/two-factor/setup',
    // Confirmed first: whoever holds only a stolen session must not tie the account to their own phone.
    {
      schema: {
        documentedResponse: { 200: SetupTwoFactorAnswer },
        tags,
        summary: 'Start two-factor enrolment: a secret and its QR code for the authenticator app',
        description: 'Needs a fresh confirmation (`POST /auth/v1/confirm`): a stolen session alone cannot tie the account to another phone.',
        errors: { CONFLICT: 'Two-factor is already on: turn it off first to enrol a new device', PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD },
      },
      config: { secret: true, access: 'person', confirm: true },
    },
    async (request) => {
      const { secret, uri, qr } = await auth.startTwoFactor(ctx, person(request));
      return { secret, otpauth_url: uri, qr_code: qr };
    },
  );

  app.post(
    '/two-factor/enable',
    {
      schema: {
        documentedResponse: { 200: EnableTwoFactorAnswer },
        tags,
        summary: 'Finish enrolment with a code from the app; answers recovery codes once',
        body: OtpBody,
        errors: {
          WRONG_CODE: 'The code is wrong: the session stays; check the time on the phone and try again',
          CONFLICT: 'Two-factor is already on, or enrolment was not started (`POST /auth/v1/two-factor/setup`)',
          PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD,
        },
      },
      config: { secret: true, access: 'person' },
    },
    async (request) => {
      return auth.enableTwoFactor(ctx, person(request), request.body.otp, auditFor(request));
    },
  );

  app.post(
    '/two-factor/disable',
    {
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'Turn my two-factor off (with a current code)',
        body: OtpBody,
        errors: {
          AUTH_003: 'The operator requires two-factor of your role (an admin can reset it if the phone is lost)',
          WRONG_CODE: 'The code is wrong: the session stays, try again',
          CONFLICT: 'Two-factor is not on',
          RATE_LIMITED: LOCKED,
          PASSWORD_CHANGE_REQUIRED: FIRST_PASSWORD,
        },
      },
      config: { access: 'person' },
    },
    async (request, reply) => {
      await auth.disableTwoFactor(ctx, person(request), request.body.otp, auditFor(request));
      return reply.status(204).send();
    },
  );
}

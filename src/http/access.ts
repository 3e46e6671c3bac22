import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { recentlyConfirmed, resolveSession } from '../auth/auth.service.js';
import { SESSION_COOKIE } from '../auth/session-cookie.js';
import { STAFF_ROLES, type StaffRole } from '../auth/users.repo.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import type { OperatorActor, PersonActor } from '../lib/actor.js';
import { hasRole } from '../lib/actor.js';
import { constantTimeEqual, hashToken } from '../lib/crypto.js';

/**
 * Who may call a route, declared in the route's own config so a reader sees it there:
 * - a staff role (`support`, `finance`, `admin`) on the operator API: a signed-in person of that
 *   role or above, or the bearer ADMIN_TOKEN (every role);
 * - `person`: anyone signed in (their own sessions, password, two-factor);
 * - `public`: no one in particular (signing in).
 * The merchant API (signature), the executor API (executor token) and the payment page (page
 * token) are each one audience, declared by their route group in src/http/routes.ts.
 */
export type Access = StaffRole | 'person' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call this route (src/http/access.ts). */
    access?: Access;
    /** A risky action: a person must have confirmed it was them in the last minutes (POST /auth/v1/confirm). */
    confirm?: boolean;
    /** A person's own route open before they chose their own password (who am I, sign out, change the password). */
    firstSignIn?: boolean;
  }
  interface FastifyRequest {
    /** Who acts on the operator API or a person's own routes; set by the access check. */
    actor?: OperatorActor;
  }
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Refuses at start-up a route of the group that does not say who may call it, or says something the group cannot check. */
function requireDeclaration(app: FastifyInstance, allowed: readonly Access[]): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const access = route.config?.access;
    if (!access || !allowed.includes(access)) {
      throw new Error(`${route.method} ${route.url}: declare who may call it with config.access (one of ${allowed.join(', ')})`);
    }
  });
}

/** The person a session cookie names, or undefined. */
export async function personFromCookie(ctx: AppContext, request: FastifyRequest): Promise<PersonActor | undefined> {
  const token = request.cookies[SESSION_COOKIE];
  return token ? resolveSession(ctx, token) : undefined;
}

/** A person signed in with a password generated for them does nothing else before choosing their own. */
function passwordChangeRequired(): DomainError {
  return new DomainError(
    'PASSWORD_CHANGE_REQUIRED',
    'The password you signed in with was generated for you: choose your own first (POST /auth/v1/password with current_password and new_password)',
    { password_change_required: true },
  );
}

/** A cookie-authorised request that changes something must carry the session's CSRF token. */
export function checkCsrf(request: FastifyRequest, person: PersonActor): void {
  if (!MUTATING.has(request.method)) return;
  const sent = request.headers['x-csrf-token'];
  if (typeof sent !== 'string' || !constantTimeEqual(sent, person.csrfToken)) {
    throw new DomainError('AUTH_003', 'Send the X-CSRF-Token header with the csrf_token from sign-in (GET /auth/v1/me shows it again)');
  }
}

/**
 * A risky route (`config.confirm`) needs the person to have confirmed it was them in the last few
 * minutes (`POST /auth/v1/confirm`); the answer says which proof to send. The one check every
 * audience's sessions go through (operator, person, executor and merchant cabinets).
 */
export function checkConfirmed(request: FastifyRequest, person: PersonActor): void {
  if (request.routeOptions.config.confirm && !recentlyConfirmed(person)) {
    throw new DomainError('CONFIRM_REQUIRED', undefined, { method: person.twoFactor ? 'otp' : 'password' });
  }
}

/**
 * The operator API's one check of who may call what: the bearer ADMIN_TOKEN (full access), or a
 * staff person's session whose role reaches the route's declared role, with the CSRF token on
 * changes, two-factor enrolled when the operator requires it of the role, and a fresh
 * confirmation for risky routes (`config.confirm`).
 */
export function operatorAccess(app: FastifyInstance, ctx: AppContext): void {
  requireDeclaration(app, STAFF_ROLES);
  // The OpenAPI document says the same thing the check enforces, route by route.
  app.addHook('onRoute', (route: RouteOptions) => {
    const { access, confirm } = route.config ?? {};
    if (!route.schema) return;
    const who = `**Who may call:** the bearer token, or a person with the \`${access}\` role${access === 'admin' ? '' : ' or above'}.${
      confirm ? ' **Risky:** a person must have confirmed it is them in the last five minutes (`POST /auth/v1/confirm`), else `403 AUTH_004`.' : ''
    }`;
    const schema = route.schema as { description?: string; security?: unknown };
    // The HEAD route Fastify adds for a GET shares its schema: the line is added once.
    if (!schema.description?.endsWith(who)) schema.description = schema.description ? `${schema.description}\n\n${who}` : who;
    schema.security = [{ operator: [] }, { session: [], csrf: [] }];
  });
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const { access } = request.routeOptions.config;
    const header = request.headers.authorization;
    let actor: OperatorActor;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(header);
      if (!match) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <ADMIN_TOKEN>, or sign in (POST /auth/v1/login)');
      if (!timingSafeEqual(hashToken(match[1]!), ctx.adminTokenHash)) throw new DomainError('AUTH_002', 'Invalid operator token');
      actor = { kind: 'token' };
    } else {
      const person = await personFromCookie(ctx, request);
      if (!person) throw new DomainError('AUTH_001', 'Sign in first (POST /auth/v1/login), or send Authorization: Bearer <ADMIN_TOKEN>');
      checkCsrf(request, person);
      if (!(STAFF_ROLES as readonly string[]).includes(person.role)) {
        throw new DomainError('AUTH_003', `The operator console is for operator staff; a ${person.role} signs in to their own cabinet`);
      }
      if (person.mustChangePassword) throw passwordChangeRequired();
      if (person.twoFactorRequired && !person.twoFactor) {
        throw new DomainError('AUTH_003', `Your role (${person.role}) requires two-factor: enrol it first (POST /auth/v1/two-factor/setup)`, {
          two_factor_required: true,
        });
      }
      actor = person;
    }
    if (!hasRole(actor, access as StaffRole)) {
      throw new DomainError('AUTH_003', `This needs the ${access} role; you are signed in as ${(actor as PersonActor).role}`, {
        required_role: access,
      });
    }
    if (actor.kind === 'user') checkConfirmed(request, actor);
    request.actor = actor;
  });
}

/** A person's own routes (/auth/v1): signing in is public; the rest need a live session, for changes the CSRF token, and for enrolling a second factor a fresh confirmation. */
export function personAccess(app: FastifyInstance, ctx: AppContext): void {
  requireDeclaration(app, ['public', 'person']);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config.access === 'public') return;
    const person = await personFromCookie(ctx, request);
    if (!person) throw new DomainError('AUTH_001', 'Sign in first (POST /auth/v1/login)');
    checkCsrf(request, person);
    if (person.mustChangePassword && !request.routeOptions.config.firstSignIn) throw passwordChangeRequired();
    checkConfirmed(request, person);
    request.actor = person;
  });
}

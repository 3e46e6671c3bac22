import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { checkConfirmed, checkCsrf, personFromCookie } from './access.js';

/**
 * The merchant cabinet's API check (`/merchant/v1`): the session of a merchant's own sign-in
 * (`POST /admin/v1/merchants/{id}/users`), the CSRF token on changes, and for a risky route
 * (`config.confirm`: moving money out, rotating keys) a fresh confirmation that it is the person
 * (`POST /auth/v1/confirm`). Every route reaches only its merchant's objects through
 * `request.merchantAccount`. Machines keep using the signed merchant API (`/v1`).
 */
export function merchantSessionAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const person = await personFromCookie(ctx, request);
    if (!person) throw new DomainError('AUTH_001', 'Sign in first (POST /auth/v1/login); machines use the signed merchant API (/v1)');
    if (person.role !== 'merchant' || !person.merchantId) throw new DomainError('AUTH_003', 'The merchant cabinet is for merchants; staff use /admin/v1');
    checkCsrf(request, person);
    checkConfirmed(request, person);
    request.actor = person;
    request.merchantAccount = person.merchantId;
  });
}

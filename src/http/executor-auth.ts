import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { type ExecutorIdentity, findExecutorIdentity } from '../executors/executors.repo.js';
import { executorByToken } from '../executors/executors.service.js';
import { checkConfirmed, checkCsrf, personFromCookie } from './access.js';

/**
 * The executor API's check: the executor's bearer token (its apps), or the session of the
 * executor's own sign-in (the cabinet: `POST /admin/v1/executors/{id}/login`), with the CSRF
 * token on changes, and for a risky route (`config.confirm`: sending the deposit out, adding a
 * phone) a fresh confirmation that it is the executor (`POST /auth/v1/confirm`). Either way the executor must be active, and every route reaches only its
 * own objects through `request.executor`.
 */
export function executorAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    let executor: ExecutorIdentity | undefined;
    if (match) {
      // From memory when it may be (IdentityCache, as the merchant API's callers).
      executor = await executorByToken(ctx, match[1]!);
      if (!executor) throw new DomainError('AUTH_002', 'Invalid executor token');
    } else {
      const person = await personFromCookie(ctx, request);
      if (!person) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <executor token>, or sign in (POST /auth/v1/login)');
      if (person.role !== 'executor' || !person.executorId) throw new DomainError('AUTH_003', 'The executor API is for executors; staff use /admin/v1');
      checkCsrf(request, person);
      checkConfirmed(request, person);
      request.actor = person;
      executor = await findExecutorIdentity(ctx.db, person.executorId);
      if (!executor) throw new DomainError('AUTH_002', 'Executor not found');
    }
    if (!executor.is_active) throw new DomainError('AUTH_003', 'Executor is inactive');
    request.executor = executor;
  });
}

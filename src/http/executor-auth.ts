import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { findExecutorByToken } from '../executors/executors.repo.js';
import { hashToken } from '../lib/crypto.js';

/** The executor API's bearer-token check: the token names an executor, who must be active. */
export function executorAuth(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <executor token>');
    const executor = await findExecutorByToken(ctx.db, hashToken(match[1]!));
    if (!executor) throw new DomainError('AUTH_002', 'Invalid executor token');
    if (!executor.is_active) throw new DomainError('AUTH_003', 'Executor is inactive');
    request.executor = executor;
  });
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { hashToken } from '../lib/crypto.js';
import { findExecutorByToken, type ExecutorRow } from './executors.repo.js';
import { receiveNotification, type NotificationInput } from './notifications.service.js';
import { listRequisites } from '../requisites/requisites.repo.js';
import { Requisite, toRequisite } from '../requisites/requisites.schemas.js';
import { payoutExecutorRoutes } from '../payouts/payouts.executor.js';
import { routePriority } from '../http/overload.js';

declare module 'fastify' {
  interface FastifyRequest {
    executor?: ExecutorRow;
  }
}

const tags = ['executor'];
const NotificationBody = Type.Object({
  requisite_id: Type.String({ format: 'uuid' }),
  amount: Type.Optional(Type.Number({ description: 'amount received, in the requisite currency; read from text when absent' })),
  text: Type.Optional(Type.String({ maxLength: 4000, description: 'the notification as the bank sent it (SMS or push)' })),
  received_at: Type.Optional(Type.String({ description: 'when the transfer arrived, ISO 8601' })),
});

/** The executor API (`/executor/v1`, executor bearer token): the banking-app companion's side. */
export async function executorRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Notifications and payouts complete money already on its way: served under a load that sheds
  // new payments (src/http/overload.ts).
  routePriority(app, 'high');
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match) throw new DomainError('AUTH_001', 'Send Authorization: Bearer <executor token>');
    const executor = await findExecutorByToken(ctx.db, hashToken(match[1]!));
    if (!executor) throw new DomainError('AUTH_002', 'Invalid executor token');
    if (!executor.is_active) throw new DomainError('AUTH_003', 'Executor is inactive');
    request.executor = executor;
  });

  app.post('/notifications', { schema: { tags, body: NotificationBody } }, async (request) => {
    const result = await receiveNotification(ctx, request.executor!, request.body as NotificationInput);
    return result;
  });

  app.get('/requisites', { schema: { tags, response: { 200: Type.Object({ requisites: Type.Array(Requisite) }) } } }, async (request) => ({
    requisites: (await listRequisites(ctx.db, { executorId: request.executor!.id })).map((row) => toRequisite(row)),
  }));

  await payoutExecutorRoutes(app, ctx);
}

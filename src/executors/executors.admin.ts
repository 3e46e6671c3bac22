import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { CreateRequisiteBody, Requisite, toRequisite, UpdateRequisiteBody } from '../requisites/requisites.schemas.js';
import * as requisites from '../requisites/requisites.service.js';
import * as executors from './executors.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const ExecutorBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const UpdateExecutorBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  is_active: Type.Optional(Type.Boolean()),
});

/** Operator API for executors (P2P traders) and their requisites. */
export async function executorAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post('/executors', { schema: { tags, body: ExecutorBody } }, async (request, reply) => {
    const executor = await executors.createExecutor(ctx, request.body.name);
    await audit(ctx.db, request, 'executor.create', 'executor', executor.id, null, { id: executor.id, name: executor.name });
    return reply.status(201).send({ id: executor.id, name: executor.name, token: executor.token, is_active: executor.is_active });
  });

  app.get('/executors', { schema: { tags } }, async () => ({
    executors: (await executors.listExecutors(ctx)).map((row) => ({ ...executors.toExecutor(row), requisites: row.requisites })),
  }));

  app.get('/executors/:id', { schema: { tags, params: IdParams } }, async (request) => {
    const executor = await executors.getExecutor(ctx, request.params.id);
    const rows = await requisites.listRequisites(ctx, executor.id);
    return { ...executors.toExecutor(executor), requisites: rows.map((row) => toRequisite(row, true)) };
  });

  app.patch('/executors/:id', { schema: { tags, params: IdParams, body: UpdateExecutorBody } }, async (request) => {
    const { before, after } = await executors.updateExecutor(ctx, request.params.id, request.body);
    await audit(ctx.db, request, 'executor.update', 'executor', after.id, before, after);
    return executors.toExecutor(after);
  });

  app.post('/executors/:id/token/rotate', { schema: { tags, params: IdParams } }, async (request) => {
    const rotated = await executors.rotateExecutorToken(ctx, request.params.id);
    await audit(ctx.db, request, 'executor.rotate_token', 'executor', request.params.id, null, null);
    return { id: request.params.id, ...rotated };
  });

  app.post(
    '/executors/:id/requisites',
    { schema: { tags, params: IdParams, body: CreateRequisiteBody, response: { 201: Requisite } } },
    async (request, reply) => {
      const row = await requisites.createRequisite(ctx, request.params.id, request.body);
      await audit(ctx.db, request, 'requisite.create', 'requisite', row.id, null, toRequisite(row, true));
      return reply.status(201).send(toRequisite(row));
    },
  );

  app.get('/requisites', { schema: { tags, querystring: Type.Object({ executor_id: Type.Optional(Type.String({ format: 'uuid' })) }) } }, async (request) => ({
    requisites: (await requisites.listRequisites(ctx, request.query.executor_id)).map((row) => toRequisite(row, true)),
  }));

  app.get('/requisites/:id', { schema: { tags, params: IdParams, response: { 200: Requisite } } }, async (request) =>
    toRequisite(await requisites.getRequisite(ctx, request.params.id)),
  );

  app.patch('/requisites/:id', { schema: { tags, params: IdParams, body: UpdateRequisiteBody, response: { 200: Requisite } } }, async (request) => {
    const { before, after } = await requisites.updateRequisite(ctx, request.params.id, request.body);
    await audit(ctx.db, request, 'requisite.update', 'requisite', after.id, toRequisite(before, true), toRequisite(after, true));
    return toRequisite(after);
  });
}

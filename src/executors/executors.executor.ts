import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import { findExecutorLoad, listRequisites } from '../requisites/requisites.repo.js';
import { OwnRequisite, Requisite, toOwnRequisite, toRequisite } from '../requisites/requisites.schemas.js';
import * as requisites from '../requisites/requisites.service.js';
import * as executors from './executors.service.js';

const Status = Type.Object({
  is_active: Type.Boolean({ description: 'switched on by the operator' }),
  is_paused: Type.Boolean({ description: 'paused by the executor (POST /pause) or the operator' }),
  devices_silent: Type.Boolean({
    description: 'its phones have been silent longer than its device_silence_minutes: requisites not handed out until one reports',
  }),
  takes_payments: Type.Boolean({
    description: 'active, not paused, phones heard from, under the cap of open disputes, none uncovered: its requisites are handed out',
  }),
  why_not: Type.Array(Type.String(), {
    description:
      'why your requisites are not handed out: switched_off (by the operator), dispute_ratio (switched off: too many disputes in 7 days), paused, devices_silent, dispute_cap (max_open_disputes disputes open), dispute_uncovered (an open dispute your deposit could not cover)',
  }),
  off_reason: Type.Union([Type.String(), Type.Null()], { description: 'why a rule switched you off (`dispute_ratio`)' }),
  open_disputes: Type.Integer({ description: 'disputes on your payments still open' }),
  max_open_disputes: Type.Integer({ description: 'at this many open disputes no new hand-outs until one closes' }),
  uncovered_disputes: Type.Integer(),
  priority: Type.Integer({ description: "the operator's priority in the cascade (higher first)" }),
  score: Type.Number({ description: 'conversion × speed over the last 24 hours, in tenths; orders executors of equal priority' }),
});

import { ExecutorGetBalanceAnswer, ExecutorGetStatementAnswer, ExecutorListDepositsAnswer } from './executors.executor.answers.js';

const tags = ['executor'];

/** The executor API's own routes (the banking-app companion's side): requisites, the deposit and its statement (reporting money that arrived: incoming/notifications.executor.ts). */
export async function executorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/balance',
    {
      schema: {
        documentedResponse: { 200: ExecutorGetBalanceAnswer },
        tags,
        summary: 'Your deposit: available and frozen USDT, its address, your credit line and rewards',
      },
    },
    async (request) => {
      return executors.toDeposit(await executors.getExecutor(ctx, request.executor!.id));
    },
  );

  // Pause and resume: while paused, the cascade hands out none of the executor's requisites
  // (payments already handed out go on as usual).
  app.get('/status', { schema: { tags, summary: 'Whether your requisites are handed out, and why not', response: { 200: Status } } }, async (request) =>
    executors.toStatus(await executors.getExecutor(ctx, request.executor!.id)),
  );

  app.post(
    '/pause',
    {
      schema: {
        tags,
        summary: 'Pause: your requisites are no longer handed out',
        description: 'Payments already handed out go on as usual.',
        response: { 200: Status },
      },
    },
    async (request) => executors.toStatus(await executors.setPaused(ctx, request.executor!.id, true, auditFor(request))),
  );

  app.post('/resume', { schema: { tags, summary: 'Resume: your requisites are handed out again', response: { 200: Status } } }, async (request) =>
    executors.toStatus(await executors.setPaused(ctx, request.executor!.id, false, auditFor(request))),
  );

  app.get(
    '/statement',
    {
      schema: {
        documentedResponse: { 200: ExecutorGetStatementAnswer },
        tags,
        summary: 'Your deposit statement: postings, newest first, with the balance after each',
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const executor = await executors.getExecutor(ctx, request.executor!.id);
      return { ...executors.toBalance(executor), ...(await executors.statement(ctx, executor.id, page)) };
    },
  );

  app.get(
    '/deposits',
    {
      schema: {
        documentedResponse: { 200: ExecutorListDepositsAnswer },
        tags,
        summary: 'USDT transfers to the deposit address credited so far, newest first',
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      return { deposits: await executors.listDeposits(ctx, request.executor!.id, page), ...page };
    },
  );

  app.get(
    '/requisites',
    {
      schema: {
        tags,
        summary: 'Your requisites, each with what it took today and this month against its limits',
        response: { 200: Type.Object({ requisites: Type.Array(OwnRequisite) }) },
      },
    },
    async (request) => {
      const [rows, load] = await Promise.all([listRequisites(ctx.db, { executorId: request.executor!.id }), findExecutorLoad(ctx.db, request.executor!.id)]);
      const byId = new Map(load.map((l) => [l.id, l]));
      return { requisites: rows.map((row) => toOwnRequisite(row, byId.get(row.id))) };
    },
  );

  // The executor switches its own cards on and off (a card the bank blocked, a phone left at home).
  app.patch(
    '/requisites/:id',
    {
      schema: {
        tags,
        summary: 'Switch one of your requisites on or off',
        params: Type.Object({ id: Type.String() }),
        body: Type.Object({ is_active: Type.Boolean() }),
        response: { 200: Requisite },
      },
    },
    async (request) =>
      toRequisite(await requisites.switchOwnRequisite(ctx, request.executor!.id, request.params.id, request.body.is_active, auditFor(request))),
  );
}

import { Type } from 'typebox';
import { audit, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import {
  CreateRequisiteBody,
  Requisite,
  RequisiteDetail,
  TrafficClasses,
  toRequisite,
  toUsage,
  UpdateRequisiteBody,
} from '../requisites/requisites.schemas.js';
import * as requisites from '../requisites/requisites.service.js';
import {
  AdminCreateExecutorAdjustmentAnswer,
  AdminCreateExecutorAnswer,
  AdminGetExecutorAnswer,
  AdminGetExecutorStatementAnswer,
  AdminListExecutorDepositsAnswer,
  AdminListExecutorsAnswer,
  AdminListRequisitesAnswer,
  AdminRotateExecutorTokenAnswer,
  AdminUpdateExecutorAnswer,
} from './executors.admin.answers.js';
import * as executors from './executors.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const ExecutorBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });
const NullableNumber = (description: string) => Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: `${description}; null: no limit` });
const UpdateExecutorBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  is_active: Type.Optional(Type.Boolean()),
  credit_limit: Type.Optional(Type.Number({ description: 'USDT the available balance may go below zero (a trusted executor’s credit line); default 0' })),
  payin_reward: Type.Optional(Type.Number({ description: 'percent of a completed pay-in’s USDT value credited to the executor' })),
  payout_reward: Type.Optional(Type.Number({ description: 'percent on top of a completed payout’s USDT value credited to the executor who paid it' })),
  is_paused: Type.Optional(
    Type.Boolean({ description: 'paused: its requisites are not handed out (the executor sets this itself with POST /executor/v1/pause)' }),
  ),
  priority: Type.Optional(Type.Integer({ description: 'the cascade hands out requisites of higher-priority executors first; default 0' })),
  disable_after_expired: Type.Optional(
    Type.Integer({ description: 'switch a requisite off after this many consecutive hand-outs ended unpaid; 0 never; default 5' }),
  ),
  max_open_disputes: Type.Optional(
    Type.Integer({ description: 'at this many open disputes on its payments (awaiting it, contested or escalated) it gets no new hand-outs; default 5' }),
  ),
  low_deposit_threshold: Type.Optional(
    Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: 'USDT: when the available balance falls below it, the executor is told by Telegram, once per crossing; null (default): never',
    }),
  ),
  default_daily_turnover_limit: Type.Optional(
    NullableNumber('default for requisites without their own: most handed out in a UTC day, in the requisite’s currency'),
  ),
  default_monthly_turnover_limit: Type.Optional(
    NullableNumber('default for requisites without their own: most handed out in a UTC month, in the requisite’s currency'),
  ),
  default_daily_count_limit: Type.Optional(NullableNumber('default for requisites without their own: most hand-outs in a UTC day')),
  default_monthly_count_limit: Type.Optional(NullableNumber('default for requisites without their own: most hand-outs in a UTC month')),
  traffic_classes: Type.Optional(TrafficClasses),
});
const AdjustmentBody = Type.Object({
  amount: Type.Number({ description: 'signed USDT: positive tops the deposit up, negative takes from the available balance' }),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
});
const ListQuery = Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) });

/** Operator API for executors (P2P traders) and their requisites. */
export async function executorAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/executors',
    {
      config: { secret: true, access: 'admin' },
      schema: { documentedResponse: { 201: AdminCreateExecutorAnswer }, tags, summary: 'Create an executor; its token is shown once', body: ExecutorBody },
    },
    async (request, reply) => {
      const executor = await executors.createExecutor(ctx, request.body.name, auditFor(request));
      return reply.status(201).send({ ...executors.toExecutor(executor), token: executor.token });
    },
  );

  app.get(
    '/executors',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminListExecutorsAnswer }, tags, summary: 'List executors, each with its number of requisites' },
    },
    async () => ({
      executors: (await executors.listExecutors(ctx)).map((row) => ({ ...executors.toExecutor(row), requisites: row.requisites })),
    }),
  );

  app.get(
    '/executors/:id',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminGetExecutorAnswer }, tags, summary: 'Get an executor with its deposit and requisites', params: IdParams },
    },
    async (request) => {
      const executor = await executors.getExecutor(ctx, request.params.id);
      const rows = await requisites.listRequisites(ctx, executor.id);
      return { ...executors.toExecutor(executor), requisites: rows.map((row) => toRequisite(row, true)) };
    },
  );

  app.patch(
    '/executors/:id',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: AdminUpdateExecutorAnswer },
        tags,
        summary: 'Change an executor: name, on or off, paused, credit line, rewards, priority, default limits',
        description: 'Switched off, the executor’s token and sessions are refused and its requisites are no longer handed out.',
        params: IdParams,
        body: UpdateExecutorBody,
        errors: {
          VALIDATION:
            'Invalid parameters: the message names the field (a reward of 100 % or more, a priority out of range; a credit line below what the executor owes, with `data.balance`)',
        },
      },
    },
    async (request) => {
      return executors.toExecutor(await executors.updateExecutor(ctx, request.params.id, request.body, auditFor(request)));
    },
  );

  // The manual deposit path: an operator who received an executor's deposit some other way (or
  // corrects one) credits it here; deposits to the executor's TRC-20 address are credited by the
  // deposit poller on their own.
  app.post(
    '/executors/:id/adjustments',
    {
      config: { access: 'finance', confirm: true, idempotencyKey: true },
      schema: {
        documentedResponse: { 201: AdminCreateExecutorAdjustmentAnswer },
        tags,
        summary: "Credit (deposit by hand) or debit an executor's deposit",
        description:
          'Moves money: one posting between the executor’s available balance and the system adjustments account, with `reason` as its memo. A debit may take the available balance down to zero, not into the credit line.',
        params: IdParams,
        body: AdjustmentBody,
        errors: { VALIDATION: 'Invalid parameters: `amount` zero or not a USDT amount, or a debit larger than the available balance (`data.available`)' },
      },
    },
    async (request, reply) => {
      const after = await executors.adjustDeposit(
        ctx,
        request.params.id,
        request.body,
        (tx, before, adjusted) =>
          audit(tx, request, 'executor.adjust_deposit', 'executor', request.params.id, executors.toBalance(before), {
            ...executors.toBalance(adjusted),
            amount: request.body.amount,
            reason: request.body.reason,
          }),
        request.idempotency?.requestId,
      );
      const { balance, balance_frozen } = executors.toBalance(after);
      return reply.status(201).send({ balance, balance_frozen });
    },
  );

  app.get(
    '/executors/:id/statement',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetExecutorStatementAnswer },
        tags,
        summary: "An executor's deposit statement: postings, newest first, with the balance after each",
        params: IdParams,
        querystring: ListQuery,
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const executor = await executors.getExecutor(ctx, request.params.id);
      return { ...executors.toBalance(executor), ...(await executors.statement(ctx, executor.id, page)) };
    },
  );

  app.get(
    '/executors/:id/deposits',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListExecutorDepositsAnswer },
        tags,
        summary: "USDT transfers credited to an executor's deposit address, newest first",
        params: IdParams,
        querystring: ListQuery,
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const executor = await executors.getExecutor(ctx, request.params.id);
      return { deposit_address: executor.deposit_address, deposits: await executors.listDeposits(ctx, executor.id, page), ...page };
    },
  );

  app.post(
    '/executors/:id/token/rotate',
    {
      config: { secret: true, access: 'admin', confirm: true },
      schema: {
        documentedResponse: { 200: AdminRotateExecutorTokenAnswer },
        tags,
        summary: "Replace an executor's token: the new one is shown once, the old one stops working at once",
        params: IdParams,
      },
    },
    async (request) => {
      const rotated = await executors.rotateExecutorToken(ctx, request.params.id, auditFor(request));
      return { id: request.params.id, ...rotated };
    },
  );

  app.post(
    '/executors/:id/requisites',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Add a requisite (card, SBP, phone, SIM or QR code) to an executor',
        params: IdParams,
        body: CreateRequisiteBody,
        response: { 201: Requisite },
        errors: {
          VALIDATION:
            'Invalid parameters: the message names the field (a card number that fails the Luhn check, a method the type cannot serve, a country and currency that do not match, a bank not in the directory)',
        },
      },
    },
    async (request, reply) => {
      const executor = await executors.getExecutor(ctx, request.params.id);
      const row = await requisites.createRequisite(ctx, executor, request.body, auditFor(request));
      return reply.status(201).send(toRequisite(row));
    },
  );

  app.get(
    '/requisites',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListRequisitesAnswer },
        tags,
        summary: 'List requisites, of all executors or of one',
        querystring: Type.Object({ executor_id: Type.Optional(Type.String({ format: 'uuid' })) }),
      },
    },
    async (request) => ({
      requisites: (await requisites.listRequisites(ctx, request.query.executor_id)).map((row) => toRequisite(row, true)),
    }),
  );

  app.get(
    '/requisites/:id',
    {
      config: { access: 'support' },
      schema: { tags, summary: 'Get a requisite with what it took today and this month', params: IdParams, response: { 200: RequisiteDetail } },
    },
    async (request) => {
      const { requisite, usage } = await requisites.getRequisiteWithUsage(ctx, request.params.id);
      return { ...toRequisite(requisite), usage: toUsage(usage) };
    },
  );

  app.patch(
    '/requisites/:id',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Change a requisite: the result is checked as a whole, as at creation',
        params: IdParams,
        body: UpdateRequisiteBody,
        response: { 200: Requisite },
      },
    },
    async (request) => {
      return toRequisite(await requisites.updateRequisite(ctx, request.params.id, request.body, auditFor(request)));
    },
  );
}

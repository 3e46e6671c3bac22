import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import {
  ExecutorCreateWithdrawalAnswer200,
  ExecutorCreateWithdrawalAnswer201,
  ExecutorGetWithdrawalAnswer,
  ExecutorListWithdrawalsAnswer,
} from './withdrawals.executor.answers.js';
import { createExecutorWithdrawal, getExecutorWithdrawal, listExecutorWithdrawals, toWithdrawal } from './withdrawals.service.js';

const tags = ['executor'];
const CreateBody = Type.Object({
  amount: Type.Number({ description: 'USDT, taken from the available balance (not from the credit line); no fee' }),
  address: Type.String({ description: 'TRC-20 wallet address (T…)' }),
});

/**
 * The executor's withdrawals of its deposit: frozen from its available balance and sent by the
 * same adapter as merchants' withdrawals. An executor sees only its own.
 */
export async function withdrawalExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/withdrawals',
    {
      config: { confirm: true },
      schema: {
        documentedResponse: { 200: ExecutorCreateWithdrawalAnswer200, 201: ExecutorCreateWithdrawalAnswer201 },
        tags,
        summary: 'Withdraw USDT from the deposit',
        description:
          'Send an `Idempotency-Key` header (1–255 printable characters) to make retries safe: a repeat answers 200 with the withdrawal the first request made. From the cabinet (a session) the executor must have confirmed it is them in the last five minutes (`POST /auth/v1/confirm`), else `403 AUTH_004`.',
        body: CreateBody,
        errors: {
          WDR_001: 'Invalid withdrawal: `amount` not a positive USDT amount, `address` not a TRC-20 address, or a malformed `Idempotency-Key`',
          WDR_002: 'Insufficient funds: your available balance is less than `amount` (`data.available`, `data.required`); the credit line cannot be withdrawn',
          CONFLICT: 'The `Idempotency-Key` was used for another withdrawal (another amount or address): use a new key (`data.withdrawal_id`)',
        },
      },
    },
    async (request, reply) => {
      const header = request.headers['idempotency-key'];
      if (header !== undefined && (typeof header !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(header))) {
        throw new DomainError('WDR_001', 'Idempotency-Key must be 1 to 255 printable characters');
      }
      const { withdrawal, repeated } = await createExecutorWithdrawal(ctx, request.executor!.id, request.body, header ?? null, auditFor(request));
      return reply.status(repeated ? 200 : 201).send(toWithdrawal(withdrawal));
    },
  );

  app.get(
    '/withdrawals',
    {
      schema: {
        documentedResponse: { 200: ExecutorListWithdrawalsAnswer },
        tags,
        summary: "The executor's withdrawals, newest first",
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
        errors: { WDR_001: '`limit` or `offset` out of range' },
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'WDR_001');
      return { withdrawals: (await listExecutorWithdrawals(ctx, request.executor!.id, limit, offset)).map(toWithdrawal), limit, offset };
    },
  );

  app.get(
    '/withdrawals/:id',
    {
      schema: {
        documentedResponse: { 200: ExecutorGetWithdrawalAnswer },
        tags,
        summary: 'One of its withdrawals',
        params: Type.Object({ id: Type.String() }),
        errors: { WDR_003: 'No withdrawal with this id among yours' },
      },
    },
    async (request) => toWithdrawal(await getExecutorWithdrawal(ctx, request.executor!.id, request.params.id)),
  );
}

import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { toNumber } from '../lib/money.js';
import { parseListQuery } from '../lib/pagination.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import { findTerminal } from '../terminals/terminals.repo.js';
import { createWithdrawal, getWithdrawal, listWithdrawals, toWithdrawal } from './withdrawals.service.js';

const security = [{ identity: [], signature: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 500: ErrorBody };
const config = { invalidCode: 'WDR_001', internalCode: 'SYS_001' } as const;
const tags = ['withdrawals'];

const Withdrawal = Type.Object({
  id: Type.String(),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const CreateBody = Type.Object({
  terminal_id: Type.String(),
  amount: Type.Number({ description: 'USDT' }),
  address: Type.String({ description: 'TRC-20 wallet address' }),
  subtract_fee_from_amount: Type.Optional(Type.Boolean({ default: false })),
});

/** The merchant's withdrawal endpoints (spec "POST /v1/withdrawals", "GET /v1/withdrawals…"). */
export async function withdrawalRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/withdrawals',
    {
      config: { ...config, priority: 'low' },
      schema: { tags, summary: 'Create a withdrawal', security, body: CreateBody, response: { 200: Withdrawal, ...errors } },
    },
    async (request) => toWithdrawal(await createWithdrawal(ctx, request.merchant!.merchantId, request.body, request.idempotency?.requestId)),
  );

  // Registered before /:id so that "fee" is never taken for an id.
  app.get(
    '/v1/withdrawals/fee',
    {
      config,
      schema: {
        tags,
        summary: 'Current withdrawal fee of the key’s terminal',
        security,
        response: { 200: Type.Object({ fee: Type.Number(), currency: Type.String() }), ...errors },
      },
    },
    async (request) => {
      const terminal = await findTerminal(ctx.db, request.merchant!.terminalId);
      return { fee: toNumber(terminal!.withdrawal_fee)!, currency: 'USDT' };
    },
  );

  app.get(
    '/v1/withdrawals',
    {
      config,
      schema: {
        tags,
        summary: 'List withdrawals',
        security,
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ data: Type.Array(Withdrawal), limit: Type.Number(), offset: Type.Number() }), ...errors },
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'WDR_001');
      return { data: (await listWithdrawals(ctx, request.merchant!.merchantId, limit, offset)).map(toWithdrawal), limit, offset };
    },
  );

  app.get(
    '/v1/withdrawals/:id',
    { config, schema: { tags, summary: 'Get a withdrawal', security, params: Type.Object({ id: Type.String() }), response: { 200: Withdrawal, ...errors } } },
    async (request) => toWithdrawal(await getWithdrawal(ctx, request.merchant!.merchantId, request.params.id)),
  );
}

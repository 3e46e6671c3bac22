import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { toNumber } from '../lib/money.js';
import { parseListQuery } from '../lib/pagination.js';
import { findTerminal } from '../terminals/terminals.repo.js';
import { createWithdrawal, getWithdrawal, listWithdrawals, toWithdrawal } from './withdrawals.service.js';

const security = [{ identity: [], signature: [] }];
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
/** A withdrawal as the API reference's examples show it. */
const WITHDRAWAL_EXAMPLE = {
  id: '6a2f9d4c-1e7b-4c5a-8d3f-0b9e2c7a4f15',
  amount: 100,
  fee: 1.5,
  currency: 'USDT',
  address: 'TUvdaSw1YSAC5mNU3YJeBEZnkLnQcsbKMY',
  tx_hash: null,
  status: 'pending',
  created_at: '2026-11-24T13:00:00.000Z',
  updated_at: '2026-11-24T13:00:00.000Z',
};
const SENT_WITHDRAWAL_EXAMPLE = {
  ...WITHDRAWAL_EXAMPLE,
  tx_hash: '8f3c2a1b9e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b',
  status: 'completed',
  updated_at: '2026-11-24T13:02:10.000Z',
};
const WithdrawalAnswer = { ...Withdrawal, description: 'The withdrawal', 'x-examples': { completed: { summary: 'Sent', value: SENT_WITHDRAWAL_EXAMPLE } } };

const CreateBody = Type.Object(
  {
    terminal_id: Type.String({ description: 'the terminal to withdraw from (one of the merchant’s)' }),
    amount: Type.Number({ description: 'USDT' }),
    address: Type.String({ description: 'TRC-20 wallet address' }),
    subtract_fee_from_amount: Type.Optional(
      Type.Boolean({ default: false, description: 'true: the fee is taken from `amount`, so the wallet receives amount − fee' }),
    ),
  },
  {
    'x-examples': {
      withdrawal: {
        summary: '100 USDT to a wallet',
        value: { terminal_id: '0b9f2a57-3c1e-4d8a-9f6b-2e7c5d4a1b30', amount: 100, address: 'TUvdaSw1YSAC5mNU3YJeBEZnkLnQcsbKMY' },
      },
    },
  },
);

/** The merchant's withdrawal endpoints (spec "POST /v1/withdrawals", "GET /v1/withdrawals…"). */
export async function withdrawalRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/withdrawals',
    {
      config: { ...config, priority: 'low' },
      schema: {
        tags,
        summary: 'Create a withdrawal',
        description:
          'Withdraws USDT from a terminal’s balance to a TRC-20 wallet. `amount` plus the fee (or `amount` alone with `subtract_fee_from_amount`) is frozen on the terminal until the withdrawal is sent (`completed`, with `tx_hash`) or fails (released). The answer is the withdrawal, `pending`, `tx_hash` null.',
        security,
        body: CreateBody,
        response: {
          200: { ...Withdrawal, description: 'The withdrawal, pending', 'x-examples': { created: { summary: 'Created', value: WITHDRAWAL_EXAMPLE } } },
        },
        errors: {
          WDR_001:
            'Invalid parameters: the message names the field (an amount that does not exceed the fee when it is subtracted, an address that is not TRC-20, a terminal that is not the merchant’s)',
          WDR_002: 'Insufficient funds on the terminal (`data.available`)',
        },
      },
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
        description: 'The fee, in USDT, of a withdrawal from the terminal of the API key (each terminal’s fee is also in `GET /v1/terminals`).',
        security,
        response: {
          200: Type.Object(
            { fee: Type.Number(), currency: Type.String() },
            { description: 'The fee', 'x-examples': { fee: { summary: 'The fee', value: { fee: 1.5, currency: 'USDT' } } } },
          ),
        },
        errors: {},
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
        description: 'The merchant’s withdrawals, newest first. No `total`.',
        security,
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ description: 'page size, 1 to 1000; default 100' })),
          offset: Type.Optional(Type.String({ description: 'how many to skip; default 0' })),
        }),
        response: {
          200: Type.Object(
            { data: Type.Array(Withdrawal), limit: Type.Number(), offset: Type.Number() },
            {
              description: 'A page of withdrawals',
              'x-examples': { page: { summary: 'One page', value: { data: [SENT_WITHDRAWAL_EXAMPLE], limit: 100, offset: 0 } } },
            },
          ),
        },
        errors: { WDR_001: 'A `limit` or `offset` that cannot be read' },
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'WDR_001');
      return { data: (await listWithdrawals(ctx, request.merchant!.merchantId, limit, offset)).map(toWithdrawal), limit, offset };
    },
  );

  app.get(
    '/v1/withdrawals/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Get a withdrawal',
        description: 'The withdrawal with its current `status`, and `tx_hash` once sent.',
        security,
        params: Type.Object({ id: Type.String({ description: 'the withdrawal id (UUID)' }) }),
        response: { 200: WithdrawalAnswer },
        errors: { WDR_003: 'No withdrawal with this id among the merchant’s' },
      },
    },
    async (request) => toWithdrawal(await getWithdrawal(ctx, request.merchant!.merchantId, request.params.id)),
  );
}

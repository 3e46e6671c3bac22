import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { toNumber } from '../lib/money.js';
import { transfer } from './transfers.service.js';

const security = [{ identity: [], signature: [] }];

const EXAMPLE = { from_terminal_id: '0b9f2a57-3c1e-4d8a-9f6b-2e7c5d4a1b30', to_terminal_id: 'c4d8e2f1-7a3b-4e6c-9d0a-5b1f8e2c7d46', amount: 25 };

const TransferBody = Type.Object(
  {
    from_terminal_id: Type.String({ description: 'source terminal' }),
    to_terminal_id: Type.String({ description: 'destination terminal' }),
    amount: Type.Number({ description: 'USDT' }),
  },
  { 'x-examples': { transfer: { summary: '25 USDT between two terminals', value: EXAMPLE } } },
);
const TransferResponse = Type.Object(
  {
    success: Type.Boolean(),
    from_terminal_id: Type.String(),
    to_terminal_id: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
  },
  { description: 'The transfer is done', 'x-examples': { done: { summary: 'Done', value: { success: true, ...EXAMPLE, currency: 'USDT' } } } },
);

/** `POST /v1/transfers`. */
export async function transferRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/transfers',
    {
      config: { invalidCode: 'TRF_001', internalCode: 'SYS_001' },
      schema: {
        tags: ['balances'],
        summary: 'Transfer USDT between terminals of the merchant',
        description: 'Moves USDT from one of the merchant’s terminals to another, atomically and without fee.',
        security,
        body: TransferBody,
        response: { 200: TransferResponse },
        errors: {
          TRF_001: 'Invalid parameters: the message names the field (the same terminal twice, an amount that is not positive)',
          TRF_002: 'A terminal that is not one of the merchant’s (`data.terminal_id`)',
          TRF_003: 'Insufficient funds on the source terminal (`data.available`)',
        },
      },
    },
    async (request) => {
      const done = await transfer(ctx, request.merchant!.merchantId, request.body, request.idempotency?.requestId);
      return { success: true, from_terminal_id: done.from, to_terminal_id: done.to, amount: toNumber(done.amount)!, currency: 'USDT' };
    },
  );
}

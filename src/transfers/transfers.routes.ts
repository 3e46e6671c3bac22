import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { toNumber } from '../lib/money.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import { transfer } from './transfers.service.js';

const security = [{ identity: [], signature: [] }];

const TransferBody = Type.Object({
  from_terminal_id: Type.String({ description: 'source terminal' }),
  to_terminal_id: Type.String({ description: 'destination terminal' }),
  amount: Type.Number({ description: 'USDT' }),
});
const TransferResponse = Type.Object({
  success: Type.Boolean(),
  from_terminal_id: Type.String(),
  to_terminal_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
});

/** `POST /v1/transfers`. */
export async function transferRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/transfers',
    {
      config: { invalidCode: 'TRF_001', internalCode: 'SYS_001' },
      schema: {
        tags: ['balances'],
        summary: 'Transfer USDT between terminals of the merchant',
        security,
        body: TransferBody,
        response: { 200: TransferResponse, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 500: ErrorBody },
      },
    },
    async (request) => {
      const done = await transfer(ctx, request.merchant!.merchantId, request.body, request.idempotency?.requestId);
      return { success: true, from_terminal_id: done.from, to_terminal_id: done.to, amount: toNumber(done.amount)!, currency: 'USDT' };
    },
  );
}

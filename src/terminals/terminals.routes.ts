import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { money, toNumber } from '../lib/money.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import { listMerchantTerminals } from './terminals.repo.js';
import { Terminal, toTerminal } from './terminals.schemas.js';

const security = [{ identity: [], signature: [] }];
const errors = { 401: ErrorBody, 403: ErrorBody, 500: ErrorBody };
const Balance = Type.Object({ balance: Type.Number(), balance_frozen: Type.Number(), currency: Type.String() });

/** `GET /v1/terminals` and `GET /v1/balance`: the merchant's own terminals only. */
export async function terminalRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/terminals',
    {
      schema: {
        tags: ['balances'],
        summary: 'List terminals with balances',
        security,
        response: { 200: Type.Object({ terminals: Type.Array(Terminal) }), ...errors },
      },
    },
    async (request) => ({ terminals: (await listMerchantTerminals(ctx.db, request.merchant!.merchantId)).map(toTerminal) }),
  );

  app.get(
    '/v1/balance',
    { schema: { tags: ['balances'], summary: 'Total balance across terminals', security, response: { 200: Balance, ...errors } } },
    async (request) => {
      const terminals = await listMerchantTerminals(ctx.db, request.merchant!.merchantId);
      // Summed as decimals: adding JSON floats could be off in the last micro-USDT.
      const balance = terminals.reduce((sum, t) => sum.plus(money(t.balance)), money(0));
      const frozen = terminals.reduce((sum, t) => sum.plus(money(t.balance_frozen)), money(0));
      return { balance: toNumber(balance)!, balance_frozen: toNumber(frozen)!, currency: 'USDT' };
    },
  );
}

import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { money, toNumber } from '../lib/money.js';
import { listMerchantTerminals } from './terminals.repo.js';
import { Terminal, toTerminal } from './terminals.schemas.js';

const security = [{ identity: [], signature: [] }];
const Balance = Type.Object(
  {
    balance: Type.Number({ description: 'total available across the merchant’s terminals, USDT' }),
    balance_frozen: Type.Number({ description: 'total frozen (reserved for payouts and withdrawals), USDT' }),
    currency: Type.String(),
  },
  {
    description: 'The total balance',
    'x-examples': { balance: { summary: 'Two terminals', value: { balance: 1287.45, balance_frozen: 101.5, currency: 'USDT' } } },
  },
);
const TERMINALS_EXAMPLE = {
  terminals: [
    {
      id: '0b9f2a57-3c1e-4d8a-9f6b-2e7c5d4a1b30',
      name: 'Main shop',
      balance: 1262.45,
      balance_frozen: 101.5,
      withdrawal_fee: 1.5,
      currency: 'USDT',
      is_active: true,
    },
    { id: 'c4d8e2f1-7a3b-4e6c-9d0a-5b1f8e2c7d46', name: 'Mobile app', balance: 25, balance_frozen: 0, withdrawal_fee: 1.5, currency: 'USDT', is_active: true },
  ],
};

/** `GET /v1/terminals` and `GET /v1/balance`: the merchant's own terminals only. */
export async function terminalRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/terminals',
    {
      schema: {
        tags: ['balances'],
        summary: 'List terminals with balances',
        description: 'Every terminal of the merchant with its own USDT balance: available, frozen, and its withdrawal fee.',
        security,
        response: {
          200: Type.Object(
            { terminals: Type.Array(Terminal) },
            { description: 'The merchant’s terminals', 'x-examples': { terminals: { summary: 'Two terminals', value: TERMINALS_EXAMPLE } } },
          ),
        },
        errors: {},
      },
    },
    async (request) => ({ terminals: (await listMerchantTerminals(ctx.db, request.merchant!.merchantId)).map(toTerminal) }),
  );

  app.get(
    '/v1/balance',
    {
      schema: {
        tags: ['balances'],
        summary: 'Total balance across terminals',
        description: 'The sums of every terminal’s available and frozen balances, USDT.',
        security,
        response: { 200: Balance },
        errors: {},
      },
    },
    async (request) => {
      const terminals = await listMerchantTerminals(ctx.db, request.merchant!.merchantId);
      // Summed as decimals: adding JSON floats could be off in the last micro-USDT.
      const balance = terminals.reduce((sum, t) => sum.plus(money(t.balance)), money(0));
      const frozen = terminals.reduce((sum, t) => sum.plus(money(t.balance_frozen)), money(0));
      return { balance: toNumber(balance)!, balance_frozen: toNumber(frozen)!, currency: 'USDT' };
    },
  );
}

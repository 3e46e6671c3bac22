import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { AdminListRatesAnswer, AdminSetRateAnswer } from './rates.admin.answers.js';
import * as service from './rates.service.js';

const tags = ['operator'];
const RateBody = Type.Object({ rate: Type.Number({ description: 'price of 1 USDT in the currency' }) });

/** Manual USDT rates per currency. */
export async function rateAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/rates',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: AdminListRatesAnswer }, tags, summary: 'The USDT rate of each currency' } },
    async () => ({
      rates: (await service.listRates(ctx)).map(service.toRate),
    }),
  );

  app.put(
    '/rates/:currency',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: AdminSetRateAnswer },
        tags,
        summary: 'Set the USDT rate of a currency',
        description:
          'The price of 1 USDT in the currency, for every terminal without a rate of its own (`PUT /admin/v1/terminals/{id}/rates/{currency}`); a payment fixes the rate when it is created.',
        params: Type.Object({ currency: Type.String() }),
        body: RateBody,
        errors: { VALIDATION: 'Not a currency Kassir prices, or the rate is not a positive number' },
      },
    },
    async (request) => {
      const row = await service.setRate(ctx, request.params.currency, request.body.rate);
      await audit(ctx.db, request, 'rate.set', 'rate', row.currency, null, { rate: row.rate });
      return service.toRate(row);
    },
  );
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { checkLedger } from './ledger.check.js';

/** `GET /admin/v1/ledger/check`: every invariant of the ledger, with what breaks named. */
export async function ledgerAdminRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/ledger/check', { schema: { tags: ['operator'] } }, async () => checkLedger(ctx.db));
}

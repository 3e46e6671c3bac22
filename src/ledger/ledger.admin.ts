import type { AppContext, RouteApp } from '../context.js';
import { checkLedger } from './ledger.service.js';

/** `GET /admin/v1/ledger/check`: every invariant of the ledger, with what breaks named. */
export async function ledgerAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get('/ledger/check', { config: { access: 'support' }, schema: { tags: ['operator'] } }, async () => checkLedger(ctx.db));
}

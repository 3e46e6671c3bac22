import type { AppContext, RouteApp } from '../context.js';
import { AdminCheckLedgerAnswer } from './ledger.admin.answers.js';
import { checkAndRecordLedger } from './ledger.service.js';

/** `GET /admin/v1/ledger/check`: every invariant of the ledger, with what breaks named (the outcome is kept for /metrics). */
export async function ledgerAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/ledger/check',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminCheckLedgerAnswer },
        tags: ['operator'],
        summary: 'Check every ledger invariant, naming what breaks',
        description:
          'Reads the whole ledger: `ok`, and each problem found. The outcome is kept for `/metrics` (the job runs the same check over what was written since its previous run every hour, and over the whole ledger daily at 03:41 UTC).',
      },
    },
    async () => {
      const { ok, problems } = await checkAndRecordLedger(ctx.db);
      return { ok, problems };
    },
  );
}

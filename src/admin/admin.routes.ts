import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { adminAuth } from './admin.auth.js';
import { bankAdminRoutes } from '../banks/banks.routes.js';
import { merchantAdminRoutes } from '../merchants/merchants.admin.js';
import { terminalAdminRoutes } from '../terminals/terminals.admin.js';
import { rateAdminRoutes } from '../rates/rates.admin.js';
import { executorAdminRoutes } from '../executors/executors.admin.js';
import { paymentAdminRoutes } from '../payments/payments.admin.js';
import { ledgerAdminRoutes } from '../ledger/ledger.admin.js';
import { notificationAdminRoutes } from '../executors/notifications.admin.js';
import { webhookAdminRoutes } from '../webhooks/webhooks.admin.js';
import { disputeAdminRoutes } from '../disputes/disputes.admin.js';
import { payoutAdminRoutes } from '../payouts/payouts.admin.js';
import { withdrawalAdminRoutes } from '../withdrawals/withdrawals.admin.js';
import { providerAdminRoutes } from '../providers/providers.admin.js';

/** The operator API under /admin/v1 (DESIGN.md "The operator side"), behind the bearer token. */
export async function adminRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  adminAuth(app, ctx);
  await merchantAdminRoutes(app, ctx);
  await terminalAdminRoutes(app, ctx);
  await rateAdminRoutes(app, ctx);
  await executorAdminRoutes(app, ctx);
  await bankAdminRoutes(app, ctx);
  await paymentAdminRoutes(app, ctx);
  await ledgerAdminRoutes(app, ctx);
  await notificationAdminRoutes(app, ctx);
  await webhookAdminRoutes(app, ctx);
  await disputeAdminRoutes(app, ctx);
  await payoutAdminRoutes(app, ctx);
  await withdrawalAdminRoutes(app, ctx);
  await providerAdminRoutes(app, ctx);
}

import type { FastifyInstance } from 'fastify';
import { authRoutes } from '../auth/auth.routes.js';
import { userAdminRoutes } from '../auth/users.admin.js';
import { bankAdminRoutes, bankRoutes } from '../banks/banks.routes.js';
import { merchantCabinetRoutes } from '../cabinet/merchants.cabinet.js';
import type { AppContext, RouteApp } from '../context.js';
import { deviceAdminRoutes } from '../devices/devices.admin.js';
import { deviceRoutes } from '../devices/devices.device.js';
import { deviceExecutorRoutes } from '../devices/devices.executor.js';
import { deviceHookRoutes } from '../devices/devices.hooks.js';
import { disputeAdminRoutes } from '../disputes/disputes.admin.js';
import { disputeExecutorRoutes } from '../disputes/disputes.executor.js';
import { disputeRoutes, paymentReceiptRoutes } from '../disputes/disputes.routes.js';
import { applyPaymentCallback } from '../disputes/provider-status.service.js';
import { executorAdminRoutes } from '../executors/executors.admin.js';
import { executorRoutes } from '../executors/executors.executor.js';
import { parserFormAdminRoutes } from '../incoming/forms.admin.js';
import { parserFormExecutorRoutes } from '../incoming/forms.executor.js';
import { notificationAdminRoutes } from '../incoming/notifications.admin.js';
import { incomingExecutorRoutes } from '../incoming/notifications.executor.js';
import { ledgerAdminRoutes } from '../ledger/ledger.admin.js';
import { merchantAdminRoutes } from '../merchants/merchants.admin.js';
import { pagesRoutes } from '../pages/pages.routes.js';
import { paymentAdminRoutes } from '../payments/payments.admin.js';
import { paymentRoutes } from '../payments/payments.routes.js';
import { payoutAdminRoutes } from '../payouts/payouts.admin.js';
import { payoutExecutorRoutes } from '../payouts/payouts.executor.js';
import { payoutRoutes } from '../payouts/payouts.routes.js';
import { applyPayoutCallback } from '../payouts/payouts.service.js';
import { providerAdminRoutes } from '../providers/providers.admin.js';
import { providerCallbackRoutes } from '../providers/providers.routes.js';
import { rateAdminRoutes } from '../rates/rates.admin.js';
import { receiptRoutes } from '../receipts/receipts.routes.js';
import { alertAdminRoutes } from '../reports/alerts.admin.js';
import { dashboardAdminRoutes } from '../reports/dashboard.admin.js';
import { firstStepsAdminRoutes } from '../reports/first-steps.admin.js';
import { reportAdminRoutes } from '../reports/reports.admin.js';
import { paymentTimelineAdminRoutes } from '../reports/timeline.admin.js';
import { riskFlagAdminRoutes } from '../risk/flags.admin.js';
import { riskHitAdminRoutes } from '../risk/hits.admin.js';
import { poolRulesAdminRoutes } from '../risk/pool-rules.admin.js';
import { riskAdminRoutes } from '../risk/risk.admin.js';
import { telegramRoutes } from '../telegram/telegram.routes.js';
import { telegramWebhookRoutes } from '../telegram/telegram.webhook.js';
import { terminalAdminRoutes } from '../terminals/terminals.admin.js';
import { terminalRoutes } from '../terminals/terminals.routes.js';
import { transferRoutes } from '../transfers/transfers.routes.js';
import { webhookAdminRoutes } from '../webhooks/webhooks.admin.js';
import { withdrawalAdminRoutes } from '../withdrawals/withdrawals.admin.js';
import { withdrawalExecutorRoutes } from '../withdrawals/withdrawals.executor.js';
import { withdrawalRoutes } from '../withdrawals/withdrawals.routes.js';
import { personAccess } from './access.js';
import { adminAuth } from './admin-auth.js';
import { consoleRoutes } from './console.routes.js';
import { csvExport } from './csv-export.js';
import { DEVICE_HOOKS_PREFIX, deviceAuth, deviceHookAuth } from './device-auth.js';
import { executorAuth } from './executor-auth.js';
import { idempotency, operatorIdempotency } from './idempotency.js';
import { merchantAuth } from './merchant-auth.js';
import { merchantSessionAuth } from './merchant-session-auth.js';
import { type Priority, routePriority } from './overload.js';

type Routes = (app: RouteApp, ctx: AppContext) => Promise<void>;

/** One audience of the API: where it is mounted, who may call it, how it fares under load, its routes. */
interface RouteGroup {
  /** Who the group serves and how it authenticates them, in the start-up log. */
  name: string;
  prefix?: string;
  /** Installs the group's authentication (and what goes with it) on its scope; none: public. */
  auth?: (app: FastifyInstance, ctx: AppContext) => void;
  /** The group's default under overload (src/http/overload.ts); a route may set its own in config. */
  priority?: Priority;
  routes: Routes[];
}

/**
 * Every route of the service, by audience. Each group is its own plugin scope, so its
 * authentication covers exactly its routes; order is the order of the OpenAPI document.
 */
const ROUTE_GROUPS: RouteGroup[] = [
  { name: 'public directory', routes: [bankRoutes] },
  {
    name: 'merchant API (X-Identity key, X-Signature over the body; Idempotency-Key)',
    auth: (app, ctx) => {
      merchantAuth(app, ctx);
      idempotency(app, ctx);
    },
    routes: [paymentRoutes, terminalRoutes, paymentReceiptRoutes, receiptRoutes, disputeRoutes, payoutRoutes, withdrawalRoutes, transferRoutes],
  },
  {
    name: 'executor API (executor bearer token)',
    prefix: '/executor/v1',
    auth: executorAuth,
    // Notifications and payouts complete money already on its way: served under a load that sheds new payments.
    priority: 'high',
    routes: [
      incomingExecutorRoutes,
      executorRoutes,
      deviceExecutorRoutes,
      parserFormExecutorRoutes,
      payoutExecutorRoutes,
      withdrawalExecutorRoutes,
      disputeExecutorRoutes,
      telegramRoutes('executor'),
    ],
  },
  {
    name: 'device API (device token)',
    prefix: '/device/v1',
    auth: deviceAuth,
    // A bank message completes money already on its way.
    priority: 'high',
    routes: [deviceRoutes],
  },
  {
    name: "forwarder apps' webhooks (device token in the path, each app's signature)",
    prefix: DEVICE_HOOKS_PREFIX,
    auth: deviceHookAuth,
    priority: 'high',
    routes: [deviceHookRoutes],
  },
  { name: 'people (session cookie)', prefix: '/auth/v1', auth: personAccess, routes: [authRoutes, telegramRoutes('staff')] },
  {
    name: "merchant cabinet (a merchant's person, session cookie; ?format=csv on lists)",
    prefix: '/merchant/v1',
    auth: (app, ctx) => {
      merchantSessionAuth(app, ctx);
      // The cabinet's routes that move money or settle a test object (config.idempotencyKey) keep
      // each person's Idempotency-Keys as the operator's routes do.
      operatorIdempotency(app, ctx);
      csvExport(app);
    },
    routes: [merchantCabinetRoutes, telegramRoutes('merchant')],
  },
  {
    name: 'operator API (ADMIN_TOKEN bearer, or a staff session by role: each route declares config.access)',
    prefix: '/admin/v1',
    auth: adminAuth,
    routes: [
      userAdminRoutes,
      merchantAdminRoutes,
      terminalAdminRoutes,
      rateAdminRoutes,
      executorAdminRoutes,
      bankAdminRoutes,
      paymentAdminRoutes,
      paymentTimelineAdminRoutes,
      ledgerAdminRoutes,
      notificationAdminRoutes,
      parserFormAdminRoutes,
      deviceAdminRoutes,
      webhookAdminRoutes,
      disputeAdminRoutes,
      payoutAdminRoutes,
      withdrawalAdminRoutes,
      providerAdminRoutes,
      reportAdminRoutes,
      dashboardAdminRoutes,
      firstStepsAdminRoutes,
      alertAdminRoutes,
      riskHitAdminRoutes,
      riskAdminRoutes,
      poolRulesAdminRoutes,
      riskFlagAdminRoutes,
    ],
  },
  // Each callback checks its provider's signature itself (the provider is named in the path), then
  // hands the payment or payout to the feature that owns it.
  {
    name: 'provider callbacks',
    routes: [
      (app, ctx) =>
        providerCallbackRoutes(app, ctx, {
          payment: (tx, providerId, payment, token) => applyPaymentCallback(ctx, tx, providerId, payment, token),
          payout: (tx, providerId, payout) => applyPayoutCallback(tx, providerId, payout),
        }),
    ],
  },
  // Authorised by the page token in the path alone; the payer's view of a payment already made
  // or being made is served under a load that sheds new payments.
  { name: 'payment page', priority: 'high', routes: [pagesRoutes] },
  // Telegram's webhook calls (when TELEGRAM_WEBHOOK_URL is set): checked by their secret token.
  { name: 'Telegram webhook', priority: 'high', routes: [telegramWebhookRoutes] },
  // The people's web app: the page and its assets are public; everything it shows comes from the
  // API groups above, under the person's session.
  { name: 'console (web app)', routes: [consoleRoutes] },
];

/** Registers every route group on `app`. */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  for (const group of ROUTE_GROUPS) {
    await app.register(
      async (scope) => {
        if (group.priority) routePriority(scope, group.priority);
        group.auth?.(scope, ctx);
        for (const routes of group.routes) await routes(scope, ctx);
        ctx.log.debug({ group: group.name, prefix: group.prefix ?? '/' }, 'routes registered');
      },
      group.prefix ? { prefix: group.prefix } : {},
    );
  }
}

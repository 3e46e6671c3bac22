import type { AppContext, RouteApp } from '../context.js';
import { DASHBOARD_DESCRIPTION, Dashboard, DashboardQuery } from './dashboard.schemas.js';
import { buildDashboard } from './dashboard.service.js';

const tags = ['operator'];

/** `GET /admin/v1/dashboard`: the operator console's dashboard for the last hour or day. */
export async function dashboardAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/dashboard',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Payments, conversion, lost demand, queues and balances for the last hour or day',
        description: DASHBOARD_DESCRIPTION,
        querystring: DashboardQuery,
        response: { 200: Dashboard },
      },
    },
    async (request) => buildDashboard(ctx, request.query.window ?? 'hour'),
  );
}

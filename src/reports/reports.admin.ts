import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { ExecutorReport, MerchantReport, REPORT_DESCRIPTION, ReportQuery } from './reports.schemas.js';
import { buildReport, parseReportQuery, type ReportBy, reportCsv, reportFileName } from './reports.service.js';

const tags = ['operator'];

/** `GET /admin/v1/reports/merchants` and `/reports/executors`: turnover, rewards and revenue per day, from the ledger. */
export async function reportAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const routes: Array<{ by: ReportBy; path: string; response: typeof MerchantReport | typeof ExecutorReport; summary: string }> = [
    { by: 'merchant', path: '/reports/merchants', response: MerchantReport, summary: 'Turnover, rewards and revenue per day and merchant' },
    { by: 'executor', path: '/reports/executors', response: ExecutorReport, summary: 'Turnover, rewards and revenue per day and executor' },
  ];
  for (const route of routes) {
    app.get(
      route.path,
      {
        config: { access: 'support' },
        schema: {
          tags,
          summary: route.summary,
          description: REPORT_DESCRIPTION,
          querystring: ReportQuery,
          errors: { NOT_FOUND: 'No merchant with this `merchant_id`, or no executor with this `executor_id`' },
          produces: ['application/json', 'text/csv'],
          response: { 200: { content: { 'application/json': { schema: route.response }, 'text/csv': { schema: Type.String() } } } },
        },
      },
      async (request, reply) => {
        const q = parseReportQuery(route.by, request.query, request.headers.accept);
        const report = await buildReport(ctx, q);
        if (q.format === 'json') return report;
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${reportFileName(report)}"`)
          .send(reportCsv(report));
      },
    );
  }
}

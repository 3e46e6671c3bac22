import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { RISK_EXPORT_DESCRIPTION, RISK_HITS_DESCRIPTION, RiskHitList, RiskHitQuery, RiskSummary, RiskSummaryQuery } from './hits.schemas.js';
import { exportHits, hitsCsvFileName, hitsSummary, listHits } from './hits.service.js';

const tags = ['operator'];

/** Operator API: the risk rules' decisions, listed, exported and counted per hour (the console's Risk screen). */
export async function riskHitAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/risk/hits',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Refusals and flags of the risk rules, newest first, with each one’s rule, inputs and figure',
        description: RISK_HITS_DESCRIPTION,
        querystring: RiskHitQuery,
        response: { 200: RiskHitList },
        errors: { VALIDATION: 'A filter is malformed: the message names it' },
      },
    },
    async (request) => listHits(ctx, request.query),
  );

  app.get(
    '/risk/hits/export',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Every hit the filters match, as a CSV download',
        description: RISK_EXPORT_DESCRIPTION,
        querystring: RiskHitQuery,
        produces: ['text/csv'],
        response: { 200: { content: { 'text/csv': { schema: Type.String() } } } },
        errors: { VALIDATION: 'A filter is malformed: the message names it' },
      },
    },
    async (request, reply) => {
      const lines = exportHits(ctx, request.query);
      // The schema documents the body as text; a stream of that text is what Fastify sends.
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${hitsCsvFileName()}"`)
        .send(Readable.from(lines) as unknown as string);
    },
  );

  app.get(
    '/risk/summary',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Hits per hour and rule over the last hours, for a chart',
        querystring: RiskSummaryQuery,
        response: { 200: RiskSummary },
        errors: { VALIDATION: '`hours` is not an integer from 1 to 168' },
      },
    },
    async (request) => hitsSummary(ctx, request.query.hours),
  );
}

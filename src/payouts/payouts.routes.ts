import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { ErrorBody } from '../payments/payments.schemas.js';
import { listPayouts, PAYOUT_STATUSES } from './payouts.repo.js';
import { CreatePayoutBody, Payout, toPayout } from './payouts.schemas.js';
import { createPayout, getPayout, getPayoutByExtId } from './payouts.service.js';

const security = [{ identity: [], signature: [] }];
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 500: ErrorBody, 503: ErrorBody };
const config = { invalidCode: 'PAY_002', internalCode: 'SYS_001' } as const;
const tags = ['payouts'];

/** ISO 8601 only: `Date` alone would also take "1" (the year 2001) or "March 7, 2024". */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function parseDate(value: string | undefined, name: 'from' | 'to'): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const date = ISO_DATE.test(value) ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new DomainError('PAY_002', `${name} must be an ISO 8601 date or timestamp`, { [name]: value });
  // The bounds are inclusive: an end given as a bare date covers the whole of that day (UTC).
  if (name === 'to' && value.length === 10) return new Date(date.getTime() + 86_400_000 - 1);
  return date;
}

/** The merchant's payout endpoints (spec "POST /v1/payouts", "GET /v1/payouts…"). */
export async function payoutRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/v1/payouts',
    {
      config: { ...config, priority: 'low' },
      schema: { tags, summary: 'Create a payout', security, body: CreatePayoutBody, response: { 200: Payout, ...errors } },
    },
    async (request) => toPayout(await createPayout(ctx, request.merchant!, request.body), { withCompletedAt: false }),
  );

  app.get(
    '/v1/payouts',
    {
      config,
      schema: {
        tags,
        summary: 'List payouts',
        security,
        querystring: Type.Object({
          status: Type.Optional(Type.String()),
          from: Type.Optional(Type.String()),
          to: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
        response: { 200: Type.Object({ payouts: Type.Array(Payout), total: Type.Number(), limit: Type.Number(), offset: Type.Number() }), ...errors },
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'PAY_002');
      const { status } = request.query;
      if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status)) {
        throw new DomainError('PAY_002', `status must be one of ${PAYOUT_STATUSES.join(', ')}`, { status });
      }
      const from = parseDate(request.query.from, 'from');
      const to = parseDate(request.query.to, 'to');
      const { rows, total } = await listPayouts(ctx.db, { merchantId: request.merchant!.merchantId, status, from, to, limit, offset });
      return { payouts: rows.map((row) => toPayout(row)), total, limit, offset };
    },
  );

  app.get(
    '/v1/payouts/:id',
    { config, schema: { tags, summary: 'Get a payout by ID', security, params: Type.Object({ id: Type.String() }), response: { 200: Payout, ...errors } } },
    async (request) => toPayout(await getPayout(ctx, request.merchant!.merchantId, request.params.id)),
  );

  app.get(
    '/v1/payouts/by-ext-id/:extId',
    {
      config,
      schema: { tags, summary: 'Get a payout by merchant ID', security, params: Type.Object({ extId: Type.String() }), response: { 200: Payout, ...errors } },
    },
    async (request) => toPayout(await getPayoutByExtId(ctx, request.merchant!.merchantId, request.params.extId)),
  );
}

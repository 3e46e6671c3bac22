import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { listPayouts, PAYOUT_STATUSES } from './payouts.repo.js';
import { CreatePayoutBody, NEW_PAYOUT_EXAMPLE, PAYOUT_EXAMPLE, Payout, toPayout } from './payouts.schemas.js';
import { createPayout, getPayout, getPayoutByExtId } from './payouts.service.js';

const security = [{ identity: [], signature: [] }];
const notFound = { PAYOUT_NOT_FOUND: 'No payout with this id (or ext_id) among the merchant’s: `PAY_001` with 404, as the spec has it' };
const PayoutAnswer = { ...Payout, description: 'The payout', 'x-examples': { completed: { summary: 'A completed payout', value: PAYOUT_EXAMPLE } } };
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
      schema: {
        tags,
        summary: 'Create a payout',
        description:
          'Pays RUB out to a card (`card`: `requisites` is the card number) or by the fast payment system (`sbp`: `requisites` is the phone number, `bank` the recipient’s bank code). Its USDT value at the current rate plus the terminal’s payout rate is reserved on the terminal of the API key until the payout completes (debited) or fails (released). The answer is the payout, `pending`, without `completed_at`; with `notify_url`, each status change (`processing`, `completed`, `failed`, `cancelled`) is posted there.',
        security,
        body: CreatePayoutBody,
        response: {
          200: {
            ...Payout,
            description: 'The payout, pending',
            'x-examples': { created: { summary: 'Created', value: NEW_PAYOUT_EXAMPLE } },
          },
        },
        errors: {
          PAY_002: 'Invalid parameters (the message names the field), or not enough balance on the terminal (`data.available`, `data.required`)',
          PAY_003: 'A payout with this `ext_id` already exists (`data.ext_id`)',
          UNAVAILABLE: 'No USDT rate is set for RUB, or no route could take the payout (its reserve is released); retry later with a new `ext_id`',
        },
      },
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
        description:
          'The merchant’s payouts, newest first, filtered by `status` and creation time (`from`, `to`: ISO 8601, inclusive; a bare date as `to` covers that whole day in UTC). `total` counts every match.',
        security,
        querystring: Type.Object({
          status: Type.Optional(Type.String({ description: 'pending, processing, completed, failed or cancelled' })),
          from: Type.Optional(Type.String({ description: 'created at or after (ISO 8601 date or timestamp)' })),
          to: Type.Optional(Type.String({ description: 'created at or before (ISO 8601 date or timestamp)' })),
          limit: Type.Optional(Type.String({ description: 'page size, 1 to 1000; default 100' })),
          offset: Type.Optional(Type.String({ description: 'how many to skip; default 0' })),
        }),
        response: {
          200: Type.Object(
            { payouts: Type.Array(Payout), total: Type.Number(), limit: Type.Number(), offset: Type.Number() },
            {
              description: 'A page of payouts',
              'x-examples': { page: { summary: 'One page', value: { payouts: [PAYOUT_EXAMPLE], total: 1, limit: 100, offset: 0 } } },
            },
          ),
        },
        errors: { PAY_002: 'A `status`, `from`, `to`, `limit` or `offset` that cannot be read' },
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
    {
      config,
      schema: {
        tags,
        summary: 'Get a payout by ID',
        description: 'The payout with its current `status` and `completed_at` (null until it completes).',
        security,
        params: Type.Object({ id: Type.String({ description: 'the payout id (UUID)' }) }),
        response: { 200: PayoutAnswer },
        errors: notFound,
      },
    },
    async (request) => toPayout(await getPayout(ctx, request.merchant!.merchantId, request.params.id)),
  );

  app.get(
    '/v1/payouts/by-ext-id/:extId',
    {
      config,
      schema: {
        tags,
        summary: 'Get a payout by merchant ID',
        description: 'The same answer as `GET /v1/payouts/{id}`, found by the `ext_id` given at creation.',
        security,
        params: Type.Object({ extId: Type.String({ description: 'the merchant’s payout id (`ext_id`)' }) }),
        response: { 200: PayoutAnswer },
        errors: notFound,
      },
    },
    async (request) => toPayout(await getPayoutByExtId(ctx, request.merchant!.merchantId, request.params.extId)),
  );
}

import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { actorOf, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { AdminListRatesAnswer, AdminRateHistoryAnswer, AdminRateRefreshAnswer, RateSetting } from './rates.admin.answers.js';
import type { RefreshRow } from './rates.repo.js';
import * as service from './rates.service.js';
import { SOURCE_NAMES } from './sources/source.js';

const tags = ['operator'];

const Options = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "the source's options: base_url (a mirror, a test server), pay_methods (the exchange's names or ids), amount (a probe deal in the currency: adverts must take it), side (buy: adverts selling USDT, the default; sell), ranks ([from, to], default [1, 10]), min_orders, min_completion_percent, outlier_percent (default 2), min_adverts (default 3), and the source's own",
});

/** `PUT …/rates/{currency}`: a typed rate, a feed, or (a terminal's) the currency's figure with a markup. */
export const RateSettingBody = Type.Object(
  {
    rate: Type.Optional(Type.Number({ description: 'a typed rate: the price of 1 USDT in the currency (nothing else may be sent with it)' })),
    source: Type.Optional(Type.String({ enum: [...SOURCE_NAMES], description: 'an exchange feed keeps the rate' })),
    markup_percent: Type.Optional(Type.Number({ description: 'rate = figure × (1 + markup_percent / 100); default 0' })),
    payout_markup_percent: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], { description: "payouts' own markup (the sell side); null or absent: markup_percent" }),
    ),
    refresh_seconds: Type.Optional(Type.Integer({ minimum: 5, description: 'how often the feed is fetched (default 30; at least every max_age_seconds / 2)' })),
    max_age_seconds: Type.Optional(
      Type.Integer({ minimum: 10, description: 'older than this the rate is stale and deals that need it are refused (default 600)' }),
    ),
    max_spread_percent: Type.Optional(Type.Number({ description: 'with cross_check: a source further than this from the others is left out (default 3)' })),
    max_jump_percent: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description: 'a figure further than this from the current one is held until a person accepts or keeps it (default: never held)',
      }),
    ),
    options: Type.Optional(Options),
    cross_check: Type.Optional(
      Type.Array(Type.Object({ source: Type.String({ enum: [...SOURCE_NAMES] }), options: Type.Optional(Options) }), {
        description: 'further sources the figure is checked against (the figure is their median)',
      }),
    ),
  },
  { additionalProperties: false },
);

const CurrencyParams = Type.Object({ currency: Type.String() });
const HistoryQuery = Type.Object({ hours: Type.Optional(Type.Integer({ minimum: 1, maximum: 168, description: 'default 24' })) });

/** Where a route's rate setting is: the currency's own, or a terminal's (checked to exist). */
type ScopeOf = (request: FastifyRequest) => Promise<service.RateScope>;

/** A rate refresh as the operator API shows it. */
export function toRefresh(r: Omit<RefreshRow, 'sample'>) {
  const num = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: String(r.id),
    currency: r.currency,
    terminal_id: r.terminal_id,
    at: r.at,
    kind: r.kind,
    source: r.source,
    figure: num(r.figure),
    markup_percent: num(r.markup_percent),
    rate: num(r.rate),
    gave_rate: r.gave_rate,
    error: r.error,
    actor: r.actor,
  };
}

/**
 * The routes of one kind of rate setting under `prefix` (the currency's own: `/rates/:currency`;
 * a terminal's: `/terminals/:id/rates/:currency`): set it, see its history, fetch it now, and
 * decide a jump its feed held.
 */
export function rateSettingRoutes(
  app: RouteApp,
  ctx: AppContext,
  options: {
    prefix: string;
    params: ReturnType<typeof Type.Object>;
    scopeOf: ScopeOf;
    what: string;
    answer: (setting: ReturnType<typeof service.toRate>, scope: service.RateScope) => unknown;
  },
): void {
  const { prefix, params, scopeOf, what, answer } = options;
  const actor = (request: FastifyRequest) => actorOf(request).name;

  app.put(
    prefix,
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: RateSetting },
        tags,
        summary: `Set ${what}: typed, kept by an exchange feed${prefix.includes('terminals') ? ", or the currency's with this terminal's markup" : ''}`,
        description:
          '`{rate}` types it; `{source, markup_percent?, refresh_seconds?, max_age_seconds?, options?, cross_check?, max_jump_percent?, payout_markup_percent?}` has an exchange feed keep it (rate null until the first fetch). A payment fixes the rate when it is created; once a feed\'s rate is older than max_age_seconds, creates and payouts that need it answer 503 PAY_004 with data.reason "rate_stale".' +
          (prefix.includes('terminals') ? " `{markup_percent, payout_markup_percent?}` alone: the currency's figure with this terminal's own markup." : ''),
        params,
        body: RateSettingBody,
        errors: { VALIDATION: 'Not a currency Kassir prices, a source that does not quote it, or a field out of range', NOT_FOUND: 'No such terminal' },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      return answer(service.toRate(await service.saveSetting(ctx, scope, request.body as service.RateSettingBody, auditFor(request), actor(request))), scope);
    },
  );

  app.get(
    `${prefix}/history`,
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminRateHistoryAnswer },
        tags,
        summary: `The refreshes of ${what} (a chart of the last day) and the adverts of its last fetch`,
        params,
        querystring: HistoryQuery,
        errors: { NOT_FOUND: 'No such rate setting' },
      },
    },
    async (request) => {
      const scope = await scopeOf(request);
      const { setting, refreshes, last } = await service.history(ctx, scope, (request.query as { hours?: number }).hours ?? 24);
      return {
        rate: answer(service.toRate(setting), scope),
        refreshes: refreshes.map(toRefresh),
        last_sample: last ? { ...toRefresh(last), sample: last.sample } : null,
      };
    },
  );

  app.post(
    `${prefix}/refresh`,
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 202: Type.Object({ scheduled: Type.Boolean() }) },
        tags,
        summary: `Fetch ${what} from its feed now`,
        params,
        errors: { NOT_FOUND: 'Not kept by a feed' },
      },
    },
    async (request, reply) => {
      await service.refreshNow(ctx, await scopeOf(request), auditFor(request));
      return reply.status(202).send({ scheduled: true });
    },
  );

  for (const decision of ['accept', 'keep'] as const) {
    app.post(
      `${prefix}/held/${decision}`,
      {
        config: { access: 'admin' },
        schema: {
          documentedResponse: { 200: RateSetting },
          tags,
          summary:
            decision === 'accept'
              ? `Accept the jump of ${what} its feed held: the held figure becomes the rate`
              : `Keep ${what} over the jump its feed held: the current rate stays, fresh again for max_age_seconds`,
          params,
          errors: { NOT_FOUND: 'No such rate setting', CONFLICT: 'No jump waits for a decision' },
        },
      },
      async (request) => {
        const scope = await scopeOf(request);
        return answer(service.toRate(await service.decideHeld(ctx, scope, decision, auditFor(request), actor(request))), scope);
      },
    );
  }
}

/** USDT rates per currency: typed or kept by exchange feeds, and their refreshes. */
export async function rateAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/rates',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: AdminListRatesAnswer }, tags, summary: 'The USDT rate of each currency' } },
    async () => ({ rates: (await service.listSettings(ctx, null)).map(service.toRate) }),
  );

  rateSettingRoutes(app, ctx, {
    prefix: '/rates/:currency',
    params: CurrencyParams,
    what: "a currency's USDT rate",
    scopeOf: async (request) => ({ terminalId: null, currency: service.parseCurrency((request.params as { currency: string }).currency) }),
    answer: (setting) => setting,
  });

  app.get(
    '/rate-refreshes/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminRateRefreshAnswer },
        tags,
        summary: "One rate refresh with its sample: why a payment's rate was what it was",
        params: Type.Object({ id: Type.String() }),
        errors: { NOT_FOUND: 'No such refresh' },
      },
    },
    async (request) => {
      const refresh = await service.getRefresh(ctx, request.params.id);
      return { ...toRefresh(refresh), sample: refresh.sample };
    },
  );
}

import { type TSchema, Type } from 'typebox';

/**
 * What the routes of rates.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

/** A rate setting: the currency's own, or a terminal's (then with terminal_id). */
export const RateSetting = Type.Object({
  terminal_id: Type.Optional(Type.String({ format: 'uuid' })),
  currency: Type.String(),
  rate: Nullable(
    Type.Number({
      description:
        'price of 1 USDT in the currency; null until a feed first gives it (and for a terminal following the currency with its markup: see effective)',
    }),
  ),
  source: Nullable(Type.String({ description: 'the feed: bybit_p2p, binance_p2p, htx_p2p, rapira, grinex; null for a typed rate' })),
  markup_percent: Type.Number(),
  updated_at: DateTime,
  stale: Type.Boolean({
    description: 'a feed rate older than max_age_seconds, or none yet: deals that need it are refused (503 PAY_004, data.reason "rate_stale")',
  }),
  mode: Type.Union([Type.Literal('manual'), Type.Literal('feed'), Type.Literal('markup')]),
  state: Type.Union([
    Type.Literal('manual'),
    Type.Literal('markup'),
    Type.Literal('fresh'),
    Type.Literal('stale'),
    Type.Literal('waiting'),
    Type.Literal('held'),
  ]),
  figure: Nullable(Type.Number({ description: "the market's figure before the markup" })),
  payout_markup_percent: Nullable(Type.Number()),
  refresh_seconds: Nullable(Type.Integer()),
  max_age_seconds: Nullable(Type.Integer()),
  max_spread_percent: Nullable(Type.Number()),
  max_jump_percent: Nullable(Type.Number()),
  options: Type.Record(Type.String(), Type.Unknown()),
  cross_check: Type.Array(Type.Object({ source: Type.String(), options: Type.Record(Type.String(), Type.Unknown()) })),
  fetched_at: Nullable(DateTime),
  age_seconds: Nullable(Type.Integer()),
  refresh_id: Nullable(Type.String({ description: 'the rate refresh that gave the rate (GET /admin/v1/rate-refreshes/{id})' })),
  failures: Type.Integer(),
  last_error: Nullable(Type.String()),
  held: Nullable(Type.Object({ refresh_id: Type.String(), rate: Nullable(Type.Number()), figure: Nullable(Type.Number()), at: DateTime })),
});

/** A rate a terminal prices with (its own setting or the currency's), as a create would read it now. */
export const EffectiveRate = Type.Object({
  currency: Type.String(),
  rate: Nullable(Type.Number()),
  payout_rate: Nullable(Type.Number({ description: "payouts' rate (the sell side's markup where one is set)" })),
  source: Nullable(Type.String()),
  stale: Type.Boolean(),
  refresh_id: Nullable(Type.String()),
});

/** GET /admin/v1/rates */
export const AdminListRatesAnswer = Type.Object({ rates: Type.Array(RateSetting) });

/** A rate refresh: typed, fetched, held, failed, a held jump accepted or the rate kept. */
export const RateRefresh = Type.Object({
  id: Type.String(),
  currency: Type.String(),
  terminal_id: Nullable(Type.String({ format: 'uuid' })),
  at: DateTime,
  kind: Type.Union(['manual', 'settings', 'fetched', 'held', 'failed', 'accepted', 'kept'].map((k) => Type.Literal(k))),
  source: Nullable(Type.String()),
  figure: Nullable(Type.Number()),
  markup_percent: Nullable(Type.Number()),
  rate: Nullable(Type.Number()),
  gave_rate: Type.Boolean(),
  error: Nullable(Type.String()),
  actor: Nullable(Type.String()),
});

/** GET /admin/v1/rate-refreshes/{id} */
export const AdminRateRefreshAnswer = Type.Object({
  ...RateRefresh.properties,
  sample: Type.Unknown({
    description: 'what the fetch saw: per source its figure or error, the adverts (each left_out with why, when it did not count) and the prices used',
  }),
});

/** GET /admin/v1/rates/{currency}/history */
export const AdminRateHistoryAnswer = Type.Object({
  rate: RateSetting,
  refreshes: Type.Array(RateRefresh),
  last_sample: Nullable(AdminRateRefreshAnswer),
});

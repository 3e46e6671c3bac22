import { type Static, Type } from 'typebox';
import { maskCard } from '../lib/mask.js';
import { METHODS, type Method, REQUISITE_TYPES, type RequisiteType as RequisiteTypeName } from '../lib/methods.js';
import { toNumber } from '../lib/money.js';
import { TRAFFIC_CLASSES, type TrafficClass } from '../risk/pool-rules.repo.js';
import type { RequisiteLoad, RequisiteRow } from './requisites.repo.js';

const RequisiteType = Type.Unsafe<RequisiteTypeName>({ type: 'string', enum: [...REQUISITE_TYPES] });
const MethodName = Type.Unsafe<Method>({ type: 'string', enum: [...METHODS] });

const TURNOVER = (period: string) =>
  `most the requisite may be handed out in ${period}, in its currency (payer amounts of payments not cancelled, pending ones included); null: the executor's default`;
const COUNT = (period: string) => `most hand-outs in ${period} (payments not cancelled, pending ones included); null: the executor's default`;

/**
 * The payers' traffic classes something takes (migration 048): `new` (no completed payment with
 * the merchant, or no client_id), `returning`, `trusted` (thresholds: PUT /admin/v1/risk/classes).
 */
export const TrafficClasses = Type.Union(
  [Type.Array(Type.Unsafe<TrafficClass>({ type: 'string', enum: [...TRAFFIC_CLASSES] }), { minItems: 1, uniqueItems: true }), Type.Null()],
  {
    description:
      "the payers' traffic classes taken: new (no completed payment with the merchant, or no client_id), returning, trusted (thresholds: PUT /admin/v1/risk/classes); null: every class",
  },
);

export const CreateRequisiteBody = Type.Object({
  type: RequisiteType,
  value: Type.String({ minLength: 1, maxLength: 2000, description: 'card number, phone number, subscriber number or EMV QR payload' }),
  bank: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'bank or operator code from the directory' })),
  holder: Type.Optional(Type.String({ maxLength: 200 })),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  country: Type.String({ pattern: '^[A-Z]{2}$' }),
  methods: Type.Array(MethodName, { minItems: 1, uniqueItems: true }),
  min_amount: Type.Optional(Type.Number({ minimum: 0 })),
  max_amount: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
  is_active: Type.Optional(Type.Boolean()),
  daily_turnover_limit: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: TURNOVER('a UTC day') })),
  monthly_turnover_limit: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: TURNOVER('a UTC month') })),
  daily_count_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: COUNT('a UTC day') })),
  monthly_count_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: COUNT('a UTC month') })),
  traffic_classes: Type.Optional(TrafficClasses),
});
export type CreateRequisiteBody = Static<typeof CreateRequisiteBody>;

export const UpdateRequisiteBody = Type.Partial(CreateRequisiteBody);
export type UpdateRequisiteBody = Static<typeof UpdateRequisiteBody>;

export const Requisite = Type.Object({
  id: Type.String(),
  executor_id: Type.String(),
  type: Type.String(),
  value: Type.String(),
  bank: Type.Union([Type.String(), Type.Null()]),
  holder: Type.String(),
  currency: Type.String(),
  country: Type.String(),
  methods: Type.Array(Type.String()),
  min_amount: Type.Number(),
  max_amount: Type.Union([Type.Number(), Type.Null()]),
  is_active: Type.Boolean(),
  daily_turnover_limit: Type.Union([Type.Number(), Type.Null()]),
  monthly_turnover_limit: Type.Union([Type.Number(), Type.Null()]),
  daily_count_limit: Type.Union([Type.Integer(), Type.Null()]),
  monthly_count_limit: Type.Union([Type.Integer(), Type.Null()]),
  traffic_classes: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "the payers' traffic classes the requisite takes (its executor's classes apply too); null: every class",
  }),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'why the requisite was switched off automatically; switching it on clears it' }),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

/** The operator's view of a requisite; list views mask card numbers (`masked`). */
export function toRequisite(row: RequisiteRow, masked = false): Static<typeof Requisite> {
  return {
    id: row.id,
    executor_id: row.executor_id,
    type: row.type,
    value: masked && row.type === 'card' ? maskCard(row.value) : row.value,
    bank: row.bank_code,
    holder: row.holder,
    currency: row.currency,
    country: row.country,
    methods: row.methods,
    min_amount: toNumber(row.min_amount)!,
    max_amount: toNumber(row.max_amount),
    is_active: row.is_active,
    daily_turnover_limit: toNumber(row.daily_turnover_limit),
    monthly_turnover_limit: toNumber(row.monthly_turnover_limit),
    daily_count_limit: row.daily_count_limit,
    monthly_count_limit: row.monthly_count_limit,
    traffic_classes: row.traffic_classes,
    disabled_reason: row.disabled_reason,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

const PeriodUsage = Type.Object({ amount: Type.Number(), count: Type.Integer() });

/** A requisite with what it has taken in the current UTC day and month (the operator's single view). */
export const RequisiteDetail = Type.Intersect([
  Requisite,
  Type.Object({
    usage: Type.Object(
      { day: PeriodUsage, month: PeriodUsage },
      { description: 'hand-outs not cancelled (pending ones included) in the current UTC day and month, against the limits' },
    ),
  }),
]);

export function toUsage(rows: { period: 'day' | 'month'; amount: string; count: number }[]) {
  const of = (period: 'day' | 'month') => {
    const row = rows.find((r) => r.period === period);
    return { amount: row ? toNumber(row.amount)! : 0, count: row?.count ?? 0 };
  };
  return { day: of('day'), month: of('month') };
}

const Limit = Type.Union([Type.Number(), Type.Null()]);

/** The executor's own view of a requisite: how much it has taken today and this month against the limits in force. */
export const OwnRequisite = Type.Intersect([
  Requisite,
  Type.Object({
    usage: Type.Object(
      { day: PeriodUsage, month: PeriodUsage },
      { description: 'hand-outs not cancelled (pending ones included) in the current UTC day and month' },
    ),
    limits_in_force: Type.Object(
      { daily_turnover: Limit, monthly_turnover: Limit, daily_count: Limit, monthly_count: Limit },
      { description: "the requisite's own limits, else the executor's defaults; null: none" },
    ),
  }),
]);

export function toOwnRequisite(row: RequisiteRow, load: RequisiteLoad | undefined): Static<typeof OwnRequisite> {
  return {
    ...toRequisite(row),
    usage: {
      day: { amount: toNumber(load?.day_amount ?? '0')!, count: load?.day_count ?? 0 },
      month: { amount: toNumber(load?.month_amount ?? '0')!, count: load?.month_count ?? 0 },
    },
    limits_in_force: {
      daily_turnover: toNumber(load?.daily_turnover_limit ?? null),
      monthly_turnover: toNumber(load?.monthly_turnover_limit ?? null),
      daily_count: load?.daily_count_limit ?? null,
      monthly_count: load?.monthly_count_limit ?? null,
    },
  };
}

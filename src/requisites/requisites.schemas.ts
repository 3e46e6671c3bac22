import { type Static, Type } from 'typebox';
import { maskCard } from '../lib/mask.js';
import { METHODS, type Method, REQUISITE_TYPES, type RequisiteType as RequisiteTypeName } from '../lib/methods.js';
import { toNumber } from '../lib/money.js';
import type { RequisiteRow } from './requisites.repo.js';

const RequisiteType = Type.Unsafe<RequisiteTypeName>({ type: 'string', enum: [...REQUISITE_TYPES] });
const MethodName = Type.Unsafe<Method>({ type: 'string', enum: [...METHODS] });

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
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

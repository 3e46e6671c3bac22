import { Type } from 'typebox';

/**
 * What the routes of risk.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only; test/answer-checks.ts checks every answer of the suite against them).
 */

/** A success with nothing to answer (204). */
export const NoContent = Type.Null({ description: 'Done; the answer has no body' });

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** A block, as the operator API shows it: the value only in its shown form (a card as first 6…last 4, a phone masked). */
export const BlockAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.Enum(['client_id', 'card', 'phone', 'ip', 'device']),
  value_shown: Type.String({ description: 'the blocked value as a person reads it; a card or phone never in full' }),
  merchant_id: Nullable(Type.String({ format: 'uuid', description: 'null: the block holds for every merchant' })),
  reason: Type.String(),
  expires_at: Nullable(Type.String({ format: 'date-time' })),
  created_by: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  removed_by: Nullable(Type.String()),
  removed_at: Nullable(Type.String({ format: 'date-time' })),
  active: Type.Boolean({ description: 'holds now: not removed, not expired' }),
});

export const BlockListAnswer = Type.Object({
  blocks: Type.Array(BlockAnswer),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

/** A velocity limit. */
export const LimitAnswer = Type.Object({
  scope: Type.Enum(['client_id', 'ip']),
  window_seconds: Type.Integer(),
  max_payments: Nullable(Type.Integer()),
  max_amount: Nullable(Type.Number({ description: "in the order's currency (each currency has its own window)" })),
  updated_by: Type.String(),
  updated_at: Type.String({ format: 'date-time' }),
});

export const LimitListAnswer = Type.Object({ limits: Type.Array(LimitAnswer) });

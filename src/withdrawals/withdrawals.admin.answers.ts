import { Type } from 'typebox';

/**
 * What the routes of withdrawals.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /admin/v1/withdrawals */
export const AdminListWithdrawalsAnswer = Type.Object({
  withdrawals: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      amount: Type.Number(),
      fee: Type.Number(),
      currency: Type.String(),
      address: Type.String(),
      tx_hash: Type.Unknown(),
      status: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
      merchant_id: Type.Unknown(),
      terminal_id: Type.Unknown(),
      executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      send_amount: Type.Number(),
      reserve: Type.Number(),
      adapter: Type.String(),
      failure_reason: Type.Unknown(),
    }),
  ),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/withdrawals/{id} */
export const AdminGetWithdrawalAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Unknown(),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Unknown(),
  send_amount: Type.Number(),
  reserve: Type.Number(),
  adapter: Type.String(),
  failure_reason: Type.Unknown(),
});

/** POST /admin/v1/withdrawals/{id}/complete */
export const AdminCompleteWithdrawalAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  send_amount: Type.Number(),
  reserve: Type.Number(),
  adapter: Type.String(),
  failure_reason: Type.Unknown(),
});

/** POST /admin/v1/withdrawals/{id}/fail */
export const AdminFailWithdrawalAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Unknown(),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  send_amount: Type.Number(),
  reserve: Type.Number(),
  adapter: Type.String(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
});

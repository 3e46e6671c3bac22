import { Type } from 'typebox';

/**
 * What the routes of executors.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /executor/v1/notifications */
export const ExecutorSendNotificationAnswer = Type.Object({
  matched: Type.Boolean(),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  notification_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  status: Type.String(),
  duplicate: Type.Boolean(),
});

/** GET /executor/v1/balance */
export const ExecutorGetBalanceAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  credit_limit: Type.Number(),
  payin_reward: Type.Number(),
  payout_reward: Type.Number(),
  is_paused: Type.Boolean(),
});

/** GET /executor/v1/statement */
export const ExecutorGetStatementAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  entries: Type.Array(
    Type.Object({
      id: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      kind: Type.String(),
      account: Type.String(),
      amount: Type.Number(),
      balance_after: Type.Number(),
      ref_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      memo: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /executor/v1/deposits */
export const ExecutorListDepositsAnswer = Type.Object({
  deposits: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      tx_hash: Type.Union([Type.String(), Type.Null()]),
      log_index: Type.Number(),
      from: Type.String(),
      address: Type.String(),
      amount: Type.Number(),
      block_number: Type.Number(),
      block_time: Type.String({ format: 'date-time' }),
      credited_at: Type.String({ format: 'date-time' }),
    }),
  ),
  limit: Type.Number(),
  offset: Type.Number(),
});

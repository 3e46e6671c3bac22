import { Type } from 'typebox';

/**
 * What the routes of withdrawals.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A withdrawal as its owner sees it: the one shape the operator's and the merchant cabinet's answers build on. */
export const WithdrawalAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

/** POST /executor/v1/withdrawals (200) */
export const ExecutorCreateWithdrawalAnswer200 = WithdrawalAnswer;

/** POST /executor/v1/withdrawals (201) */
export const ExecutorCreateWithdrawalAnswer201 = WithdrawalAnswer;

/** GET /executor/v1/withdrawals */
export const ExecutorListWithdrawalsAnswer = Type.Object({
  withdrawals: Type.Array(WithdrawalAnswer),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /executor/v1/withdrawals/{id} */
export const ExecutorGetWithdrawalAnswer = WithdrawalAnswer;

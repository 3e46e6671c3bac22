import { Type } from 'typebox';

/**
 * What the routes of payouts.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /executor/v1/payouts */
export const ExecutorListPayoutsAnswer = Type.Object({
  available: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      amount: Type.Number(),
      currency: Type.String(),
      method: Type.String(),
      requisites: Type.String(),
      bank: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  taken: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      amount: Type.Number(),
      currency: Type.String(),
      method: Type.String(),
      requisites: Type.String(),
      bank: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
      holder_name: Type.Union([Type.String(), Type.Null()]),
      status: Type.String(),
      taken_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    }),
  ),
});

/** POST /executor/v1/payouts/{id}/take */
export const ExecutorTakePayoutAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  bank: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  holder_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  taken_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** POST /executor/v1/payouts/{id}/complete */
export const ExecutorCompletePayoutAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  bank: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  holder_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  taken_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** POST /executor/v1/payouts/{id}/fail */
export const ExecutorFailPayoutAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  bank: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  holder_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  taken_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

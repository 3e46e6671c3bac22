import { Type } from 'typebox';

/**
 * What the routes of payouts.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A payout on offer to the executors. */
const AvailablePayout = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  bank: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** A payout the executor took: what it was offered, whom to pay and how it stands. */
const TakenPayout = Type.Object({
  ...AvailablePayout.properties,
  holder_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  taken_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** GET /executor/v1/payouts */
export const ExecutorListPayoutsAnswer = Type.Object({
  available: Type.Array(AvailablePayout),
  taken: Type.Array(TakenPayout),
});

/** POST /executor/v1/payouts/{id}/take */
export const ExecutorTakePayoutAnswer = TakenPayout;

/** POST /executor/v1/payouts/{id}/complete */
export const ExecutorCompletePayoutAnswer = TakenPayout;

/** POST /executor/v1/payouts/{id}/fail */
export const ExecutorFailPayoutAnswer = TakenPayout;

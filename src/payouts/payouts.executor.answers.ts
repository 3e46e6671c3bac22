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

/** A payout the executor paid: the recipient masked again, when, and whether its proof is kept. */
const PaidPayout = Type.Object({
  ...TakenPayout.properties,
  completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  has_proof: Type.Boolean({ description: 'the proof is kept: GET /executor/v1/payouts/{id}/proof' }),
});

/** GET /executor/v1/payouts */
export const ExecutorListPayoutsAnswer = Type.Object({
  available: Type.Array(AvailablePayout),
  taken: Type.Array(TakenPayout),
  paid: Type.Array(PaidPayout, { description: 'the last 50 payouts you paid, newest first' }),
});

/** POST /executor/v1/payouts/{id}/take */
export const ExecutorTakePayoutAnswer = TakenPayout;

/** POST /executor/v1/payouts/{id}/complete */
export const ExecutorCompletePayoutAnswer = TakenPayout;

/** POST /executor/v1/payouts/{id}/fail */
export const ExecutorFailPayoutAnswer = TakenPayout;

import { Type } from 'typebox';
import { RiskFlagSummary } from '../risk/flags.admin.answers.js';

/**
 * What the routes of payouts.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A payout as the operator sees it. */
const AdminPayout = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ext_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  method: Type.String(),
  requisites: Type.String(),
  holder_name: Type.Union([Type.String(), Type.Null()]),
  bank: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  reserve: Type.Number(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  has_proof: Type.Boolean(),
  is_test: Type.Boolean({ description: 'a test terminal’s payout: reserved nothing, taken by no executor' }),
  provider_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  paid_by: Type.Union(
    [
      Type.Object({
        executor: Type.Union([Type.String(), Type.Null()], { description: 'The executor who took it, by name' }),
        provider: Type.Union([Type.String(), Type.Null()], { description: 'The provider that paid it, by name' }),
        person: Type.Union([Type.String(), Type.Null()], { description: 'Who completed it, as the audit log names them' }),
      }),
      Type.Null(),
    ],
    { description: 'Who paid a completed payout (null until completed); its proof is GET /admin/v1/payouts/{id}/proof when has_proof' },
  ),
});

/** GET /admin/v1/payouts */
export const AdminListPayoutsAnswer = Type.Object({
  payouts: Type.Array(AdminPayout),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /admin/v1/payouts/{id}/complete, /fail and /cancel: the payout after the change. */
export const AdminPayoutAnswer = AdminPayout;

/** GET /admin/v1/payouts/{id}: the payout with its flags. */
export const AdminGetPayoutAnswer = Type.Object({
  ...AdminPayout.properties,
  risk_flags: Type.Array(RiskFlagSummary, {
    description: 'what the evidence checks flagged on the payout (its proof already used for another payout or a payment), oldest first',
  }),
});

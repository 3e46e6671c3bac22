import { Type } from 'typebox';

/**
 * What the routes of flags.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: test/answer-checks.ts checks every answer of the suite against them).
 */

/** A risk rule's flag (or refusal) with its reason, as the operator sees it. */
export const RiskFlagAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  rule: Type.String({ description: 'receipt_reused, reference_reused, payer_name (evidence checks); block, velocity, traffic_class' }),
  action: Type.String({ description: 'flagged: waits for a person; refused: a create or payout was turned away' }),
  figure: Type.String({ description: 'what the rule compared, in words: "receipt sha256 ab12… already used for payment …"' }),
  inputs: Type.Object({}, { additionalProperties: true, description: 'what the rule read (never a card number or phone in clear)' }),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  dispute_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  settled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  settled_by: Type.Union([Type.String(), Type.Null()]),
  settle_comment: Type.Union([Type.String(), Type.Null()]),
});

/** A flag as a payment's or a dispute's card lists it (`risk_flags`): open ones carry the console's red "Check" badge. */
export const RiskFlagSummary = Type.Object({
  id: Type.String({ format: 'uuid', description: 'settle it with POST /admin/v1/risk/hits/{id}/settle' }),
  rule: Type.String({ description: 'receipt_reused, reference_reused or payer_name' }),
  figure: Type.String(),
  dispute_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  settled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  settled_by: Type.Union([Type.String(), Type.Null()]),
});

/** POST /admin/v1/risk/hits/{id}/settle */
export const AdminSettleRiskHitAnswer = RiskFlagAnswer;

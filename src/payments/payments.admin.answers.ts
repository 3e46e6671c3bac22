import { Type } from 'typebox';
import { RiskFlagSummary } from '../risk/flags.admin.answers.js';

/**
 * What the routes of payments.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/**
 * A payment as the routes answer it (toPayment): the one shape the operator's, the disputes' and
 * the merchant cabinet's answers build on. `received_amount`: COMPLETED_APPEAL only.
 */
export const PaymentAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  ext_id: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  rate: Type.Number(),
  payin_rate: Type.Number(),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_name: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  method: Type.String(),
  requisites: Type.Object({
    type: Type.String(),
    value: Type.String(),
    holder: Type.String(),
    // A requisite without a bank (a test payment's made-up card, issue 33 item 4) has none of the three.
    bank: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    bank_code: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    bank_name: Type.Optional(Type.String()),
  }),
  payment_url: Type.String(),
  valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  received_amount: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});

/** GET /admin/v1/payments/{id} */
export const AdminGetPaymentAnswer = Type.Object({
  ...PaymentAnswer.properties,
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The executor whose requisite it was handed (null: a provider or none yet)',
  }),
  requisite_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  client_id: Type.Unknown(),
  payer_class: Type.Union([Type.Literal('new'), Type.Literal('returning'), Type.Literal('trusted'), Type.Null()], {
    description: "The payer's traffic class with the merchant when the payment was created (null: before classes, a test or a provider's payment)",
  }),
  cancel_reason: Type.Union([Type.String(), Type.Null()]),
  cancel_note: Type.Unknown(),
  rate_refresh_id: Type.Union([Type.String({ description: 'why the rate was what it was: GET /admin/v1/rate-refreshes/{id}' }), Type.Null()]),
  is_test: Type.Boolean({ description: 'a test terminal’s payment (test requisites, no money moved)' }),
  payer_name: Type.Union([Type.String(), Type.Null()], { description: 'the payer’s name the merchant sent on create (`payer_name`), if any' }),
  risk_flags: Type.Array(RiskFlagSummary, {
    description: 'what the evidence checks flagged on the payment or its disputes (a reused receipt or bank reference, another payer name), oldest first',
  }),
});

/** POST /admin/v1/payments/{id}/cancel */
export const AdminCancelPaymentAnswer = PaymentAnswer;

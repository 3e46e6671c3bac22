import { Type } from 'typebox';
import { PaymentAnswer } from '../payments/payments.admin.answers.js';
import { RiskFlagSummary } from '../risk/flags.admin.answers.js';

/**
 * What the routes of disputes.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A stored receipt as a dispute card shows it. */
const DisputeReceipt = Type.Object({
  id: Type.String({ format: 'uuid' }),
  source: Type.String(),
  url: Type.String(),
  content_type: Type.Union([Type.String(), Type.Null()]),
  size_bytes: Type.Union([Type.Number(), Type.Null()]),
  sha256: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

/** A dispute card: the dispute, its payment, the payment's receipts, confirmations and notifications. */
const Dispute = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  amount: Type.Union([Type.Number(), Type.Null()]),
  comment: Type.Union([Type.String(), Type.Null()]),
  receipt: Type.Union([DisputeReceipt, Type.Null()]),
  decided_amount: Type.Union([Type.Number(), Type.Null()]),
  decided_by: Type.Union([Type.String(), Type.Null()]),
  decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  decision_reason: Type.Unknown(),
  created_at: Type.String({ format: 'date-time' }),
  stage: Type.Union([Type.String(), Type.Null()], { description: 'while open: awaiting_executor, contested or escalated; null for a provider’s payment' }),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  answer_due_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the executor’s deadline' }),
  support_due_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'support’s deadline, once contested or escalated' }),
  overdue: Type.Boolean(),
  hold: Type.Union([Type.Number(), Type.Null()], { description: 'USDT frozen on the executor while open' }),
  uncovered: Type.Boolean(),
  timed_out: Type.Union([Type.String(), Type.Null()]),
  executor_answer: Type.Union([
    Type.Object({
      kind: Type.String({ description: 'accepted or contested' }),
      amount: Type.Union([Type.Number(), Type.Null()]),
      comment: Type.Union([Type.String(), Type.Null()]),
      file: Type.Union([
        Type.Object({
          url: Type.String(),
          content_type: Type.Union([Type.String(), Type.Null()]),
          size_bytes: Type.Union([Type.Number(), Type.Null()]),
          sha256: Type.Union([Type.String(), Type.Null()]),
        }),
        Type.Null(),
      ]),
      at: Type.String({ format: 'date-time' }),
      late: Type.Boolean(),
    }),
    Type.Null(),
  ]),
  payment: Type.Object({
    ...PaymentAnswer.properties,
    merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    cancel_reason: Type.Union([Type.String(), Type.Null()]),
    is_test: Type.Boolean({ description: 'a test terminal’s payment: its merchant decides the dispute in the cabinet (test mode)' }),
  }),
  receipts: Type.Array(DisputeReceipt),
  confirmations: Type.Array(
    Type.Object({
      payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      source: Type.String(),
      receipt_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  notifications: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      amount: Type.Number(),
      status: Type.String(),
      text: Type.Unknown(),
      received_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
  risk_flags: Type.Array(RiskFlagSummary, {
    description: 'what the evidence checks flagged on this dispute or its payment (a reused receipt or bank reference, another payer name), oldest first',
  }),
});

/** GET /admin/v1/disputes */
export const AdminListDisputesAnswer = Type.Object({
  disputes: Type.Array(Dispute),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/disputes/{id} */
export const AdminGetDisputeAnswer = Dispute;

/** POST /admin/v1/payments/{id}/dispute/approve */
export const AdminApprovePaymentDisputeAnswer = PaymentAnswer;

/** POST /admin/v1/payments/{id}/dispute/reject */
export const AdminRejectPaymentDisputeAnswer = PaymentAnswer;

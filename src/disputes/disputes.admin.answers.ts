import { Type } from 'typebox';

/**
 * What the routes of disputes.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /admin/v1/disputes */
export const AdminListDisputesAnswer = Type.Object({
  disputes: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      status: Type.String(),
      amount: Type.Union([Type.Number(), Type.Null()]),
      comment: Type.Union([Type.String(), Type.Null()]),
      receipt: Type.Union([
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          source: Type.String(),
          url: Type.String(),
          content_type: Type.Union([Type.String(), Type.Null()]),
          size_bytes: Type.Union([Type.Number(), Type.Null()]),
          sha256: Type.Union([Type.String(), Type.Null()]),
          created_at: Type.String({ format: 'date-time' }),
        }),
        Type.Null(),
      ]),
      decided_amount: Type.Union([Type.Number(), Type.Null()]),
      decided_by: Type.Union([Type.String(), Type.Null()]),
      decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      decision_reason: Type.Unknown(),
      created_at: Type.String({ format: 'date-time' }),
      payment: Type.Object({
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
          bank: Type.Union([Type.String(), Type.Null()]),
          bank_code: Type.Union([Type.String(), Type.Null()]),
          bank_name: Type.String(),
        }),
        payment_url: Type.String(),
        valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        created_at: Type.String({ format: 'date-time' }),
        merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
        cancel_reason: Type.Union([Type.String(), Type.Null()]),
        received_amount: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
      }),
      receipts: Type.Array(
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          source: Type.String(),
          url: Type.String(),
          content_type: Type.Union([Type.String(), Type.Null()]),
          size_bytes: Type.Union([Type.Number(), Type.Null()]),
          sha256: Type.Union([Type.String(), Type.Null()]),
          created_at: Type.String({ format: 'date-time' }),
        }),
      ),
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
    }),
  ),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/disputes/{id} */
export const AdminGetDisputeAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String(),
  amount: Type.Union([Type.Number(), Type.Null()]),
  comment: Type.Union([Type.String(), Type.Null()]),
  receipt: Type.Union([
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      source: Type.String(),
      url: Type.String(),
      content_type: Type.Union([Type.String(), Type.Null()]),
      size_bytes: Type.Union([Type.Number(), Type.Null()]),
      sha256: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ]),
  decided_amount: Type.Unknown(),
  decided_by: Type.Unknown(),
  decided_at: Type.Unknown(),
  decision_reason: Type.Unknown(),
  created_at: Type.String({ format: 'date-time' }),
  payment: Type.Object({
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
      bank: Type.Union([Type.String(), Type.Null()]),
      bank_code: Type.Union([Type.String(), Type.Null()]),
      bank_name: Type.String(),
    }),
    payment_url: Type.String(),
    valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    cancel_reason: Type.Union([Type.String(), Type.Null()]),
  }),
  receipts: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      source: Type.String(),
      url: Type.String(),
      content_type: Type.Union([Type.String(), Type.Null()]),
      size_bytes: Type.Union([Type.Number(), Type.Null()]),
      sha256: Type.Union([Type.String(), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
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
});

/** POST /admin/v1/payments/{id}/dispute/approve */
export const AdminApprovePaymentDisputeAnswer = Type.Object({
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
    bank: Type.Union([Type.String(), Type.Null()]),
    bank_code: Type.Union([Type.String(), Type.Null()]),
    bank_name: Type.String(),
  }),
  payment_url: Type.String(),
  valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  received_amount: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
});

/** POST /admin/v1/payments/{id}/dispute/reject */
export const AdminRejectPaymentDisputeAnswer = Type.Object({
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
    bank: Type.Union([Type.String(), Type.Null()]),
    bank_code: Type.Union([Type.String(), Type.Null()]),
    bank_name: Type.String(),
  }),
  payment_url: Type.String(),
  valid_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
});

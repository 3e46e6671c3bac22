import { Type } from 'typebox';
import { AdminGetWebhookAnswer, AdminListWebhooksAnswer } from '../webhooks/webhooks.admin.answers.js';

/**
 * What the routes of merchants.cabinet.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** GET /merchant/v1/me */
export const CabinetGetMeAnswer = Type.Object({
  merchant: Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
  }),
  api_base_url: Type.String(),
  terminals: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      balance: Type.Number(),
      balance_frozen: Type.Number(),
      withdrawal_fee: Type.Number(),
      currency: Type.String(),
      is_active: Type.Boolean(),
    }),
  ),
});

/** GET /merchant/v1/terminals/{id}/statement */
export const CabinetGetTerminalStatementAnswer = Type.Object({
  entries: Type.Array(Type.Unknown()),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /merchant/v1/terminals/{id}/api-key/rotate */
export const CabinetRotateTerminalApiKeyAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  api_key: Type.String(),
  previous_valid_until: Type.String({ format: 'date-time' }),
});

/** POST /merchant/v1/secret-key/rotate */
export const CabinetRotateSecretKeyAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  secret_key: Type.String(),
  previous_valid_until: Type.String({ format: 'date-time' }),
});

/** GET /merchant/v1/payments */
export const CabinetListPaymentsAnswer = Type.Object({
  payments: Type.Array(
    Type.Object({
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
      client_id: Type.Unknown(),
      cancel_reason: Type.Unknown(),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /merchant/v1/payments/{id} */
export const CabinetGetPaymentAnswer = Type.Object({
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
  client_id: Type.Unknown(),
  cancel_reason: Type.Unknown(),
});

/** GET /merchant/v1/payouts */
export const CabinetListPayoutsAnswer = Type.Object({
  payouts: Type.Array(Type.Unknown()),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /merchant/v1/withdrawals */
export const CabinetListWithdrawalsAnswer = Type.Object({
  withdrawals: Type.Array(Type.Unknown()),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /merchant/v1/withdrawals */
export const CabinetCreateWithdrawalAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  fee: Type.Number(),
  currency: Type.String(),
  address: Type.String(),
  tx_hash: Type.Unknown(),
  status: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
});

/** POST /merchant/v1/transfers */
export const CabinetCreateTransferAnswer = Type.Object({
  success: Type.Boolean(),
  from_terminal_id: Type.String({ format: 'uuid' }),
  to_terminal_id: Type.String({ format: 'uuid' }),
  amount: Type.Number(),
  currency: Type.String(),
});

/** GET /merchant/v1/webhooks */
export const CabinetListWebhooksAnswer = AdminListWebhooksAnswer;

/** GET /merchant/v1/webhooks/{id}: the delivery as the operator sees it, the merchant's own only. */
export const CabinetGetWebhookAnswer = AdminGetWebhookAnswer;

/** POST /merchant/v1/webhooks/{id}/resend */
export const CabinetResendWebhookAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String(),
});

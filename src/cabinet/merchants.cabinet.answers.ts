import { Type } from 'typebox';
import { DisputeResponse } from '../disputes/disputes.routes.js';
import { AdminRotateMerchantSecretKeyAnswer } from '../merchants/merchants.admin.answers.js';
import { PaymentAnswer } from '../payments/payments.admin.answers.js';
import { Payout } from '../payouts/payouts.schemas.js';
import { AdminRotateTerminalApiKeyAnswer } from '../terminals/terminals.admin.answers.js';
import { Terminal } from '../terminals/terminals.schemas.js';
import { AdminGetWebhookAnswer, AdminListWebhooksAnswer } from '../webhooks/webhooks.admin.answers.js';
import { WithdrawalAnswer } from '../withdrawals/withdrawals.executor.answers.js';

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
  terminals: Type.Array(Type.Object({ ...Terminal.properties, is_test: Type.Boolean({ description: 'a test terminal' }) })),
});

/** GET /merchant/v1/terminals/{id}/statement */
export const CabinetGetTerminalStatementAnswer = Type.Object({
  entries: Type.Array(Type.Unknown()),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /merchant/v1/terminals/{id}/api-key/rotate */
export const CabinetRotateTerminalApiKeyAnswer = AdminRotateTerminalApiKeyAnswer;

/** POST /merchant/v1/secret-key/rotate */
export const CabinetRotateSecretKeyAnswer = AdminRotateMerchantSecretKeyAnswer;

/** A payment as the merchant's cabinet shows it. */
const CabinetPayment = Type.Object({
  ...PaymentAnswer.properties,
  client_id: Type.Unknown(),
  cancel_reason: Type.Union([Type.String(), Type.Null()]),
  is_test: Type.Boolean({ description: 'a test terminal’s payment: test requisites, no money moves' }),
});

/** GET /merchant/v1/payments */
export const CabinetListPaymentsAnswer = Type.Object({
  payments: Type.Array(CabinetPayment),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /merchant/v1/payments/{id} */
export const CabinetGetPaymentAnswer = CabinetPayment;

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
  ...WithdrawalAnswer.properties,
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

/** POST /merchant/v1/payments/{id}/test/complete, /test/expire, /test/dispute/approve, /test/dispute/reject */
export const CabinetTestActionAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String({ description: 'the payment’s status after the action' }),
});

/** POST /merchant/v1/payments/{id}/dispute: the merchant API's answer to opening a dispute, the same schema. */
export const CabinetOpenDisputeAnswer = DisputeResponse;

/** POST /merchant/v1/payouts, and a test payout's /test/complete and /test/fail: the payout as the cabinet lists it. */
export const CabinetCreatePayoutAnswer = Type.Object({
  ...Payout.properties,
  terminal_id: Type.String({ format: 'uuid' }),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
  is_test: Type.Boolean(),
});

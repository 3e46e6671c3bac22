import { Type } from 'typebox';
import { WithdrawalAnswer } from './withdrawals.executor.answers.js';

/**
 * What the routes of withdrawals.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** A withdrawal as the operator sees it: whose it is, what is sent and reserved, how it went. */
const AdminWithdrawal = Type.Object({
  ...WithdrawalAnswer.properties,
  merchant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  terminal_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  send_amount: Type.Number(),
  reserve: Type.Number(),
  adapter: Type.String(),
  failure_reason: Type.Union([Type.String(), Type.Null()]),
});

/** GET /admin/v1/withdrawals */
export const AdminListWithdrawalsAnswer = Type.Object({
  withdrawals: Type.Array(AdminWithdrawal),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/withdrawals/{id} */
export const AdminGetWithdrawalAnswer = AdminWithdrawal;

/** POST /admin/v1/withdrawals/{id}/complete */
export const AdminCompleteWithdrawalAnswer = AdminWithdrawal;

/** POST /admin/v1/withdrawals/{id}/fail */
export const AdminFailWithdrawalAnswer = AdminWithdrawal;

import { Type } from 'typebox';
import { DepositAnswer, ExecutorBalanceAnswer, StatementAnswer } from './executors.admin.answers.js';

/**
 * What the routes of executors.executor.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /executor/v1/notifications */
export const ExecutorSendNotificationAnswer = Type.Object({
  matched: Type.Boolean(),
  payment_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  notification_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  status: Type.String(),
  duplicate: Type.Boolean(),
});

/** GET /executor/v1/balance */
export const ExecutorGetBalanceAnswer = ExecutorBalanceAnswer;

/** GET /executor/v1/statement */
export const ExecutorGetStatementAnswer = StatementAnswer;

/** GET /executor/v1/deposits */
export const ExecutorListDepositsAnswer = Type.Object({
  deposits: Type.Array(DepositAnswer),
  limit: Type.Number(),
  offset: Type.Number(),
});

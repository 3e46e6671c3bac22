import { Type } from 'typebox';
import { Requisite } from '../requisites/requisites.schemas.js';

/**
 * What the routes of executors.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** An executor's money: what the executor's balance answers, and the operator's executor starts with. */
export const ExecutorBalanceAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  credit_limit: Type.Number(),
  payin_reward: Type.Number(),
  payout_reward: Type.Number(),
  is_paused: Type.Boolean(),
});

/** An executor as the operator sees it. */
const AdminExecutor = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  ...ExecutorBalanceAnswer.properties,
  priority: Type.Number(),
  score: Type.Number(),
  score_figures: Type.Object({
    handed_out: Type.Number(),
    completed: Type.Number(),
    conversion: Type.Unknown(),
    median_minutes_to_complete: Type.Unknown(),
    disputes_7d: Type.Number({ description: 'disputes opened on its payments in the last 7 days' }),
    disputes_lost_7d: Type.Number({ description: 'of them, approved without its acceptance (a person, its deadline or a provider approved them)' }),
    disputes_late_7d: Type.Number({ description: 'of them, not answered by their deadline' }),
    handed_out_7d: Type.Number({ description: 'its hand-outs in the last 7 days' }),
    dispute_ratio_7d: Type.Unknown(),
    computed_at: Type.Unknown(),
  }),
  default_daily_turnover_limit: Type.Unknown(),
  default_monthly_turnover_limit: Type.Unknown(),
  default_daily_count_limit: Type.Unknown(),
  default_monthly_count_limit: Type.Unknown(),
  disable_after_expired: Type.Number(),
  traffic_classes: Type.Union([Type.Array(Type.String()), Type.Null()], {
    description: "the payers' traffic classes its requisites take (each requisite's own classes apply too); null: every class",
  }),
  device_silence_minutes: Type.Union([Type.Number(), Type.Null()]),
  devices_silent: Type.Boolean(),
  max_open_disputes: Type.Number({ description: 'at this many open disputes on its payments it gets no new hand-outs' }),
  open_disputes: Type.Number(),
  uncovered_disputes: Type.Number({ description: 'open disputes its deposit could not cover: while any, no hand-outs' }),
  off_reason: Type.Union([Type.String(), Type.Null()], { description: 'why a rule switched it off (`dispute_ratio`)' }),
  low_deposit_threshold: Type.Union([Type.Number(), Type.Null()], {
    description: 'USDT: below it the executor is told by Telegram, once per crossing; null: never',
  }),
  takes_payments: Type.Boolean(),
  why_not: Type.Array(Type.String(), {
    description: 'why its requisites are not handed out: switched_off, dispute_ratio, paused, devices_silent, dispute_cap, dispute_uncovered',
  }),
});

/** The ledger of an account: its balances and a page of entries. */
export const StatementAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  entries: Type.Array(
    Type.Object({
      id: Type.String(),
      created_at: Type.String({ format: 'date-time' }),
      kind: Type.String(),
      account: Type.String(),
      amount: Type.Number(),
      balance_after: Type.Number(),
      ref_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      memo: Type.Union([Type.String(), Type.Null()]),
      about: Type.Union(
        [
          Type.Object({
            type: Type.String({ description: 'payment, payout or withdrawal' }),
            ext_id: Type.Union([Type.String(), Type.Null()]),
            amount: Type.String({ description: 'Its amount, in its currency (a decimal string)' }),
            currency: Type.String(),
            status: Type.String(),
          }),
          Type.Null(),
        ],
        { description: 'What the posting is about (its ref_id), when it is this owner’s own: the names a person knows it by' },
      ),
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** A deposit credited to an executor. */
export const DepositAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  tx_hash: Type.Union([Type.String(), Type.Null()]),
  log_index: Type.Number(),
  from: Type.String(),
  address: Type.String(),
  amount: Type.Number(),
  block_number: Type.Number(),
  block_time: Type.String({ format: 'date-time' }),
  credited_at: Type.String({ format: 'date-time' }),
});

/** POST /admin/v1/executors */
export const AdminCreateExecutorAnswer = Type.Object({
  ...AdminExecutor.properties,
  token: Type.String(),
});

/** GET /admin/v1/executors */
export const AdminListExecutorsAnswer = Type.Object({
  executors: Type.Array(
    Type.Object({
      ...AdminExecutor.properties,
      requisites: Type.Number(),
    }),
  ),
});

/** GET /admin/v1/executors/{id} */
export const AdminGetExecutorAnswer = Type.Object({
  ...AdminExecutor.properties,
  requisites: Type.Array(Requisite),
});

/** PATCH /admin/v1/executors/{id} */
export const AdminUpdateExecutorAnswer = AdminExecutor;

/** POST /admin/v1/executors/{id}/adjustments */
export const AdminCreateExecutorAdjustmentAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
});

/** GET /admin/v1/executors/{id}/statement */
export const AdminGetExecutorStatementAnswer = StatementAnswer;

/** GET /admin/v1/executors/{id}/deposits */
export const AdminListExecutorDepositsAnswer = Type.Object({
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  deposits: Type.Array(DepositAnswer),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** POST /admin/v1/executors/{id}/token/rotate */
export const AdminRotateExecutorTokenAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  token: Type.String(),
});

/** GET /admin/v1/requisites */
export const AdminListRequisitesAnswer = Type.Object({
  requisites: Type.Array(Requisite),
});

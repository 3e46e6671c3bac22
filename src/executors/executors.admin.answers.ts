import { Type } from 'typebox';

/**
 * What the routes of executors.admin.ts answer on success, as the OpenAPI document shows them
 * (documentation only: the answers are not serialised with these; test/answer-checks.ts checks
 * every answer of the suite against them).
 */

/** POST /admin/v1/executors */
export const AdminCreateExecutorAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  credit_limit: Type.Number(),
  payin_reward: Type.Number(),
  payout_reward: Type.Number(),
  is_paused: Type.Boolean(),
  priority: Type.Number(),
  score: Type.Number(),
  score_figures: Type.Object({
    handed_out: Type.Number(),
    completed: Type.Number(),
    conversion: Type.Unknown(),
    median_minutes_to_complete: Type.Unknown(),
    computed_at: Type.Unknown(),
  }),
  default_daily_turnover_limit: Type.Unknown(),
  default_monthly_turnover_limit: Type.Unknown(),
  default_daily_count_limit: Type.Unknown(),
  default_monthly_count_limit: Type.Unknown(),
  disable_after_expired: Type.Number(),
  device_silence_minutes: Type.Unknown(),
  devices_silent: Type.Boolean(),
  token: Type.String(),
});

/** GET /admin/v1/executors */
export const AdminListExecutorsAnswer = Type.Object({
  executors: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      name: Type.String(),
      is_active: Type.Boolean(),
      created_at: Type.String({ format: 'date-time' }),
      balance: Type.Number(),
      balance_frozen: Type.Number(),
      currency: Type.String(),
      deposit_address: Type.Unknown(),
      credit_limit: Type.Number(),
      payin_reward: Type.Number(),
      payout_reward: Type.Number(),
      is_paused: Type.Boolean(),
      priority: Type.Number(),
      score: Type.Number(),
      score_figures: Type.Object({
        handed_out: Type.Number(),
        completed: Type.Number(),
        conversion: Type.Unknown(),
        median_minutes_to_complete: Type.Unknown(),
        computed_at: Type.Unknown(),
      }),
      default_daily_turnover_limit: Type.Unknown(),
      default_monthly_turnover_limit: Type.Unknown(),
      default_daily_count_limit: Type.Unknown(),
      default_monthly_count_limit: Type.Unknown(),
      disable_after_expired: Type.Number(),
      device_silence_minutes: Type.Unknown(),
      devices_silent: Type.Boolean(),
      requisites: Type.Number(),
    }),
  ),
});

/** GET /admin/v1/executors/{id} */
export const AdminGetExecutorAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  credit_limit: Type.Number(),
  payin_reward: Type.Number(),
  payout_reward: Type.Number(),
  is_paused: Type.Boolean(),
  priority: Type.Number(),
  score: Type.Number(),
  score_figures: Type.Object({
    handed_out: Type.Number(),
    completed: Type.Number(),
    conversion: Type.Unknown(),
    median_minutes_to_complete: Type.Unknown(),
    computed_at: Type.Unknown(),
  }),
  default_daily_turnover_limit: Type.Unknown(),
  default_monthly_turnover_limit: Type.Unknown(),
  default_daily_count_limit: Type.Unknown(),
  default_monthly_count_limit: Type.Unknown(),
  disable_after_expired: Type.Number(),
  device_silence_minutes: Type.Union([Type.Number(), Type.Null()]),
  devices_silent: Type.Boolean(),
  requisites: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      type: Type.String(),
      value: Type.String(),
      bank: Type.Union([Type.String(), Type.Null()]),
      holder: Type.String(),
      currency: Type.String(),
      country: Type.String(),
      methods: Type.Array(Type.String()),
      min_amount: Type.Number(),
      max_amount: Type.Unknown(),
      is_active: Type.Boolean(),
      daily_turnover_limit: Type.Unknown(),
      monthly_turnover_limit: Type.Unknown(),
      daily_count_limit: Type.Unknown(),
      monthly_count_limit: Type.Unknown(),
      disabled_reason: Type.Unknown(),
      last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

/** PATCH /admin/v1/executors/{id} */
export const AdminUpdateExecutorAnswer = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  is_active: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  balance: Type.Number(),
  balance_frozen: Type.Number(),
  currency: Type.String(),
  deposit_address: Type.Unknown(),
  credit_limit: Type.Number(),
  payin_reward: Type.Number(),
  payout_reward: Type.Number(),
  is_paused: Type.Boolean(),
  priority: Type.Number(),
  score: Type.Number(),
  score_figures: Type.Object({
    handed_out: Type.Number(),
    completed: Type.Number(),
    conversion: Type.Unknown(),
    median_minutes_to_complete: Type.Unknown(),
    computed_at: Type.Unknown(),
  }),
  default_daily_turnover_limit: Type.Unknown(),
  default_monthly_turnover_limit: Type.Unknown(),
  default_daily_count_limit: Type.Unknown(),
  default_monthly_count_limit: Type.Unknown(),
  disable_after_expired: Type.Number(),
  device_silence_minutes: Type.Unknown(),
  devices_silent: Type.Boolean(),
});

/** POST /admin/v1/executors/{id}/adjustments */
export const AdminCreateExecutorAdjustmentAnswer = Type.Object({
  balance: Type.Number(),
  balance_frozen: Type.Number(),
});

/** GET /admin/v1/executors/{id}/statement */
export const AdminGetExecutorStatementAnswer = Type.Object({
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
    }),
  ),
  total: Type.Number(),
  limit: Type.Number(),
  offset: Type.Number(),
});

/** GET /admin/v1/executors/{id}/deposits */
export const AdminListExecutorDepositsAnswer = Type.Object({
  deposit_address: Type.Union([Type.String(), Type.Null()]),
  deposits: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      tx_hash: Type.Union([Type.String(), Type.Null()]),
      log_index: Type.Number(),
      from: Type.String(),
      address: Type.String(),
      amount: Type.Number(),
      block_number: Type.Number(),
      block_time: Type.String({ format: 'date-time' }),
      credited_at: Type.String({ format: 'date-time' }),
    }),
  ),
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
  requisites: Type.Array(
    Type.Object({
      id: Type.String({ format: 'uuid' }),
      executor_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      type: Type.String(),
      value: Type.String(),
      bank: Type.Union([Type.String(), Type.Null()]),
      holder: Type.String(),
      currency: Type.String(),
      country: Type.String(),
      methods: Type.Array(Type.String()),
      min_amount: Type.Number(),
      max_amount: Type.Unknown(),
      is_active: Type.Boolean(),
      daily_turnover_limit: Type.Unknown(),
      monthly_turnover_limit: Type.Unknown(),
      daily_count_limit: Type.Unknown(),
      monthly_count_limit: Type.Unknown(),
      disabled_reason: Type.Unknown(),
      last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});

import { type Static, Type } from 'typebox';

/** `GET /admin/v1/dashboard`'s query. */
export const DashboardQuery = Type.Object({
  window: Type.Optional(Type.Enum(['hour', 'day'], { description: '`hour` (default): 60 one-minute buckets; `day`: 96 fifteen-minute buckets' })),
});
export type DashboardWindow = NonNullable<Static<typeof DashboardQuery>['window']>;

const Decimal = (description: string) => Type.String({ description: `${description}; a decimal string` });

const Figures = {
  created: Type.Integer({ description: 'payments created in the window' }),
  completed: Type.Integer({ description: 'of those, how many are COMPLETED now' }),
  conversion: Type.Union([Decimal('completed ÷ created, 4 places'), Type.Null()], { description: 'null when nothing was created' }),
  median_seconds_to_complete: Type.Union([Type.Number(), Type.Null()], {
    description: 'median of completed_at − created_at over the completed ones, in seconds to 0.1; null when none completed',
  }),
  amount_completed: Type.Array(Type.Object({ currency: Type.String(), amount: Decimal('received for the completed payments') }), {
    description: 'money received for the completed ones, per order currency (never added across currencies)',
  }),
};

export const DashboardFigures = Type.Object(Figures);
export type DashboardFigures = Static<typeof DashboardFigures>;

export const Dashboard = Type.Object({
  window: Type.Enum(['hour', 'day']),
  from: Type.String({ description: 'start of the window (ISO 8601, UTC), included' }),
  to: Type.String({ description: 'end of the window, excluded: the end of the current bucket' }),
  bucket_seconds: Type.Integer({ description: 'length of one bucket of the series: 60 (hour) or 900 (day)' }),
  series: Type.Array(
    Type.Object({
      at: Type.String({ description: 'start of the bucket (ISO 8601, UTC)' }),
      created: Type.Integer(),
      completed: Type.Integer({ description: 'of the payments created in the bucket, those completed by now' }),
    }),
    { description: 'every bucket of the window, oldest first, zeros included; sums to the totals' },
  ),
  totals: DashboardFigures,
  by_terminal: Type.Array(
    Type.Object({ terminal_id: Type.String(), terminal_name: Type.String(), merchant_id: Type.String(), merchant_name: Type.String(), ...Figures }),
    { description: 'the 20 terminals with the most payments created in the window, most first' },
  ),
  by_executor: Type.Array(Type.Object({ executor_id: Type.String(), executor_name: Type.String(), ...Figures }), {
    description: 'the 20 executors handed the most payments in the window, most first (payments a provider executes have none)',
  }),
  lost_demand: Type.Object(
    {
      total: Type.Integer({ description: 'creates refused in the window with PAY_004 or PAY_005' }),
      rows: Type.Array(
        Type.Object({
          code: Type.Enum(['PAY_004', 'PAY_005'], { description: 'PAY_004 no requisites available; PAY_005 too many pending payments of one amount' }),
          method: Type.String(),
          bank: Type.Union([Type.String(), Type.Null()], { description: 'the bank or operator code the merchant asked for; null when none' }),
          currency: Type.String(),
          risk_rule: Type.Union([Type.String(), Type.Null()], {
            description:
              'the risk rule that refused them (`block`, `velocity`, `traffic_class`); null for the pool’s own refusals (no requisites, same amount)',
          }),
          count: Type.Integer(),
          amount: Decimal('the refused orders’ amounts summed, in currency'),
        }),
        { description: 'per code, risk rule, method, bank and currency; most refused first' },
      ),
      by_rule: Type.Array(
        Type.Object({
          rule: Type.Union([Type.String(), Type.Null()], { description: 'a risk rule, or null: the pool’s own (no requisites, same amount)' }),
          count: Type.Integer(),
        }),
        { description: 'the refusals counted by what refused them; the pool’s own first, then the rules, most first' },
      ),
    },
    { description: 'payment creates the service turned away: for want of capacity, or by a risk rule' },
  ),
  queues: Type.Object(
    {
      disputes_open: Type.Integer({ description: 'payments in DISPUTE, waiting for the operator’s decision' }),
      notifications_unmatched: Type.Integer({ description: 'executor notifications unmatched or late, waiting to be linked or set aside' }),
      device_messages_waiting: Type.Integer({
        description: 'bank messages from executors’ phones waiting for a person (unmatched, ambiguous or unreadable): to be linked or set aside',
      }),
      payouts_pending: Type.Integer({ description: 'payouts no executor has taken yet' }),
      payouts_processing: Type.Integer({ description: 'payouts taken by an executor or sent to a provider, not finished' }),
      withdrawals_pending: Type.Integer({ description: 'withdrawals not yet sent' }),
      withdrawals_processing: Type.Integer({ description: 'withdrawals sent, waiting for the chain' }),
    },
    { description: 'what waits for someone now (not limited to the window)' },
  ),
  balances: Type.Object(
    {
      currency: Type.Literal('USDT'),
      terminals_available: Decimal('all terminals’ available balances'),
      terminals_frozen: Decimal('all terminals’ frozen balances (reserved for payouts and withdrawals)'),
      executors_available: Decimal('all executors’ available deposits (may be negative: credit lines)'),
      executors_frozen: Decimal('all executors’ frozen deposits (held for their open payments)'),
      platform_revenue: Decimal('the balance of the platform’s revenue account: every fee less rewards, all time'),
    },
    { description: 'ledger balances now (not limited to the window)' },
  ),
});
export type Dashboard = Static<typeof Dashboard>;

export const DASHBOARD_DESCRIPTION = `The operator console's dashboard: payments created in the last hour (or day) per bucket,
their conversion and time to complete, the busiest terminals and executors, the creates refused for want of
capacity (lost demand), what waits for someone now, and the ledger's balances.

"Completed" counts the window's payments that are COMPLETED by now (not COMPLETED_APPEAL: completed by a
dispute's decision), so a bucket's figures can still grow while its payments complete. Money is given as decimal strings, per currency
where currencies differ; USDT balances come from the ledger.`;

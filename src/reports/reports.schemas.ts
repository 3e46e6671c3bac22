import { Type } from 'typebox';

/** The query of both reports (checked again, with clearer errors, by parseReportQuery). */
export const ReportQuery = Type.Object({
  from: Type.Optional(Type.String({ description: 'first UTC day, YYYY-MM-DD, included (default: 29 days before `to`)' })),
  to: Type.Optional(Type.String({ description: 'last UTC day, YYYY-MM-DD, included (default: today); at most 366 days from `from`' })),
  merchant_id: Type.Optional(Type.String({ description: 'only this merchant’s postings' })),
  executor_id: Type.Optional(Type.String({ description: 'only postings moving this executor’s money' })),
  format: Type.Optional(Type.String({ description: '`json` (default) or `csv`; `Accept: text/csv` also asks for CSV' })),
});

const Figures = {
  payins: Type.Integer({ description: 'completed pay-ins (their `payin` postings)' }),
  payin_turnover: Type.Number({ description: 'USDT value of the completed pay-ins: what the postings took from system_incoming or from the executor' }),
  payouts: Type.Integer({ description: 'completed payouts (their `payout_settle` postings)' }),
  payout_turnover: Type.Number({ description: 'USDT that left the terminals’ frozen balances for the completed payouts (their reserves)' }),
  turnover: Type.Number({ description: 'payin_turnover + payout_turnover' }),
  payin_rewards: Type.Number({ description: 'USDT credited to executors as pay-in rewards' }),
  payout_credits: Type.Number({ description: 'USDT credited to executors for payouts they paid: the payout’s value plus its reward' }),
  rewards: Type.Number({ description: 'payin_rewards + payout_credits: everything the postings credited to executors' }),
  revenue: Type.Number({ description: 'the sum of system_fee_revenue entries (pay-in fees less rewards, payout and withdrawal fees); may be negative' }),
};

const ReportRowBase = { day: Type.String({ description: 'UTC date of the postings, YYYY-MM-DD' }), ...Figures };

function report(owner: 'merchant_id' | 'executor_id', ownerDescription: string) {
  return Type.Object({
    by: Type.String(),
    from: Type.String(),
    to: Type.String(),
    currency: Type.Literal('USDT'),
    rows: Type.Array(Type.Object({ ...ReportRowBase, [owner]: Type.Union([Type.String(), Type.Null()], { description: ownerDescription }) })),
    totals: Type.Object(Figures),
  });
}

export const MerchantReport = report('merchant_id', 'the posting’s merchant');
export const ExecutorReport = report(
  'executor_id',
  'the executor whose accounts the postings moved; null: none (provider payments, payouts nobody took, withdrawals)',
);

export const REPORT_DESCRIPTION = `Turnover, executors' rewards and the platform's revenue per UTC day, computed from the ledger
alone (ledger_transactions, ledger_entries, ledger_accounts) — never from payments' or payouts' own amounts.

- **payin_turnover**: per completed pay-in (one \`payin\` posting), what its source accounts gave up: the
  negative entries on \`system_incoming\` (provider payments) or on the executor's \`executor_frozen\` /
  \`executor_available\` (the hold, and any part of the value not held) — the payment's gross, received / rate.
- **payout_turnover**: per completed payout (one \`payout_settle\` posting), what left the terminal's frozen
  balance: the payout's reserve.
- **payin_rewards** / **payout_credits**: the positive entries on executor accounts in \`payin\` and
  \`payout_settle\` postings: the pay-in reward; for a payout the executor paid, its value plus the reward.
- **revenue**: every \`system_fee_revenue\` entry in the range, whatever the posting (pay-in fees less the
  executor's reward, which can make it negative; payout and withdrawal fees).
- Not turnover: holds and their releases, reserves and releases, withdrawals, transfers and adjustments.

Rows are grouped by the UTC date of the posting (ledger_transactions.created_at) and by merchant (the
posting's merchant) or executor (the executor whose accounts the posting moves, null when none). The
sums of all rows over all time equal the ledger's own totals: revenue is the balance of system_fee_revenue.

\`?format=csv\` (or \`Accept: text/csv\`) answers the rows as CSV (header row, RFC 4180 quoting, amounts
with 6 decimals) as a download; JSON otherwise, with totals.`;

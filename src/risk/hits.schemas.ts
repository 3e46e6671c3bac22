import { Type } from 'typebox';
import { RISK_RULES } from './hits.repo.js';

const Maybe = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/** The filters of `GET /admin/v1/risk/hits` and of its export; every one narrows the list. */
export const RiskHitQuery = Type.Object({
  rule: Type.Optional(Type.String({ description: `one rule: ${RISK_RULES.join(', ')}` })),
  action: Type.Optional(Type.String({ description: '`refused` (a create, a payout or a page turned away) or `flagged` (waits for a person)' })),
  merchant_id: Type.Optional(Type.String({ description: 'the merchant the decision concerned' })),
  payment_id: Type.Optional(Type.String({ description: 'one payment’s hits' })),
  dispute_id: Type.Optional(Type.String({ description: 'one dispute’s hits' })),
  from: Type.Optional(Type.String({ description: 'hits at or after this instant (ISO 8601)' })),
  to: Type.Optional(Type.String({ description: 'hits before this instant (ISO 8601)' })),
  unsettled: Type.Optional(Type.String({ description: '`true`: only the flags no person has settled yet' })),
  limit: Type.Optional(Type.String({ description: 'page size, 100 by default, at most 1000 (not for the export)' })),
  offset: Type.Optional(Type.String()),
  format: Type.Optional(Type.String({ description: '`csv`: this page as a CSV download (the export has every row)' })),
});

/** One decision of a risk rule, explained. */
export const RiskHit = Type.Object({
  id: Type.String({ format: 'uuid' }),
  created_at: Type.String({ format: 'date-time' }),
  rule: Type.String({ description: RISK_RULES.join(', ') }),
  action: Type.String({ description: 'refused or flagged' }),
  merchant_id: Maybe(Type.String()),
  merchant_name: Maybe(Type.String()),
  terminal_id: Maybe(Type.String()),
  terminal_name: Maybe(Type.String()),
  payment_id: Maybe(Type.String({ description: 'null for a refused create: nothing was created' })),
  payout_id: Maybe(Type.String()),
  dispute_id: Maybe(Type.String()),
  inputs: Type.Record(Type.String(), Type.Unknown(), { description: 'what the rule read; card numbers and phones masked or hashed, never in clear' }),
  figure: Type.String({ description: 'what it compared, for a person: `velocity client_id 7 in 600 s > 5`' }),
  settled_at: Maybe(Type.String({ format: 'date-time' })),
  settled_by: Maybe(Type.String({ description: 'who settled the flag; a refusal is settled when made' })),
});

export const RiskHitList = Type.Object({
  hits: Type.Array(RiskHit, { description: 'newest first' }),
  total: Type.Integer({ description: 'hits matching the filters' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const RiskSummaryQuery = Type.Object({
  hours: Type.Optional(Type.String({ description: 'how many hours back, ending with the current hour: 24 by default, 1 to 168' })),
});

export const RiskSummary = Type.Object({
  from: Type.String({ format: 'date-time', description: 'start of the first hour, included' }),
  to: Type.String({ format: 'date-time', description: 'end of the current hour, excluded' }),
  bucket_seconds: Type.Integer({ description: '3600: one bucket per hour' }),
  rules: Type.Array(Type.String(), { description: 'every rule the series counts, in this order' }),
  series: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time', description: 'start of the hour' }),
      total: Type.Integer(),
      by_rule: Type.Record(Type.String(), Type.Integer(), { description: 'hits per rule in the hour, every rule of `rules` present (zeros included)' }),
    }),
    { description: 'every hour of the window, oldest first' },
  ),
  totals: Type.Record(Type.String(), Type.Integer(), { description: 'hits per rule over the window' }),
});

export const RISK_HITS_DESCRIPTION = `Every refusal or flag of a risk rule (issue 36), with the rule, what it read (\`inputs\`) and
what it compared (\`figure\`): a refused create (503 \`PAY_004\` to the merchant, who learns nothing of why) has no
payment; a flag waits for a person to settle it (\`POST /admin/v1/risk/hits/{id}/settle\`) and never decides alone.`;

export const RISK_EXPORT_DESCRIPTION = `Every hit the filters match (not one page), newest first, as CSV streamed while it is read:
columns time, rule, action, merchant, terminal, payment, payout, dispute, figure, inputs (JSON), settled (the instant, empty
while a flag waits), settled_by. Text someone outside the platform may have chosen is guarded against spreadsheet formulas.`;

import { type Static, Type } from 'typebox';
import { maskCard } from '../lib/mask.js';
import type { PaymentRow } from './payments.repo.js';
import { Payment, toPayment } from './payments.schemas.js';

/** The most rows one CSV export of the payment list holds; the next ones are exported with `offset`. */
export const CSV_MAX_ROWS = 10_000;

/** The query of `GET /admin/v1/payments` (checked again, with clearer errors, by parsePaymentListQuery). */
export const PaymentListQuery = Type.Object({
  q: Type.Optional(
    Type.String({
      description:
        'at most 255 characters; one search box, read every way it can be, a payment matching any reading kept: a payment id (uuid); an ext_id or a client_id, exactly; ' +
        'an amount (`1500`, `1500.50`), exactly; 4 or more digits: the end of the requisite value handed out (card or phone digits)',
    }),
  ),
  status: Type.Optional(Type.String({ description: 'PENDING, PROCESSING, COMPLETED, COMPLETED_APPEAL, CANCELLED, CANCELLED_APPEAL or DISPUTE' })),
  merchant_id: Type.Optional(Type.String({ description: 'uuid' })),
  terminal_id: Type.Optional(Type.String({ description: 'uuid' })),
  executor_id: Type.Optional(Type.String({ description: 'uuid: the executor whose requisite was handed out' })),
  method: Type.Optional(Type.String({ description: 'CARD, SBP, SBP_QR, PHONE, SIM, CROSS_BORDER, CROSS_BORDER_CARD, CROSS_BORDER_SIM or VIET_QR' })),
  from: Type.Optional(
    Type.String({ description: 'created at or after: an ISO 8601 date-time with its zone (`2026-01-31T10:00:00Z`, `…+03:00`) or a date (UTC midnight)' }),
  ),
  to: Type.Optional(Type.String({ description: 'created at or before: an ISO 8601 date-time with its zone, or a date (its whole UTC day)' })),
  limit: Type.Optional(Type.String({ description: `page size: 1–1000, default 100; for CSV 1–${CSV_MAX_ROWS}, default ${CSV_MAX_ROWS}` })),
  offset: Type.Optional(Type.String({ description: 'rows to skip, default 0' })),
  format: Type.Optional(Type.String({ description: '`json` (default) or `csv`; `Accept: text/csv` also asks for CSV' })),
});

/** A payment as the operator's list shows it: the merchant API's Payment and who it belongs to. */
export const AdminPayment = Type.Object({
  ...Payment.properties,
  merchant_id: Type.String(),
  executor_id: Type.Union([Type.String(), Type.Null()], { description: 'null: executed by a provider' }),
  requisite_id: Type.Union([Type.String(), Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  payer_class: Type.Union([Type.Literal('new'), Type.Literal('returning'), Type.Literal('trusted'), Type.Null()], {
    description: "the payer's traffic class with the merchant when the payment was created (null: before classes, a test or a provider's payment)",
  }),
  cancel_reason: Type.Union([Type.String(), Type.Null()]),
  is_test: Type.Boolean({ description: 'a test terminal’s payment (test requisites, no money moved)' }),
});
export type AdminPayment = Static<typeof AdminPayment>;

export const AdminPaymentList = Type.Object({
  payments: Type.Array(AdminPayment),
  total: Type.Integer({ description: 'payments matching the filters, on every page' }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const PAYMENT_LIST_DESCRIPTION = `Payments of every merchant, newest first (created_at), narrowed by the filters given (all must hold).

\`q\` is matched exactly, every way it can be read: a uuid is a payment id (and may be an ext_id or a client_id);
any text is an ext_id or a client_id; \`1500\` or \`1500.50\` is an amount; 4 or more digits (spaces, dashes,
parentheses and a leading + allowed) are the end of the requisite value handed out to the payer. A payment
matching any reading is listed.

\`?format=csv\` (or \`Accept: text/csv\`) answers the same filtered list as a CSV download (header row, RFC 4180
quoting, amounts as decimal strings, card numbers masked): at most ${CSV_MAX_ROWS} rows per export, from
\`offset\`; the \`x-total-count\` header says how many match, so the rest is exported with a larger offset.`;

/** The operator's list item: never the row as is. */
export function toAdminPayment(row: PaymentRow, paymentPageUrl: string): AdminPayment {
  return {
    ...toPayment(row, paymentPageUrl),
    merchant_id: row.merchant_id,
    executor_id: row.executor_id,
    requisite_id: row.requisite_id,
    client_id: row.client_id,
    payer_class: row.payer_class,
    cancel_reason: row.cancel_reason,
    is_test: row.is_test,
  };
}

/**
 * A requisite value for a place it may travel from (a CSV export, the timeline): a card number
 * masked as the requisite lists mask it (first 6 and last 4 digits, toRequisite); other values
 * (phone numbers, QR payloads) as they are, as the requisite API shows them.
 */
export function displayedRequisiteValue(type: string, value: string): string {
  return type === 'card' ? maskCard(value) : value;
}

/** The kinds of things a payment's timeline lists (TIMELINE_DESCRIPTION). */
export const TIMELINE_KINDS = [
  'created',
  'requisite_handed_out',
  'provider_handed_out',
  'status_changed',
  'confirmation',
  'receipt',
  'notification',
  'dispute_opened',
  'dispute_answered',
  'dispute_escalated',
  'dispute_decided',
  'ledger_posting',
  'webhook_enqueued',
  'webhook_attempt',
  'risk_hit',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** What every timeline item has; the rest depends on `kind` (see TIMELINE_DESCRIPTION). */
export const TimelineItem = Type.Object(
  { at: Type.String({ format: 'date-time' }), kind: Type.Unsafe<TimelineKind>({ type: 'string', enum: [...TIMELINE_KINDS] }) },
  { additionalProperties: true },
);

export const PaymentTimeline = Type.Object({
  payment_id: Type.String(),
  status: Type.String({ description: 'the status now' }),
  timeline: Type.Array(TimelineItem, { description: 'oldest first' }),
});

export const TIMELINE_DESCRIPTION = `Everything that happened to one payment, oldest first, each item \`{at, kind, …}\`:

- \`created\`: amount, currency, method, merchant_id, terminal_id, terminal_name, ext_id, client_id, valid_until.
- \`requisite_handed_out\`: requisite_id, requisite_type, requisite_value (cards masked), bank_code, executor_id, executor_name, payer_amount, payer_currency.
  \`provider_handed_out\` instead for a payment a provider executes: provider_id, provider_payment_id and the same requisite fields.
- \`status_changed\`: from, to; reason (cancel_reason), note (the reason the person gave for a cancellation or a rejection) and by (the operator, from the audit log) when known.
  Kassir keeps no status history table: each change is read from what it left behind (the audit log, the
  webhook outbox, disputes, the ledger, the payment's completed_at and updated_at), in the same transaction
  and so at the same instant.
- \`confirmation\`: source (merchant, page), receipt_id. \`receipt\`: receipt_id, source, content_type, size_bytes, url.
- \`notification\`: an executor's notification of a transfer: relation \`matched\` (it completed this payment, or the
  operator linked it) or \`candidate\` (it came late and probably belongs to this payment); notification_id,
  executor_id, requisite_id, amount, status, received_at, parsed_bank, text (card and phone numbers masked).
- \`dispute_opened\`: dispute_id, amount, comment (numbers masked), receipt_id, answer_due_at (the executor's deadline). \`dispute_answered\`: dispute_id, answer (accepted or contested), late, support_due_at. \`dispute_escalated\`: dispute_id, support_due_at (the executor's deadline passed). \`dispute_decided\`: dispute_id, outcome, decided_amount, decided_by, decision_reason.
- \`ledger_posting\`: transaction_id, posting (payin_hold, payin, payin_hold_release), currency (USDT) and entries
  \`{account_id, account, owner_type, owner_id, amount}\`, which sum to zero.
- \`webhook_enqueued\`: event_id, event, url, delivery_status, attempts, delivered_at. \`webhook_attempt\`: event_id,
  event, attempt, status_code, latency_ms, error, response_snippet (numbers masked).
- \`risk_hit\`: a risk rule's decision on the payment or one of its disputes (issue 36): hit_id, rule, action
  (refused or flagged), figure (what it compared, for a person), dispute_id, settled_at, settled_by. Never in the
  merchant's timeline.`;

/**
 * The reason a person gives for an irreversible decision: optional on the API (DESIGN lists these
 * routes with no body, and scripts send none), always asked by the console; when given, some text.
 */
export const ReasonBody = Type.Object({
  reason: Type.Optional(
    Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', description: 'Why, in a person’s words: stored and shown to the operator, not the merchant' }),
  ),
});

import type { Static } from 'typebox';
import { type AuditRow, listAuditEntries } from '../admin/audit.repo.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { type DisputeRow, listPaymentDisputes } from '../disputes/disputes.repo.js';
import { DomainError } from '../errors.js';
import { findExecutor } from '../executors/executors.repo.js';
import { listPaymentNotifications } from '../incoming/notifications.repo.js';
import { listPaymentPostings, type PaymentPostingRow } from '../ledger/ledger.repo.js';
import { maskSensitive } from '../lib/mask.js';
import { money, toNumber } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments/lifecycle.js';
import { displayedRequisiteValue, type PaymentTimeline, type TimelineKind } from '../payments/payments.admin.schemas.js';
import { findPayment, type PaymentRow } from '../payments/payments.repo.js';
import { listPaymentConfirmations, listPaymentReceipts } from '../receipts/receipts.repo.js';
import { listPaymentRiskHits } from '../risk/hits.repo.js';
import { listResourceAttempts, listResourceEvents, type WebhookEventRow } from '../webhooks/webhooks.repo.js';

type Timeline = Static<typeof PaymentTimeline>;
type Item = { at: Date; kind: TimelineKind } & Record<string, unknown>;

/**
 * Within one instant (one transaction's now()), the order in which things happen: what the payer
 * or the executor sent comes before the status change it caused, and the change before the
 * posting and the webhook event written with it.
 */
const RANK: Record<Item['kind'], number> = {
  created: 0,
  requisite_handed_out: 1,
  provider_handed_out: 1,
  receipt: 2,
  confirmation: 3,
  notification: 4,
  dispute_opened: 5,
  dispute_answered: 5,
  dispute_escalated: 5,
  dispute_decided: 6,
  // A flag is written in the transaction of what it flags (a receipt, a dispute opened): after it.
  risk_hit: 6.5,
  status_changed: 7,
  ledger_posting: 8,
  webhook_enqueued: 9,
  webhook_attempt: 10,
};

/**
 * Everything that happened to one payment, oldest first (TIMELINE_DESCRIPTION): read from the
 * tables of the features that own each kind, in one read-only snapshot, so that a payment
 * changing meanwhile is seen wholly before or wholly after. Unknown id → PAY_006.
 */
export async function paymentTimeline(ctx: AppContext, id: string, merchantId?: string): Promise<Timeline> {
  return transaction(ctx.db, async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    const payment = isUuid(id) ? await findPayment(tx, id) : undefined;
    if (!payment || (merchantId !== undefined && payment.merchant_id !== merchantId)) throw new DomainError('PAY_006', `Payment ${id} not found`);
    // One connection, one query at a time: a transaction's queries cannot run in parallel.
    const audit = await listAuditEntries(tx, { objectType: 'payment', objectId: payment.id, limit: 1000, offset: 0 });
    const events = await listResourceEvents(tx, 'payment', payment.id);
    const attempts = await listResourceAttempts(tx, 'payment', payment.id);
    const disputes = await listPaymentDisputes(tx, payment.id);
    const notifications = await listPaymentNotifications(tx, payment.id);
    const receipts = await listPaymentReceipts(tx, [payment.id]);
    const confirmations = await listPaymentConfirmations(tx, [payment.id]);
    const postings = await listPaymentPostings(tx, payment.id);
    const hits = await listPaymentRiskHits(tx, payment.id);
    const executor = payment.executor_id ? await findExecutor(tx, payment.executor_id) : undefined;

    const items: Item[] = [
      {
        at: payment.created_at,
        kind: 'created',
        merchant_id: payment.merchant_id,
        terminal_id: payment.terminal_id,
        terminal_name: payment.terminal_name,
        ext_id: payment.ext_id,
        client_id: payment.client_id,
        amount: toNumber(payment.amount),
        currency: payment.currency,
        method: payment.method,
        valid_until: payment.valid_until.toISOString(),
      },
      handOut(payment, executor?.name ?? null),
      ...statusChanges(payment, audit.rows, events, disputes, postings),
      ...receipts.map(
        (r): Item => ({
          at: r.created_at,
          kind: 'receipt',
          receipt_id: r.id,
          source: r.source,
          content_type: r.content_type,
          size_bytes: r.size_bytes,
          url: r.url ?? `${ctx.config.publicBaseUrl}/admin/v1/receipts/${r.id}`,
        }),
      ),
      ...confirmations.map((c): Item => ({ at: c.created_at, kind: 'confirmation', source: c.source, receipt_id: c.receipt_id })),
      ...notifications.map(
        (n): Item => ({
          at: n.created_at,
          kind: 'notification',
          notification_id: n.id,
          relation: n.relation,
          executor_id: n.executor_id,
          requisite_id: n.requisite_id,
          amount: toNumber(n.amount),
          status: n.status,
          received_at: n.received_at?.toISOString() ?? null,
          parsed_bank: n.parsed_bank,
          // A bank's message may quote a card or a phone number in full.
          text: n.text === null ? null : maskSensitive(n.text),
        }),
      ),
      ...disputes.flatMap((d): Item[] => [
        {
          at: d.created_at,
          kind: 'dispute_opened',
          dispute_id: d.id,
          amount: toNumber(d.amount),
          comment: d.comment === null ? null : maskSensitive(d.comment),
          receipt_id: d.receipt_id,
          answer_due_at: d.answer_due_at?.toISOString() ?? null,
        },
        // The dispute's progress (issue 35): the executor's answer, or its deadline escalating it.
        ...(d.executor_answer && d.answered_at
          ? [
              {
                at: d.answered_at,
                kind: 'dispute_answered' as const,
                dispute_id: d.id,
                answer: d.executor_answer,
                late: d.answer_due_at !== null && d.answered_at > d.answer_due_at,
                support_due_at: d.executor_answer === 'contested' ? (d.support_due_at?.toISOString() ?? null) : null,
              },
            ]
          : []),
        ...(d.timed_out === 'escalated' && d.answer_due_at
          ? [{ at: d.answer_due_at, kind: 'dispute_escalated' as const, dispute_id: d.id, support_due_at: d.support_due_at?.toISOString() ?? null }]
          : []),
        ...(d.decided_at
          ? [
              {
                at: d.decided_at,
                kind: 'dispute_decided' as const,
                dispute_id: d.id,
                outcome: d.status,
                decided_amount: toNumber(d.decided_amount),
                decided_by: d.decided_by,
                decision_reason: d.decision_reason,
              },
            ]
          : []),
      ]),
      ...hits.map(
        (h): Item => ({
          at: h.created_at,
          kind: 'risk_hit',
          hit_id: h.id,
          rule: h.rule,
          action: h.action,
          figure: h.figure,
          dispute_id: h.dispute_id,
          settled_at: h.settled_at?.toISOString() ?? null,
          settled_by: h.settled_by,
        }),
      ),
      ...ledgerPostings(postings),
      ...events.map(
        (e): Item => ({
          at: e.created_at,
          kind: 'webhook_enqueued',
          event_id: e.id,
          event: e.event,
          url: e.url,
          delivery_status: e.status,
          attempts: e.attempts,
          delivered_at: e.delivered_at?.toISOString() ?? null,
        }),
      ),
      ...attempts.map(
        (a): Item => ({
          at: a.started_at,
          kind: 'webhook_attempt',
          event_id: a.event_id,
          event: events.find((e) => e.id === a.event_id)?.event ?? null,
          attempt: a.attempt,
          status_code: a.status_code,
          latency_ms: a.latency_ms,
          error: a.error,
          // The merchant's server may echo the payload, whose requisites carry the card in full.
          response_snippet: a.response_snippet === null ? null : maskSensitive(a.response_snippet),
        }),
      ),
    ];
    // Array.prototype.sort is stable: items of one kind at one instant keep their tables' order.
    items.sort((a, b) => a.at.getTime() - b.at.getTime() || RANK[a.kind] - RANK[b.kind]);
    return { payment_id: payment.id, status: payment.status, timeline: items.map(({ at, ...rest }) => ({ at: at.toISOString(), ...rest })) };
  });
}

/** Who was given the payment at its creation: an executor's requisite, or a provider. */
function handOut(payment: PaymentRow, executorName: string | null): Item {
  const shown = {
    requisite_type: payment.req_type,
    requisite_value: displayedRequisiteValue(payment.req_type, payment.req_value),
    bank_code: payment.req_bank_code,
    payer_amount: toNumber(payment.payer_amount),
    payer_currency: payment.req_currency,
  };
  if (payment.provider_id !== null) {
    return {
      at: payment.created_at,
      kind: 'provider_handed_out',
      provider_id: payment.provider_id,
      provider_payment_id: payment.provider_payment_id,
      ...shown,
    };
  }
  return {
    at: payment.created_at,
    kind: 'requisite_handed_out',
    requisite_id: payment.requisite_id,
    executor_id: payment.executor_id,
    executor_name: executorName,
    ...shown,
  };
}

/** One `ledger_posting` item per ledger transaction, with its entries. */
function ledgerPostings(rows: PaymentPostingRow[]): Item[] {
  const byTransaction = new Map<string, Item & { entries: unknown[] }>();
  for (const row of rows) {
    let item = byTransaction.get(row.transaction_id);
    if (!item) {
      item = { at: row.created_at, kind: 'ledger_posting', transaction_id: row.transaction_id, posting: row.kind, currency: 'USDT', entries: [] };
      byTransaction.set(row.transaction_id, item);
    }
    item.entries.push({
      account_id: row.account_id,
      account: row.account_kind,
      owner_type: row.terminal_id ? 'terminal' : row.executor_id ? 'executor' : 'system',
      owner_id: row.terminal_id ?? row.executor_id,
      amount: toNumber(row.amount),
    });
  }
  return [...byTransaction.values()];
}

/** A status change as one source tells it; `from` is filled in from the order of them all. */
interface StatusEvidence {
  at: Date;
  to: PaymentStatus;
  by?: string;
  reason?: string;
  /** The words of the person who cancelled it or rejected its dispute. */
  note?: string;
}

/** Within one instant, the order of statuses a payment can pass through. */
const STATUS_ORDER: Record<PaymentStatus, number> = {
  PENDING: 0,
  PROCESSING: 1,
  CANCELLED: 2,
  DISPUTE: 3,
  CANCELLED_APPEAL: 4,
  COMPLETED: 5,
  COMPLETED_APPEAL: 5,
};

function asStatus(value: unknown): PaymentStatus | undefined {
  return typeof value === 'string' && (PAYMENT_STATUSES as readonly string[]).includes(value) ? (value as PaymentStatus) : undefined;
}

/**
 * The payment's status changes. Kassir keeps no status history, but every change leaves traces
 * written in its own transaction, at its one now(): the audit log (an operator's cancellation or
 * decision, with who), the webhook outbox (every change of a payment with a notify_url), the
 * disputes (opened; decided: cancelled → CANCELLED_APPEAL, rejected → CANCELLED, approved →
 * COMPLETED or, for another amount, COMPLETED_APPEAL — disputes.service), completed_at, and a hold
 * released with no pay-in beside it (a hand-out that left PENDING unpaid). Traces of one change
 * share its instant and status and are merged; a status now that none of them reached is dated
 * by updated_at (a provider's payment cancelled with no webhook URL, say).
 */
function statusChanges(payment: PaymentRow, audit: AuditRow[], events: WebhookEventRow[], disputes: DisputeRow[], postings: PaymentPostingRow[]): Item[] {
  const evidence: StatusEvidence[] = [];
  for (const row of audit) {
    const to = asStatus((row.after as { status?: unknown } | null)?.status);
    const said = (row.after as { reason?: unknown } | null)?.reason;
    if (to) {
      evidence.push({
        at: row.created_at,
        to,
        by: row.actor,
        reason: row.action === 'payment.cancel' ? 'manual' : undefined,
        note: row.action === 'payment.cancel' && typeof said === 'string' ? said : undefined,
      });
    }
  }
  for (const event of events) {
    const to = asStatus(event.event.startsWith('payment.') ? event.event.slice('payment.'.length).toUpperCase() : undefined);
    if (to) evidence.push({ at: event.created_at, to });
  }
  for (const d of disputes) {
    evidence.push({ at: d.created_at, to: 'DISPUTE' });
    if (d.decided_at === null) continue;
    if (d.status === 'cancelled') evidence.push({ at: d.decided_at, to: 'CANCELLED_APPEAL', by: d.decided_by ?? undefined });
    if (d.status === 'rejected') {
      evidence.push({ at: d.decided_at, to: 'CANCELLED', by: d.decided_by ?? undefined, reason: 'dispute_rejected', note: d.decision_reason ?? undefined });
    }
    if (d.status === 'approved') {
      const otherAmount = d.decided_amount !== null && !money(d.decided_amount).eq(payment.amount);
      evidence.push({ at: d.decided_at, to: otherAmount ? 'COMPLETED_APPEAL' : 'COMPLETED', by: d.decided_by ?? undefined });
    }
  }
  const completed = asStatus(payment.status);
  if (payment.completed_at && (completed === 'COMPLETED' || completed === 'COMPLETED_APPEAL')) evidence.push({ at: payment.completed_at, to: completed });
  const payins = new Set(postings.filter((p) => p.kind === 'payin').map((p) => p.created_at.getTime()));
  for (const p of postings) {
    if (p.kind === 'payin_hold_release' && !payins.has(p.created_at.getTime())) evidence.push({ at: p.created_at, to: 'CANCELLED' });
  }

  // Traces of one change: same instant, same status; the first to name who or why is kept.
  const merged = new Map<string, StatusEvidence>();
  for (const e of evidence) {
    const key = `${e.at.getTime()} ${e.to}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...e });
    else {
      seen.by ??= e.by;
      seen.reason ??= e.reason;
      seen.note ??= e.note;
    }
  }
  const ordered = [...merged.values()].sort((a, b) => a.at.getTime() - b.at.getTime() || STATUS_ORDER[a.to] - STATUS_ORDER[b.to]);

  const items: (Item & { to: PaymentStatus; reason?: string })[] = [];
  let current: PaymentStatus = 'PENDING';
  const change = (e: StatusEvidence) => {
    items.push({
      at: e.at,
      kind: 'status_changed',
      from: current,
      to: e.to,
      ...(e.reason ? { reason: e.reason } : {}),
      ...(e.note ? { note: e.note } : {}),
      ...(e.by ? { by: e.by } : {}),
    });
    current = e.to;
  };
  for (const e of ordered) if (e.to !== current) change(e);
  const now = asStatus(payment.status);
  if (now && now !== current) {
    const last = items.at(-1)?.at;
    change({ at: last && last > payment.updated_at ? last : payment.updated_at, to: now });
  }
  // cancel_reason holds the reason of the latest cancellation that gave one: it belongs to the
  // last change into CANCELLED, unless a trace already named it.
  if (payment.cancel_reason && !items.some((i) => i.reason === payment.cancel_reason)) {
    const last = [...items].reverse().find((i) => i.to === 'CANCELLED' && i.reason === undefined);
    if (last) last.reason = payment.cancel_reason;
  }
  return items;
}

/** What of a payment's life is the merchant's to see: not the bank's messages, not the risk rules' decisions (the merchant learns nothing of why), the executors' ledger, who decided, or which executor or provider served it. */
const MERCHANT_KINDS = new Set<TimelineKind>([
  'created',
  'requisite_handed_out',
  'provider_handed_out',
  'receipt',
  'confirmation',
  'dispute_opened',
  'dispute_answered',
  'dispute_escalated',
  'dispute_decided',
  'status_changed',
  'webhook_enqueued',
  'webhook_attempt',
]);
// A person's reasons for a cancellation or a rejection are the operator's words, not the merchant's to read.
const OPERATOR_FIELDS = [
  'requisite_id',
  'executor_id',
  'executor_name',
  'provider_id',
  'provider_payment_id',
  'decided_by',
  'by',
  'url',
  'note',
  'decision_reason',
];

/** The merchant cabinet's timeline of one of its own payments (another merchant's: PAY_006). */
export async function merchantPaymentTimeline(ctx: AppContext, id: string, merchantId: string): Promise<Timeline> {
  const full = await paymentTimeline(ctx, id, merchantId);
  const timeline = full.timeline
    .filter((item) => MERCHANT_KINDS.has(item.kind as TimelineKind))
    .map((item) => {
      const shown: Record<string, unknown> = { ...item };
      // A receipt's and a webhook's url are kept where they are the merchant's own (the webhook's address).
      for (const field of OPERATOR_FIELDS) if (!(field === 'url' && item.kind === 'webhook_enqueued')) delete shown[field];
      return shown as (typeof full.timeline)[number];
    });
  return { ...full, timeline };
}

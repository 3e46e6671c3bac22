import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { listNotificationsAround } from '../incoming/notifications.repo.js';
import { actorName } from '../lib/actor.js';
import { toNumber } from '../lib/money.js';
import { parseListQuery } from '../lib/pagination.js';
import { ReasonBody } from '../payments/payments.admin.schemas.js';
import { findPayments } from '../payments/payments.repo.js';
import { toPayment } from '../payments/payments.schemas.js';
import { listPaymentConfirmations, listPaymentReceipts, type ReceiptRow } from '../receipts/receipts.repo.js';
import { sendReceiptFile } from '../receipts/receipts.routes.js';
import { openReceiptFile } from '../receipts/receipts.service.js';
import { listFlags } from '../risk/flags.repo.js';
import { toFlagSummary } from '../risk/flags.service.js';
import { AdminApprovePaymentDisputeAnswer, AdminGetDisputeAnswer, AdminListDisputesAnswer, AdminRejectPaymentDisputeAnswer } from './disputes.admin.answers.js';
import { sendContestFile } from './disputes.executor.js';
import * as repo from './disputes.repo.js';
import { decideDispute, openContestFile } from './disputes.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });
const ApproveBody = Type.Object({ amount: Type.Number({ description: 'the amount actually received, in the order currency' }) });

/** What a reviewer needs on one card: the payment, its receipts, confirm signals and notifications. */
async function disputeCards(ctx: AppContext, disputes: repo.DisputeRow[]) {
  const paymentIds = [...new Set(disputes.map((d) => d.payment_id))];
  if (paymentIds.length === 0) return [];
  const [payments, receipts, confirmations, notifications, flags] = await Promise.all([
    findPayments(ctx.db, paymentIds),
    listPaymentReceipts(ctx.db, paymentIds),
    listPaymentConfirmations(ctx.db, paymentIds),
    listNotificationsAround(ctx.db, paymentIds),
    listFlags(ctx.db, { paymentIds, disputeIds: disputes.map((d) => d.id) }),
  ]);
  const receiptView = (r: ReceiptRow) => ({
    id: r.id,
    source: r.source,
    url: r.url ?? `${ctx.config.publicBaseUrl}/admin/v1/receipts/${r.id}`,
    content_type: r.content_type,
    size_bytes: r.size_bytes,
    sha256: r.sha256?.toString('hex') ?? null,
    created_at: r.created_at,
  });
  return disputes.map((d) => {
    const payment = payments.find((p) => p.id === d.payment_id)!;
    return {
      id: d.id,
      status: d.status,
      amount: toNumber(d.amount),
      comment: d.comment,
      receipt: receipts.filter((r) => r.id === d.receipt_id).map(receiptView)[0] ?? null,
      decided_amount: toNumber(d.decided_amount),
      decided_by: d.decided_by,
      decided_at: d.decided_at,
      decision_reason: d.decision_reason,
      created_at: d.created_at,
      // Issue 35: the executor in it, its deadline and answer, support's deadline.
      stage: d.stage,
      executor_id: d.executor_id,
      answer_due_at: d.answer_due_at,
      support_due_at: d.support_due_at,
      overdue: d.status === 'open' && (d.support_due_at ?? d.answer_due_at) !== null && (d.support_due_at ?? d.answer_due_at)! <= new Date(),
      hold: toNumber(d.hold),
      uncovered: d.uncovered,
      timed_out: d.timed_out,
      executor_answer:
        d.executor_answer && d.answered_at
          ? {
              kind: d.executor_answer,
              amount: toNumber(d.executor_amount),
              comment: d.executor_comment,
              file: d.executor_file_key
                ? {
                    url: `${ctx.config.publicBaseUrl}/admin/v1/disputes/${d.id}/executor-file`,
                    content_type: d.executor_file_type,
                    size_bytes: d.executor_file_size,
                    sha256: d.executor_file_sha256?.toString('hex') ?? null,
                  }
                : null,
              at: d.answered_at,
              late: d.answer_due_at !== null && d.answered_at > d.answer_due_at,
            }
          : null,
      payment: {
        ...toPayment(payment, ctx.config.paymentPageUrl),
        merchant_id: payment.merchant_id,
        cancel_reason: payment.cancel_reason,
        is_test: payment.is_test,
      },
      receipts: receipts.filter((r) => r.payment_id === d.payment_id).map(receiptView),
      confirmations: confirmations
        .filter((c) => c.payment_id === d.payment_id)
        .map((c) => ({ payment_id: c.payment_id, source: c.source, receipt_id: c.receipt_id, created_at: c.created_at })),
      notifications: notifications
        .filter((n) => n.payment === d.payment_id)
        .map((n) => ({ id: n.id, amount: Number(n.amount), status: n.status, text: n.text, received_at: n.received_at, created_at: n.created_at })),
      // Issue 36 item 4: what the evidence checks flagged on this dispute or its payment, for the person deciding.
      risk_flags: flags.filter((f) => f.dispute_id === d.id || f.payment_id === d.payment_id).map(toFlagSummary),
    };
  });
}

/** Operator review of disputes (DESIGN.md decision 7) and access to stored receipts. */
export async function disputeAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/disputes',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListDisputesAnswer },
        tags,
        summary:
          'Dispute cards (open ones unless `status` says otherwise), each with the payment, receipts, notifications and the executor’s answer: open ones nearest deadline first (support’s own once contested or escalated), closed ones newest first',
        querystring: Type.Object({
          status: Type.Optional(Type.String({ description: 'open (default), cancelled, approved, rejected or all' })),
          stage: Type.Optional(
            Type.String({ description: 'open ones only in this stage: awaiting_executor, contested, escalated, or overdue (a deadline passed)' }),
          ),
          flagged: Type.Optional(
            Type.String({
              description:
                'true: only those whose dispute or payment has a risk flag no person settled yet (a reused receipt or bank reference, another payer name); false: only those without',
            }),
          ),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const status = request.query.status ?? 'open';
      if (!['open', 'cancelled', 'approved', 'rejected', 'all'].includes(status)) {
        throw new DomainError('VALIDATION', 'status must be one of open, cancelled, approved, rejected, all');
      }
      const stage = request.query.stage;
      if (stage !== undefined && !['awaiting_executor', 'contested', 'escalated', 'overdue'].includes(stage)) {
        throw new DomainError('VALIDATION', 'stage must be one of awaiting_executor, contested, escalated, overdue');
      }
      const flagged = request.query.flagged;
      if (flagged !== undefined && flagged !== 'true' && flagged !== 'false') throw new DomainError('VALIDATION', 'flagged must be true or false');
      const rows = await repo.listDisputes(ctx.db, {
        status: status === 'all' ? undefined : status,
        stage,
        flagged: flagged === undefined ? undefined : flagged === 'true',
        limit,
        offset,
      });
      return { disputes: await disputeCards(ctx, rows), limit, offset };
    },
  );

  app.get(
    '/disputes/:id',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: AdminGetDisputeAnswer }, tags, summary: 'One dispute card', params: IdParams } },
    async (request) => {
      const row = /^[0-9a-f-]{36}$/i.test(request.params.id) ? await repo.findDispute(ctx.db, request.params.id) : undefined;
      if (!row) throw new DomainError('NOT_FOUND', `Dispute ${request.params.id} not found`);
      return (await disputeCards(ctx, [row]))[0];
    },
  );

  app.get(
    '/disputes/:id/executor-file',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'The file the executor contested a dispute with (its bank’s history)',
        params: IdParams,
        documentedResponse: { 200: { description: 'The file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' } },
        errors: { NOT_FOUND: 'No dispute with this id, or its executor sent no file' },
      },
    },
    async (request, reply) => {
      const row = /^[0-9a-f-]{36}$/i.test(request.params.id) ? await repo.findDispute(ctx.db, request.params.id) : undefined;
      if (!row) throw new DomainError('NOT_FOUND', `Dispute ${request.params.id} not found`);
      const { contentType, content } = await openContestFile(ctx, row);
      return sendContestFile(reply, row.id, contentType, content);
    },
  );

  app.post(
    '/payments/:id/dispute/approve',
    {
      config: { access: 'support', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminApprovePaymentDisputeAnswer },
        tags,
        summary: 'Approve a dispute: the payment becomes COMPLETED, or COMPLETED_APPEAL for another amount',
        description:
          'Moves money: the merchant’s terminal is credited for `amount`, the amount actually received, as for any completion (at most once). The executor pays from the value frozen on its deposit when the dispute opened (the claimed amount / rate), the rest of its deposit for more; the freeze’s remainder is returned. Refused with `409 EXE_001` when the deposit and credit line cannot cover it (an uncovered dispute).',
        params: IdParams,
        body: ApproveBody,
        errors: {
          PAY_006: 'No payment with this id',
          DIS_003: 'The payment is not in DISPUTE (`data.status` is its status)',
          VALIDATION: 'Invalid parameters: `amount` is not a positive amount in the order currency',
          CONFLICT: 'The payment is executed by a provider: its dispute is decided there, and the decision arrives by callback',
          DEPOSIT_SHORT:
            'The executor’s deposit and credit line do not cover the payment (`data.needed`, `data.available`): top it up (`POST /admin/v1/executors/{id}/adjustments`) or raise its credit line, then try again',
        },
      },
    },
    async (request) => {
      const { amount } = request.body;
      await decideDispute(ctx, request.params.id, { approve: true, amount }, actorName(request.actor), async (tx, before, after) =>
        audit(tx, request, 'dispute.approve', 'payment', before.id, { status: before.status }, { status: after, amount }),
      );
      return paymentView(ctx, request.params.id);
    },
  );

  app.post(
    '/payments/:id/dispute/reject',
    {
      config: { access: 'support', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminRejectPaymentDisputeAnswer },
        tags,
        summary: 'Reject a dispute: the payment goes back to CANCELLED',
        description:
          '`reason` (the console always sends one) is kept on the dispute (`decision_reason` on its card), on the payment (`cancel_note`) and in the audit log.',
        params: IdParams,
        body: ReasonBody,
        errors: {
          VALIDATION: 'Invalid parameters: `reason` empty or blank, or longer than 1000 characters',
          PAY_006: 'No payment with this id',
          DIS_003: 'The payment is not in DISPUTE (`data.status` is its status)',
          CONFLICT: 'The payment is executed by a provider: its dispute is decided there, and the decision arrives by callback',
        },
      },
    },
    async (request) => {
      const reason = request.body.reason?.trim();
      await decideDispute(ctx, request.params.id, { approve: false, reason }, actorName(request.actor), async (tx, before, after) =>
        audit(tx, request, 'dispute.reject', 'payment', before.id, { status: before.status }, { status: after, ...(reason ? { reason } : {}) }),
      );
      return paymentView(ctx, request.params.id);
    },
  );

  app.get(
    '/receipts/:id',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Download a stored receipt file',
        params: IdParams,
        documentedResponse: {
          200: { description: 'The receipt file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' },
        },
        errors: { NOT_FOUND: 'No receipt with this id, or the receipt is a link (`url` on the dispute card), not a stored file' },
        querystring: Type.Object({
          inline: Type.Optional(Type.Boolean({ description: 'true: to show in the browser (a PDF in its viewer) rather than download' })),
        }),
      },
    },
    async (request, reply) => {
      const { receipt, content } = await openReceiptFile(ctx, null, request.params.id);
      return sendReceiptFile(reply, receipt, content, { inline: request.query.inline === true });
    },
  );
}

async function paymentView(ctx: AppContext, id: string) {
  const [payment] = await findPayments(ctx.db, [id]);
  return toPayment(payment!, ctx.config.paymentPageUrl);
}

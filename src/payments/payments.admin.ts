import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { isUuid } from '../lib/validators.js';
import { listFlags } from '../risk/flags.repo.js';
import { toFlagSummary } from '../risk/flags.service.js';
import { changePayment } from './lifecycle.js';
import { AdminCancelPaymentAnswer, AdminGetPaymentAnswer } from './payments.admin.answers.js';
import { AdminPaymentList, PAYMENT_LIST_DESCRIPTION, PaymentListQuery, ReasonBody, toAdminPayment } from './payments.admin.schemas.js';
import { findPayerName, findPayment, listPayments } from './payments.repo.js';
import { toPayment } from './payments.schemas.js';
import { parsePaymentListQuery, paymentsCsv, paymentsCsvFileName } from './payments.search.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });

/** Operator API for payments: search and export across merchants, manual cancellation (a payment's timeline: reports/timeline.admin.ts). */
export async function paymentAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const pageUrl = ctx.config.paymentPageUrl;

  app.get(
    '/payments',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'Search payments: one search box, filters, pages; or a CSV export of the same list',
        description: PAYMENT_LIST_DESCRIPTION,
        querystring: PaymentListQuery,
        produces: ['application/json', 'text/csv'],
        response: { 200: { content: { 'application/json': { schema: AdminPaymentList }, 'text/csv': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const query = parsePaymentListQuery(request.query, request.headers.accept);
      const { rows, total } = await listPayments(ctx.db, query);
      if (query.format === 'json') return { payments: rows.map((row) => toAdminPayment(row, pageUrl)), total, limit: query.limit, offset: query.offset };
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${paymentsCsvFileName()}"`)
        .header('x-total-count', String(total))
        .send(paymentsCsv(rows));
    },
  );

  app.get(
    '/payments/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetPaymentAnswer },
        tags,
        summary:
          'Get any payment, with its merchant, executor, requisite, cancel reason (and the note of whoever cancelled it) and the rate refresh that gave its rate',
        params: IdParams,
        errors: { PAY_006: 'No payment with this id' },
      },
    },
    async (request) => {
      const row = isUuid(request.params.id) ? await findPayment(ctx.db, request.params.id) : undefined;
      if (!row) throw new DomainError('PAY_006', `Payment ${request.params.id} not found`);
      const [flags, payerName] = await Promise.all([listFlags(ctx.db, { paymentIds: [row.id] }), findPayerName(ctx.db, row.id)]);
      return {
        ...toPayment(row, pageUrl),
        merchant_id: row.merchant_id,
        executor_id: row.executor_id,
        requisite_id: row.requisite_id,
        client_id: row.client_id,
        payer_class: row.payer_class,
        cancel_reason: row.cancel_reason,
        cancel_note: row.cancel_note,
        rate_refresh_id: row.rate_refresh_id === null ? null : String(row.rate_refresh_id),
        is_test: row.is_test,
        payer_name: payerName ?? null,
        risk_flags: flags.map(toFlagSummary),
      };
    },
  );

  /** Manual cancellation: "PENDING — timeout or manual cancellation — CANCELLED". */
  app.post(
    '/payments/:id/cancel',
    {
      config: { access: 'support', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminCancelPaymentAnswer },
        tags,
        summary: 'Cancel a PENDING payment by hand: it becomes CANCELLED',
        description:
          'As when a payment times out: the hold on the executor’s deposit, if any, is released, and the merchant’s `payment.cancelled` webhook follows. `reason` (the console always sends one) is kept as the payment’s `cancel_note` and in the audit log; `cancel_reason` is `manual`.',
        params: IdParams,
        body: ReasonBody,
        errors: {
          PAY_006: 'No payment with this id',
          PAY_008: 'The payment is not PENDING (`data.status` is its status)',
          VALIDATION: 'Invalid parameters: `reason` empty or blank, or longer than 1000 characters',
        },
      },
    },
    async (request) => {
      const id = request.params.id;
      const note = request.body.reason?.trim();
      const before = isUuid(id) ? await findPayment(ctx.db, id) : undefined;
      if (!before) throw new DomainError('PAY_006', `Payment ${id} not found`);
      const changed = await transaction(ctx.db, async (tx) => {
        const result = await changePayment(tx, ctx, id, 'cancel', { reason: 'manual', note });
        if (result) {
          await audit(tx, request, 'payment.cancel', 'payment', id, { status: result.from }, { status: result.to, ...(note ? { reason: note } : {}) });
        }
        return result;
      });
      if (!changed) {
        const current = await findPayment(ctx.db, id);
        throw new DomainError('PAY_008', `Only a PENDING payment can be cancelled; this one is ${current?.status}`, { status: current?.status });
      }
      return toPayment((await findPayment(ctx.db, id))!, pageUrl);
    },
  );
}

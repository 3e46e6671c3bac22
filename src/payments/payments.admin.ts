import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { isUuid } from '../lib/validators.js';
import { changePayment, PAYMENT_STATUSES } from './lifecycle.js';
import { findPayment, listPayments } from './payments.repo.js';
import { toPayment } from './payments.schemas.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });

/** Operator API for payments: look-ups across merchants and manual cancellation. */
export async function paymentAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const pageUrl = ctx.config.paymentPageUrl;

  app.get(
    '/payments',
    {
      config: { access: 'support' },
      schema: {
        tags,
        querystring: Type.Object({
          merchant_id: Type.Optional(Type.String()),
          terminal_id: Type.Optional(Type.String()),
          status: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { merchant_id: merchantId, terminal_id: terminalId, status } = request.query;
      for (const [name, value] of Object.entries({ merchant_id: merchantId, terminal_id: terminalId })) {
        if (value !== undefined && !isUuid(value)) throw new DomainError('VALIDATION', `${name} must be a UUID`);
      }
      if (status !== undefined && !(PAYMENT_STATUSES as readonly string[]).includes(status)) {
        throw new DomainError('VALIDATION', `status must be one of ${PAYMENT_STATUSES.join(', ')}`);
      }
      const { rows, total } = await listPayments(ctx.db, { merchantId, terminalId, status, limit, offset });
      return {
        payments: rows.map((row) => ({ ...toPayment(row, pageUrl), merchant_id: row.merchant_id, cancel_reason: row.cancel_reason })),
        total,
        limit,
        offset,
      };
    },
  );

  app.get('/payments/:id', { config: { access: 'support' }, schema: { tags, params: IdParams } }, async (request) => {
    const row = isUuid(request.params.id) ? await findPayment(ctx.db, request.params.id) : undefined;
    if (!row) throw new DomainError('PAY_006', `Payment ${request.params.id} not found`);
    return {
      ...toPayment(row, pageUrl),
      merchant_id: row.merchant_id,
      requisite_id: row.requisite_id,
      client_id: row.client_id,
      cancel_reason: row.cancel_reason,
    };
  });

  /** Manual cancellation: "PENDING — timeout or manual cancellation — CANCELLED". */
  app.post('/payments/:id/cancel', { config: { access: 'support' }, schema: { tags, params: IdParams } }, async (request) => {
    const id = request.params.id;
    const before = isUuid(id) ? await findPayment(ctx.db, id) : undefined;
    if (!before) throw new DomainError('PAY_006', `Payment ${id} not found`);
    const changed = await transaction(ctx.db, async (tx) => {
      const result = await changePayment(tx, ctx.config, id, 'cancel', { reason: 'manual' });
      if (result) {
        await audit(tx, request, 'payment.cancel', 'payment', id, { status: result.from }, { status: result.to });
      }
      return result;
    });
    if (!changed) {
      const current = await findPayment(ctx.db, id);
      throw new DomainError('PAY_008', `Only a PENDING payment can be cancelled; this one is ${current?.status}`, { status: current?.status });
    }
    return toPayment((await findPayment(ctx.db, id))!, pageUrl);
  });
}

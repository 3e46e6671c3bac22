import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { listFlags } from '../risk/flags.repo.js';
import { toFlagSummary } from '../risk/flags.service.js';
import type { PayoutEvent } from './lifecycle.js';
import { AdminGetPayoutAnswer, AdminListPayoutsAnswer, AdminPayoutAnswer } from './payouts.admin.answers.js';
import { findPayout, listPayouts, PAYOUT_STATUSES, type PayoutPayer, payoutPayers } from './payouts.repo.js';
import { toPayout } from './payouts.schemas.js';
import { actOnPayout } from './payouts.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });
const ReasonBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) });
const NOT_FOUND = { PAYOUT_NOT_FOUND: 'No payout with this id' };

/** Each of the operator's actions on a payout, as the reference shows it. */
const ACTIONS = {
  complete: {
    summary: 'Complete a pending or processing payout by hand: its reserve is settled',
    description:
      'Moves money: an executor who took the payout is paid its reserve back with its reward; a payout nobody took leaves the terminal, its fee to revenue. The merchant’s `payout.completed` webhook follows.',
  },
  fail: {
    summary: 'Fail a pending or processing payout: its reserve returns to the terminal',
    description: 'The payout keeps `reason` as its failure reason; the merchant’s `payout.failed` webhook follows.',
  },
  cancel: {
    summary: 'Cancel a pending or processing payout: its reserve returns to the terminal',
    description: 'The payout keeps `reason` as its failure reason; the merchant’s `payout.cancelled` webhook follows.',
  },
};

function adminView(row: Awaited<ReturnType<typeof findPayout>> & object, payer?: PayoutPayer) {
  return {
    ...toPayout(row),
    merchant_id: row.merchant_id,
    terminal_id: row.terminal_id,
    executor_id: row.executor_id,
    reserve: Number(row.reserve),
    failure_reason: row.failure_reason,
    has_proof: row.proof_key !== null,
    is_test: row.is_test,
    provider_id: row.provider_id,
    // A completed payout says who paid it: the executor (with its proof), a provider, and the person who completed it.
    paid_by: payer ?? null,
  };
}

/** Operator API for payouts: look-ups and completing, failing or cancelling (each audited). */
export async function payoutAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/payouts',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListPayoutsAnswer },
        tags,
        summary: 'List payouts, newest first, by status and merchant',
        querystring: Type.Object({
          status: Type.Optional(Type.String()),
          merchant_id: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { status, merchant_id: merchantId } = request.query;
      if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status))
        throw new DomainError('VALIDATION', `status must be one of ${PAYOUT_STATUSES.join(', ')}`);
      if (merchantId !== undefined && !/^[0-9a-f-]{36}$/i.test(merchantId)) throw new DomainError('VALIDATION', 'merchant_id must be a UUID');
      const { rows, total } = await listPayouts(ctx.db, { merchantId: merchantId ?? null, status, limit, offset });
      const payers = await payoutPayers(
        ctx.db,
        rows.filter((row) => row.status === 'completed').map((row) => row.id),
      );
      return { payouts: rows.map((row) => adminView(row, payers.get(row.id))), total, limit, offset };
    },
  );

  app.get(
    '/payouts/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetPayoutAnswer },
        tags,
        summary: 'Get a payout with its merchant, executor, reserve and proof',
        params: IdParams,
        errors: NOT_FOUND,
      },
    },
    async (request) => {
      const row = /^[0-9a-f-]{36}$/i.test(request.params.id) ? await findPayout(ctx.db, request.params.id) : undefined;
      if (!row) throw new DomainError('PAYOUT_NOT_FOUND', `Payout ${request.params.id} not found`);
      const [payers, flags] = await Promise.all([payoutPayers(ctx.db, [row.id]), listFlags(ctx.db, { payoutIds: [row.id] })]);
      return { ...adminView(row, payers.get(row.id)), risk_flags: flags.map(toFlagSummary) };
    },
  );

  app.get(
    '/payouts/:id/proof',
    {
      config: { access: 'support' },
      schema: {
        tags,
        summary: 'The proof a completed payout was paid with (the executor’s receipt file), to show in the browser',
        params: IdParams,
        documentedResponse: {
          200: { description: 'The proof file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' },
        },
        errors: { ...NOT_FOUND, NOT_FOUND: 'The payout has no proof file (completed by the operator or a provider, or not yet)' },
      },
    },
    async (request, reply) => {
      const row = /^[0-9a-f-]{36}$/i.test(request.params.id) ? await findPayout(ctx.db, request.params.id) : undefined;
      if (!row) throw new DomainError('PAYOUT_NOT_FOUND', `Payout ${request.params.id} not found`);
      if (!row.proof_key) throw new DomainError('NOT_FOUND', `Payout ${row.id} has no proof file`);
      const chunks: Buffer[] = [];
      for await (const chunk of await ctx.files.get(row.proof_key)) chunks.push(Buffer.from(chunk as Buffer));
      const content = Buffer.concat(chunks);
      // Judged by its bytes, as at upload; shown inline in the console, sandboxed and never sniffed into another type.
      const type = (await RECEIPT_FILES.accept(content.subarray(0, RECEIPT_FILES.sniffBytes)))?.contentType ?? 'application/octet-stream';
      return reply
        .header('content-type', type)
        .header('content-disposition', `inline; filename="payout-${row.id}-proof"`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .header('content-security-policy', "default-src 'none'; img-src 'self'; sandbox")
        .send(content);
    },
  );

  for (const event of ['complete', 'fail', 'cancel'] as const satisfies readonly PayoutEvent[]) {
    app.post(
      `/payouts/:id/${event}`,
      {
        config: { access: 'finance', confirm: event === 'complete', idempotencyKey: true },
        schema: {
          tags,
          ...ACTIONS[event],
          params: IdParams,
          // The payout after the change, as GET /payouts/{id} answers it.
          documentedResponse: { 200: AdminPayoutAnswer },
          body: ReasonBody,
          errors: { ...NOT_FOUND, CONFLICT: 'The payout is no longer pending or processing (`data.status` is its status)' },
        },
      },
      async (request) => {
        const reason = request.body.reason;
        const after = await actOnPayout(
          ctx,
          request.params.id,
          event,
          { reason: event === 'complete' ? undefined : (reason ?? `${event}ed by the operator`) },
          (tx, before, changed) => audit(tx, request, `payout.${event}`, 'payout', changed.id, { status: before.status }, { status: changed.status, reason }),
        );
        return adminView(after, (await payoutPayers(ctx.db, [after.id])).get(after.id));
      },
    );
  }
}

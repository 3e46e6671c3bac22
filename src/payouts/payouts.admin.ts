import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import type { PayoutEvent } from './lifecycle.js';
import { AdminGetPayoutAnswer, AdminListPayoutsAnswer } from './payouts.admin.answers.js';
import { findPayout, listPayouts, PAYOUT_STATUSES } from './payouts.repo.js';
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

function adminView(row: Awaited<ReturnType<typeof findPayout>> & object) {
  return {
    ...toPayout(row),
    merchant_id: row.merchant_id,
    terminal_id: row.terminal_id,
    executor_id: row.executor_id,
    reserve: Number(row.reserve),
    failure_reason: row.failure_reason,
    has_proof: row.proof_key !== null,
    is_test: row.is_test,
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
      return { payouts: rows.map(adminView), total, limit, offset };
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
      return adminView(row);
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
          documentedResponse: { 200: AdminGetPayoutAnswer },
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
        return adminView(after);
      },
    );
  }
}

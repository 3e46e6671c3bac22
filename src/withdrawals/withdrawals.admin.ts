import { Type } from 'typebox';
import { audit } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { isUuid } from '../lib/validators.js';
import { changeWithdrawal } from './lifecycle.js';
import { AdminCompleteWithdrawalAnswer, AdminFailWithdrawalAnswer, AdminGetWithdrawalAnswer, AdminListWithdrawalsAnswer } from './withdrawals.admin.answers.js';
import { findWithdrawal, listWithdrawals, WITHDRAWAL_STATUSES, type WithdrawalRow } from './withdrawals.repo.js';
import { toWithdrawal } from './withdrawals.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String() });
const CompleteBody = Type.Object({ tx_hash: Type.String({ pattern: '^(0x)?[0-9a-fA-F]{64}$', description: 'the transaction hash of the transfer sent' }) });
const FailBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 1000 })) });
const NOT_FOUND = { WDR_003: 'No withdrawal with this id' };

function adminView(row: WithdrawalRow) {
  return {
    ...toWithdrawal(row),
    merchant_id: row.merchant_id,
    terminal_id: row.terminal_id,
    executor_id: row.executor_id,
    send_amount: Number(row.send_amount),
    reserve: Number(row.reserve),
    adapter: row.adapter,
    tx_hash: row.tx_hash,
    failure_reason: row.failure_reason,
  };
}

async function load(ctx: AppContext, id: string): Promise<WithdrawalRow> {
  const withdrawal = isUuid(id) ? await findWithdrawal(ctx.db, id) : undefined;
  if (!withdrawal) throw new DomainError('WDR_003', `Withdrawal ${id} not found`);
  return withdrawal;
}

/**
 * Operator API for withdrawals — merchants' and executors' (withdrawals of their deposits) alike. With the manual adapter the operator sends from the custody wallet
 * and records the transaction hash; an automatic (Tron) withdrawal is completed by its own job once
 * the chain confirms it, and can be failed by hand only before anything was signed for it.
 */
export async function withdrawalAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/withdrawals',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListWithdrawalsAnswer },
        tags,
        summary: "Merchants' and executors' withdrawals, newest first, by status, owner and executor",
        querystring: Type.Object({
          status: Type.Optional(Type.String()),
          owner: Type.Optional(Type.String({ description: "merchant: merchants' withdrawals only; executor: executors' withdrawals of their deposits only" })),
          executor_id: Type.Optional(Type.String({ description: "one executor's withdrawals" })),
          limit: Type.Optional(Type.String()),
          offset: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { status, owner, executor_id: executorId } = request.query;
      if (status !== undefined && !(WITHDRAWAL_STATUSES as readonly string[]).includes(status)) {
        throw new DomainError('VALIDATION', `status must be one of ${WITHDRAWAL_STATUSES.join(', ')}`);
      }
      if (owner !== undefined && owner !== 'merchant' && owner !== 'executor') throw new DomainError('VALIDATION', 'owner must be merchant or executor');
      if (executorId !== undefined && !isUuid(executorId)) throw new DomainError('VALIDATION', 'executor_id must be an executor id (UUID)');
      const rows = await listWithdrawals(ctx.db, { status, owner, executorId }, limit, offset);
      return { withdrawals: rows.map(adminView), limit, offset };
    },
  );

  app.get(
    '/withdrawals/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetWithdrawalAnswer },
        tags,
        summary: 'Get a withdrawal with its owner, amounts, adapter and transaction',
        params: IdParams,
        errors: NOT_FOUND,
      },
    },
    async (request) => adminView(await load(ctx, request.params.id)),
  );

  app.post(
    '/withdrawals/:id/complete',
    {
      config: { access: 'finance', confirm: true, idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminCompleteWithdrawalAnswer },
        tags,
        summary: 'Record a manual withdrawal as sent, with its transaction hash: its reserve is settled',
        description:
          'For the manual adapter: the operator sent the USDT from the custody wallet. Moves money: the reserve leaves the balance, the fee to revenue.',
        params: IdParams,
        body: CompleteBody,
        errors: {
          ...NOT_FOUND,
          CONFLICT:
            'The withdrawal is sent by the Tron adapter (it completes when the chain confirms it), is no longer pending or processing, or the transaction is recorded for another withdrawal',
        },
      },
    },
    async (request) => {
      const before = await load(ctx, request.params.id);
      if (before.adapter !== 'manual')
        throw new DomainError('CONFLICT', 'This withdrawal is sent by the Tron adapter and completes when the chain confirms it');
      const txHash = request.body.tx_hash.replace(/^0x/, '').toLowerCase();
      const after = await transaction(ctx.db, async (tx) => {
        const done = await changeWithdrawal(tx, before.id, { event: 'complete', txHash });
        if (!done)
          throw new DomainError('CONFLICT', `Withdrawal is ${before.status}; only a pending or processing one can be completed`, { status: before.status });
        await audit(tx, request, 'withdrawal.complete', 'withdrawal', before.id, { status: before.status }, { status: done.status, tx_hash: txHash });
        return done;
      });
      return adminView(after);
    },
  );

  app.post(
    '/withdrawals/:id/fail',
    {
      config: { access: 'finance', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminFailWithdrawalAnswer },
        tags,
        summary: 'Fail a withdrawal: its reserve returns to the balance it came from',
        description: 'An automatic (Tron) withdrawal only before anything was signed for it: once signed, it fails on its own if the chain rejects it.',
        params: IdParams,
        body: FailBody,
        errors: { ...NOT_FOUND, CONFLICT: 'The withdrawal is no longer pending or processing, or a transaction was already signed for it' },
      },
    },
    async (request) => {
      const before = await load(ctx, request.params.id);
      if (before.adapter !== 'manual' && before.tx_hash) {
        throw new DomainError(
          'CONFLICT',
          `A transaction (${before.tx_hash}) was already signed for this withdrawal; it fails on its own if the chain rejects it`,
        );
      }
      const reason = request.body.reason ?? 'failed by the operator';
      const after = await transaction(ctx.db, async (tx) => {
        const done = await changeWithdrawal(tx, before.id, { event: 'fail', reason });
        if (!done)
          throw new DomainError('CONFLICT', 'Only a pending or processing withdrawal with nothing signed for it can be failed by hand', {
            status: before.status,
          });
        await audit(tx, request, 'withdrawal.fail', 'withdrawal', before.id, { status: before.status }, { status: done.status, reason });
        return done;
      });
      return adminView(after);
    },
  );
}

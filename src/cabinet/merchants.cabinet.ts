import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { audit, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { transaction } from '../db/pool.js';
import { decideTestDispute, openDispute } from '../disputes/disputes.service.js';
import { DomainError } from '../errors.js';
import type { PersonActor } from '../lib/actor.js';
import { toNumber } from '../lib/money.js';
import { parseListQuery } from '../lib/pagination.js';
import { isUuid } from '../lib/validators.js';
import * as merchants from '../merchants/merchants.service.js';
import { PaymentListQuery, PaymentTimeline } from '../payments/payments.admin.schemas.js';
import { findPayment, listPayments } from '../payments/payments.repo.js';
import { toPayment } from '../payments/payments.schemas.js';
import { parsePaymentListQuery, paymentsCsv, paymentsCsvFileName } from '../payments/payments.search.js';
import { actOnTestPayment, TEST_PAYMENT_ACTIONS, type TestPaymentAction } from '../payments/test-mode.service.js';
import { listPayouts, PAYOUT_STATUSES, type PayoutRow } from '../payouts/payouts.repo.js';
import { CreatePayoutBody, toPayout } from '../payouts/payouts.schemas.js';
import { actOnTestPayout, createPayout } from '../payouts/payouts.service.js';
import { receiptUploadBody, uploadRoute } from '../receipts/receipts.routes.js';
import { merchantPaymentTimeline } from '../reports/payments.timeline.js';
import { findMerchantTerminal, listMerchantTerminals } from '../terminals/terminals.repo.js';
import { RotateBody, toTerminal } from '../terminals/terminals.schemas.js';
import * as terminals from '../terminals/terminals.service.js';
import { transfer } from '../transfers/transfers.service.js';
import { getWebhookEvent, listWebhookEvents, resendWebhookEvent } from '../webhooks/webhooks.service.js';
import { findByIdempotencyRequest } from '../withdrawals/withdrawals.repo.js';
import { createWithdrawal, listWithdrawals, toWithdrawal } from '../withdrawals/withdrawals.service.js';
import {
  CabinetCreatePayoutAnswer,
  CabinetCreateTransferAnswer,
  CabinetCreateWithdrawalAnswer,
  CabinetGetMeAnswer,
  CabinetGetPaymentAnswer,
  CabinetGetTerminalStatementAnswer,
  CabinetGetWebhookAnswer,
  CabinetListPaymentsAnswer,
  CabinetListPayoutsAnswer,
  CabinetListWebhooksAnswer,
  CabinetListWithdrawalsAnswer,
  CabinetOpenDisputeAnswer,
  CabinetResendWebhookAnswer,
  CabinetRotateSecretKeyAnswer,
  CabinetRotateTerminalApiKeyAnswer,
  CabinetTestActionAnswer,
} from './merchants.cabinet.answers.js';

const tags = ['merchant cabinet'];
const IdParams = Type.Object({ id: Type.String() });
const Page = { limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) };
const CONFIRM = 'The person must have confirmed it is them in the last five minutes (`POST /auth/v1/confirm`), else `403 AUTH_004`.';
const TWO_FACTOR = ' Needs two-factor turned on (`POST /auth/v1/two-factor/setup`), else `403 AUTH_003`.';
/** What a route that needs two-factor adds to the cabinet's AUTH_003. */
const NO_TWO_FACTOR = { AUTH_003: 'Two-factor is not on for the person (`data.two_factor_required`)' };
const PAYMENT_NOT_FOUND = { PAY_006: 'No payment with this id among the merchant’s' };

/** The merchant the signed-in person acts for (set by merchantSessionAuth). */
function own(request: FastifyRequest): string {
  return request.merchantAccount!;
}

/** Sending money out of Kassir or handing out new keys: only a person with two-factor on. */
function requireTwoFactor(request: FastifyRequest): void {
  if (!(request.actor as PersonActor).twoFactor) {
    throw new DomainError('AUTH_003', 'Turn on two-factor first (Security in the cabinet): withdrawals and key rotations need it', {
      two_factor_required: true,
    });
  }
}

const RETRY_SAFE = ' Send an `Idempotency-Key` header (1–255 printable characters) to make a retry safe: a repeat is done once.';

/**
 * The request an `Idempotency-Key` from the cabinet stands for, as the uuid withdrawals and
 * transfers record (migration 015): derived from the merchant and the key, in a namespace of its
 * own so that it never meets the id of a signed API request. Undefined without the header.
 */
function cabinetRequest(request: FastifyRequest, invalidCode: 'WDR_001' | 'TRF_001'): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key)) throw new DomainError(invalidCode, 'Idempotency-Key must be 1 to 255 printable characters');
  const hex = createHash('sha256')
    .update(`merchant-cabinet\n${own(request)}\n${key}`)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A payout as the cabinet shows it: the spec's Payout, its terminal, why it failed, and whether it is a test one. */
function cabinetPayout(row: PayoutRow) {
  return { ...toPayout(row), terminal_id: row.terminal_id, failure_reason: row.failure_reason, is_test: row.is_test };
}

const TEST_ONLY = {
  LIVE_OBJECT: 'The payment or payout is live (`TEST_001`, 403): test actions are for a test terminal’s objects only',
  CONFLICT: 'Not in a status the action applies from (`data.status`)',
};

async function ownTerminal(ctx: AppContext, request: FastifyRequest, id: string) {
  const terminal = isUuid(id) ? await findMerchantTerminal(ctx.db, own(request), id) : undefined;
  if (!terminal) throw new DomainError('NOT_FOUND', `Terminal ${id} not found`);
  return terminal;
}

/**
 * The merchant cabinet's API (`/merchant/v1`, a merchant's person signed in): the merchant's own
 * payments, payouts, withdrawals, balances and webhook deliveries, and the actions a person takes
 * there — every query scoped to the person's merchant, another merchant's object not found.
 */
export async function merchantCabinetRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const pageUrl = ctx.config.paymentPageUrl;

  app.get(
    '/me',
    { schema: { documentedResponse: { 200: CabinetGetMeAnswer }, tags, summary: 'The merchant and its terminals with their balances' } },
    async (request) => {
      const merchant = await merchants.getMerchant(ctx, own(request));
      const rows = await listMerchantTerminals(ctx.db, merchant.id);
      return {
        merchant: { id: merchant.id, name: merchant.name },
        api_base_url: ctx.config.publicBaseUrl,
        terminals: rows.map((row) => ({ ...toTerminal(row), is_test: row.is_test })),
      };
    },
  );

  app.get(
    '/terminals/:id/statement',
    {
      schema: {
        documentedResponse: { 200: CabinetGetTerminalStatementAnswer },
        tags,
        summary: "A terminal's balance postings, newest first, with the balance after each",
        params: IdParams,
        querystring: Type.Object(Page),
      },
    },
    async (request) => {
      const terminal = await ownTerminal(ctx, request, request.params.id);
      return terminals.terminalStatement(ctx, terminal.id, parseListQuery(request.query, 'VALIDATION'));
    },
  );

  app.post(
    '/terminals/:id/api-key/rotate',
    {
      config: { secret: true, confirm: true },
      schema: {
        documentedResponse: { 200: CabinetRotateTerminalApiKeyAnswer },
        tags,
        summary: "Rotate a terminal's API key: the new key is shown once; the old one works for grace_seconds more",
        description: CONFIRM + TWO_FACTOR,
        params: IdParams,
        body: RotateBody,
        errors: NO_TWO_FACTOR,
      },
    },
    async (request) => {
      requireTwoFactor(request);
      const terminal = await ownTerminal(ctx, request, request.params.id);
      const rotated = await terminals.rotateApiKey(ctx, terminal.id, request.body.grace_seconds ?? 0, auditFor(request));
      return { id: terminal.id, ...rotated };
    },
  );

  app.post(
    '/secret-key/rotate',
    {
      config: { secret: true, confirm: true },
      schema: {
        documentedResponse: { 200: CabinetRotateSecretKeyAnswer },
        tags,
        summary: "Rotate the merchant's secret key: the new one is shown once; the old one signs for grace_seconds more",
        description: CONFIRM + TWO_FACTOR,
        body: RotateBody,
        errors: NO_TWO_FACTOR,
      },
    },
    async (request) => {
      requireTwoFactor(request);
      const rotated = await merchants.rotateSecret(ctx, own(request), request.body.grace_seconds ?? 0, auditFor(request));
      return { id: own(request), ...rotated };
    },
  );

  app.get(
    '/payments',
    {
      schema: {
        documentedResponse: { 200: CabinetListPaymentsAnswer },
        tags,
        summary: "Search the merchant's payments (the operator's search, scoped to the merchant), or a CSV of the same list",
        querystring: PaymentListQuery,
        produces: ['application/json', 'text/csv'],
      },
    },
    async (request, reply) => {
      if (request.query.merchant_id !== undefined || request.query.executor_id !== undefined) {
        throw new DomainError('VALIDATION', 'merchant_id and executor_id are not filters of the merchant cabinet');
      }
      const query = { ...parsePaymentListQuery(request.query, request.headers.accept), merchantId: own(request) };
      const { rows, total } = await listPayments(ctx.db, query);
      if (query.format === 'json') {
        return {
          payments: rows.map((row) => ({
            ...toPayment(row, pageUrl),
            terminal_id: row.terminal_id,
            client_id: row.client_id,
            cancel_reason: row.cancel_reason,
            is_test: row.is_test,
          })),
          total,
          limit: query.limit,
          offset: query.offset,
        };
      }
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${paymentsCsvFileName()}"`)
        .header('x-total-count', String(total))
        .send(paymentsCsv(rows, 'merchant'));
    },
  );

  app.get(
    '/payments/:id',
    {
      schema: {
        documentedResponse: { 200: CabinetGetPaymentAnswer },
        tags,
        summary: 'One of the merchant’s payments',
        params: IdParams,
        errors: PAYMENT_NOT_FOUND,
      },
    },
    async (request) => {
      const row = isUuid(request.params.id) ? await findPayment(ctx.db, request.params.id) : undefined;
      if (!row || row.merchant_id !== own(request)) throw new DomainError('PAY_006', `Payment ${request.params.id} not found`);
      return {
        ...toPayment(row, pageUrl),
        terminal_id: row.terminal_id,
        client_id: row.client_id,
        cancel_reason: row.cancel_reason,
        is_test: row.is_test,
      };
    },
  );

  app.get(
    '/payments/:id/timeline',
    {
      schema: {
        tags,
        summary: "A payment's life as the merchant sees it: creation, hand-out, confirmations, receipts, disputes, status changes, webhooks",
        params: IdParams,
        response: { 200: PaymentTimeline },
        errors: PAYMENT_NOT_FOUND,
      },
    },
    async (request) => merchantPaymentTimeline(ctx, request.params.id, own(request)),
  );

  app.get(
    '/payouts',
    {
      schema: {
        documentedResponse: { 200: CabinetListPayoutsAnswer },
        tags,
        summary: 'The merchant’s payouts, newest first, by status and creation time',
        querystring: Type.Object({ status: Type.Optional(Type.String()), from: Type.Optional(Type.String()), to: Type.Optional(Type.String()), ...Page }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { status, from, to } = request.query;
      if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status)) {
        throw new DomainError('VALIDATION', `status must be one of ${PAYOUT_STATUSES.join(', ')}`);
      }
      const when = (name: string, value: string | undefined): Date | undefined => {
        if (value === undefined) return undefined;
        if (Number.isNaN(Date.parse(value))) throw new DomainError('VALIDATION', `${name} must be a date and time (ISO 8601)`, { [name]: value });
        return new Date(value);
      };
      const { rows, total } = await listPayouts(ctx.db, { merchantId: own(request), status, from: when('from', from), to: when('to', to), limit, offset });
      return {
        payouts: rows.map(cabinetPayout),
        total,
        limit,
        offset,
      };
    },
  );

  app.get(
    '/withdrawals',
    {
      schema: {
        documentedResponse: { 200: CabinetListWithdrawalsAnswer },
        tags,
        summary: 'The merchant’s withdrawals, newest first',
        querystring: Type.Object(Page),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const rows = await listWithdrawals(ctx, own(request), limit, offset);
      return { withdrawals: rows.map((row) => ({ ...toWithdrawal(row), terminal_id: row.terminal_id })), limit, offset };
    },
  );

  app.post(
    '/withdrawals',
    {
      config: { confirm: true },
      schema: {
        documentedResponse: { 201: CabinetCreateWithdrawalAnswer },
        tags,
        summary: 'Withdraw USDT from a terminal to a TRC-20 wallet (as POST /v1/withdrawals)',
        description: `${CONFIRM}${TWO_FACTOR}${RETRY_SAFE} A repeat answers 200 with the withdrawal the first request made.`,
        body: Type.Object({
          terminal_id: Type.String(),
          amount: Type.Number(),
          address: Type.String(),
          subtract_fee_from_amount: Type.Optional(Type.Boolean()),
        }),
        errors: {
          ...NO_TWO_FACTOR,
          WDR_001:
            'Invalid withdrawal: `terminal_id` not one of the merchant’s terminals, `amount` not above the fee when it is subtracted, `address` not a TRC-20 address, or a malformed `Idempotency-Key`',
          WDR_002: 'Insufficient funds on the terminal (`data.available`, `data.required`)',
        },
      },
    },
    async (request, reply) => {
      requireTwoFactor(request);
      const requestId = cabinetRequest(request, 'WDR_001');
      const earlier = requestId && (await findByIdempotencyRequest(ctx.db, own(request), requestId));
      if (earlier) return reply.status(200).send({ ...toWithdrawal(earlier), terminal_id: earlier.terminal_id });
      const withdrawal = await createWithdrawal(ctx, own(request), request.body, requestId, auditFor(request));
      return reply.status(201).send({ ...toWithdrawal(withdrawal), terminal_id: withdrawal.terminal_id });
    },
  );

  app.post(
    '/transfers',
    {
      config: { confirm: true },
      schema: {
        documentedResponse: { 200: CabinetCreateTransferAnswer },
        tags,
        summary: 'Move USDT between two terminals of the merchant (as POST /v1/transfers)',
        description: CONFIRM + RETRY_SAFE,
        body: Type.Object({ from_terminal_id: Type.String(), to_terminal_id: Type.String(), amount: Type.Number() }),
        errors: {
          TRF_001:
            'Invalid transfer: a terminal id that is not a UUID, the same terminal twice, an amount that is not positive, or a malformed `Idempotency-Key`',
          TRF_002: 'A terminal is not one of the merchant’s (`data.terminal_id`)',
          TRF_003: 'Insufficient funds on the source terminal (`data.available`)',
        },
      },
    },
    async (request) => {
      // Audited with the posting; a repeat (same Idempotency-Key) moves nothing and writes no row.
      const done = await transfer(ctx, own(request), request.body, cabinetRequest(request, 'TRF_001'), auditFor(request));
      return { success: true, from_terminal_id: done.from, to_terminal_id: done.to, amount: toNumber(done.amount)!, currency: 'USDT' };
    },
  );

  for (const action of Object.keys(TEST_PAYMENT_ACTIONS) as TestPaymentAction[]) {
    app.post(
      `/payments/:id/test/${action}`,
      {
        config: { idempotencyKey: true },
        schema: {
          documentedResponse: { 200: CabinetTestActionAnswer },
          tags,
          summary:
            action === 'complete'
              ? 'Test mode: complete a test payment as a payer’s transfer would (PENDING → COMPLETED; the webhook goes out, no money moves)'
              : 'Test mode: expire a test payment as its timeout would (PENDING → CANCELLED, cancel_reason expired; the webhook goes out)',
          params: IdParams,
          errors: { ...PAYMENT_NOT_FOUND, ...TEST_ONLY },
        },
      },
      async (request) => actOnTestPayment(ctx, own(request), request.params.id, action, auditFor(request)),
    );
  }

  app.post(
    '/payments/:id/test/dispute/approve',
    {
      config: { idempotencyKey: true },
      schema: {
        documentedResponse: { 200: CabinetTestActionAnswer },
        tags,
        summary: 'Test mode: approve the open dispute of a test payment as the operator would (COMPLETED, or COMPLETED_APPEAL for another amount)',
        params: IdParams,
        // Read by decideDispute (the amount checked as the operator's is); an empty body approves the order amount.
        documentedBody: {
          required: false,
          description: 'Optional: `amount` received, when it differs from the order amount (COMPLETED_APPEAL).',
          content: { 'application/json': { schema: Type.Object({ amount: Type.Optional(Type.Number({ description: 'the amount received' })) }) } },
        },
        errors: { ...PAYMENT_NOT_FOUND, ...TEST_ONLY, DIS_003: 'The payment is not in DISPUTE (`data.status`)' },
      },
    },
    async (request) => {
      const amount = (request.body as { amount?: unknown } | null | undefined)?.amount;
      return decideTestDispute(ctx, own(request), request.params.id, { approve: true, amount }, auditFor(request));
    },
  );

  app.post(
    '/payments/:id/test/dispute/reject',
    {
      config: { idempotencyKey: true },
      schema: {
        documentedResponse: { 200: CabinetTestActionAnswer },
        tags,
        summary: 'Test mode: reject the open dispute of a test payment as the operator would (CANCELLED)',
        params: IdParams,
        errors: { ...PAYMENT_NOT_FOUND, ...TEST_ONLY, DIS_003: 'The payment is not in DISPUTE (`data.status`)' },
      },
    },
    async (request) => decideTestDispute(ctx, own(request), request.params.id, { approve: false }, auditFor(request)),
  );

  app.post(
    '/payments/:id/dispute',
    {
      config: { ...uploadRoute, idempotencyKey: true },
      schema: {
        documentedResponse: { 200: CabinetOpenDisputeAnswer },
        tags,
        summary: 'Open a dispute on a cancelled payment, with a receipt file or link (as POST /v1/payments/{id}/dispute)',
        description: `JSON, or multipart/form-data with the receipt file and the fields as one JSON string in \`data\`, as the merchant API takes it.${RETRY_SAFE}`,
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        documentedBody: receiptUploadBody(
          {
            amount: Type.Optional(Type.Number({ description: 'the amount actually paid, if different from the order' })),
            receipt_url: Type.Optional(Type.String({ description: 'link to a receipt or screenshot' })),
            comment: Type.Optional(Type.String({ maxLength: 2000 })),
          },
          { fileRequired: false, example: { amount: 1500, comment: 'Paid at 10:07, the bank shows it sent' } },
        ),
        errors: {
          ...PAYMENT_NOT_FOUND,
          PAY_002: 'Invalid parameters: `amount`, `comment` or `receipt_url`, or the `data` part is not a JSON object',
          DIS_001: 'The payment is neither CANCELLED nor CANCELLED_APPEAL (`data.status`)',
          DIS_002: 'A dispute is already open for this payment',
          PAY_009: 'The receipt file is larger than 10 MB',
          PAY_010: 'The receipt is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => {
      // Audited with the person who opened it, in the dispute's transaction.
      return openDispute(ctx, own(request), request.params.id, await request.readUpload(), auditFor(request));
    },
  );

  app.post(
    '/payouts',
    {
      config: { idempotencyKey: true },
      schema: {
        documentedResponse: { 200: CabinetCreatePayoutAnswer },
        tags,
        summary: 'Create a payout through one of the merchant’s terminals (as POST /v1/payouts with that terminal’s key)',
        description: `The payout's USDT value is reserved on the terminal until it completes or fails; a test terminal's payout reserves nothing and waits for the test actions.${RETRY_SAFE}`,
        body: Type.Object({ terminal_id: Type.String(), ...CreatePayoutBody.properties }),
        errors: {
          NOT_FOUND: 'The terminal is not one of the merchant’s',
          AUTH_003: 'The terminal is switched off',
          PAY_002: 'Invalid parameters (the message names the field), or not enough balance on the terminal (`data.available`, `data.required`)',
          PAY_003: 'A payout with this `ext_id` already exists (`data.ext_id`)',
          UNAVAILABLE: 'No USDT rate is set for RUB, or no route could take the payout (its reserve is released)',
        },
      },
    },
    async (request) => {
      const { terminal_id: terminalId, ...body } = request.body;
      const terminal = await ownTerminal(ctx, request, terminalId);
      if (!terminal.is_active) throw new DomainError('AUTH_003', `Terminal ${terminal.name} is switched off`);
      const identity = { merchantId: terminal.merchant_id, terminalId: terminal.id, terminalTest: terminal.is_test, terminalNotifyUrl: terminal.notify_url };
      return cabinetPayout(await createPayout(ctx, identity, body, auditFor(request)));
    },
  );

  for (const event of ['complete', 'fail'] as const) {
    app.post(
      `/payouts/:id/test/${event}`,
      {
        config: { idempotencyKey: true },
        schema: {
          documentedResponse: { 200: CabinetCreatePayoutAnswer },
          tags,
          summary: `Test mode: ${event} a test payout as an executor would (the payout.${event === 'complete' ? 'completed' : 'failed'} webhook goes out, no money moves)`,
          params: IdParams,
          errors: { PAYOUT_NOT_FOUND: 'No payout with this id among the merchant’s', ...TEST_ONLY },
        },
      },
      async (request) => cabinetPayout(await actOnTestPayout(ctx, own(request), request.params.id, event, auditFor(request))),
    );
  }

  app.get(
    '/webhooks',
    {
      schema: {
        documentedResponse: { 200: CabinetListWebhooksAnswer },
        tags,
        summary: "The merchant's webhook deliveries, newest first",
        querystring: Type.Object({ resource_id: Type.Optional(Type.String()), status: Type.Optional(Type.String()), ...Page }),
      },
    },
    async (request) => {
      const { limit, offset } = parseListQuery(request.query, 'VALIDATION');
      const { resource_id: resourceId, status } = request.query;
      return { webhooks: await listWebhookEvents(ctx, { resourceId, status, merchantId: own(request), limit, offset }), limit, offset };
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'One delivery: the request sent (payload, address) and each attempt with the answer',
        params: IdParams,
        documentedResponse: { 200: CabinetGetWebhookAnswer },
      },
    },
    async (request) => {
      if (!isUuid(request.params.id)) throw new DomainError('NOT_FOUND', `Webhook event ${request.params.id} not found`);
      return getWebhookEvent(ctx, request.params.id, own(request));
    },
  );

  app.post(
    '/webhooks/:id/resend',
    {
      schema: {
        documentedResponse: { 202: CabinetResendWebhookAnswer },
        tags,
        summary: 'Send a delivery again now (same event id, so your handler can deduplicate)',
        params: IdParams,
      },
    },
    async (request, reply) => {
      if (!isUuid(request.params.id)) throw new DomainError('NOT_FOUND', `Webhook event ${request.params.id} not found`);
      const event = await transaction(ctx.db, async (tx) => {
        const row = await resendWebhookEvent(tx, request.params.id, own(request));
        await audit(tx, request, 'webhook.resend', 'webhook_event', row.id, { status: row.status }, { status: 'pending' });
        return row;
      });
      return reply.status(202).send({ id: event.id, status: 'pending' });
    },
  );
}

import { Type } from 'typebox';
import { actorOf, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { parseListQuery } from '../lib/pagination.js';
import { BlockAnswer, BlockListAnswer, LimitAnswer, LimitListAnswer, NoContent } from './risk.admin.answers.js';
import * as risk from './risk.service.js';

const tags = ['operator'];
const Kind = Type.Enum(['client_id', 'card', 'phone', 'ip', 'device']);
const Scope = Type.Enum(['client_id', 'ip']);

const BlockBody = Type.Object({
  kind: Kind,
  value: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the mark itself; or payment_id / dispute_id to take it from a payment' })),
  payment_id: Type.Optional(Type.String({ description: 'block the mark this payment carries (its client_id, or the IP or device its page saw)' })),
  dispute_id: Type.Optional(Type.String({ description: "block the mark of the dispute's payment" })),
  merchant_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'absent or null: the block holds for every merchant' })),
  reason: Type.String({ minLength: 1, maxLength: 1000 }),
  expires_at: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const BlockListQuery = Type.Object({
  kind: Type.Optional(Kind),
  merchant_id: Type.Optional(Type.String({ format: 'uuid' })),
  active: Type.Optional(Type.Enum(['true', 'false'])),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
});

const LimitBody = Type.Object({
  scope: Type.Optional(
    Type.Enum(['client_id', 'ip'], {
      description: "default client_id (the merchant's payer); ip: the payer's address, counted when the payment page is opened",
    }),
  ),
  window_seconds: Type.Integer({ minimum: 1, maximum: 2592000 }),
  max_payments: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  max_amount: Type.Optional(Type.Union([Type.Number(), Type.String(), Type.Null()], { description: "in the order's currency" })),
});

/** The operator's risk rules: blocks and velocity limits (DESIGN.md "Risk rules (contract)"). */
export async function riskAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/risk/blocks',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 201: BlockAnswer },
        tags,
        summary: 'Block a payer by client_id, card, phone, IP or device fingerprint, for one merchant or every one',
        description:
          'A blocked client_id makes the create answer 503 PAY_004 as if no requisites were available; a blocked IP or device makes the payment page show the payment as unavailable and cancels it; a payout to a blocked card or phone is refused as bad requisites are (PAY_002). Cards and phones are kept as keyed hashes. Give `value`, or `payment_id` / `dispute_id` to take the mark from a payment.',
        body: BlockBody,
        errors: { NOT_FOUND: 'The payment, dispute or merchant named does not exist' },
      },
    },
    async (request, reply) => {
      const row = await risk.createBlock(ctx, actorOf(request).name, request.body, auditFor(request));
      return reply.status(201).send(risk.toBlock(row));
    },
  );

  app.get(
    '/risk/blocks',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: BlockListAnswer },
        tags,
        summary: 'Blocks, newest first, by kind, merchant and whether they hold now',
        querystring: BlockListQuery,
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const active = request.query.active === undefined ? undefined : request.query.active === 'true';
      const { rows, total } = await risk.listBlocks(ctx, { kind: request.query.kind, merchantId: request.query.merchant_id, active, ...page });
      return { blocks: rows.map(risk.toBlock), total, ...page };
    },
  );

  app.delete(
    '/risk/blocks/:id',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'Remove a block: it stops holding at once (kept, with who removed it)',
        params: Type.Object({ id: Type.String() }),
      },
    },
    async (request, reply) => {
      await risk.removeBlock(ctx, actorOf(request).name, request.params.id, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.get(
    '/risk/limits',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: LimitListAnswer }, tags, summary: 'The velocity limits set (one per scope)' } },
    async () => ({ limits: (await risk.listLimits(ctx)).map(risk.toLimit) }),
  );

  app.put(
    '/risk/limits',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: LimitAnswer },
        tags,
        summary: 'Set the velocity limit per client_id (or per payer IP with scope "ip"); a later PUT replaces it',
        description:
          'A sliding window of window_seconds: a create whose client_id already has max_payments payments (or max_amount in the order currency) in the window answers 503 PAY_004 as if no requisites were available. Counted in PostgreSQL, shared by every instance. Creates without a client_id are not counted.',
        body: LimitBody,
      },
    },
    async (request) => risk.toLimit(await risk.putLimit(ctx, actorOf(request).name, request.body as risk.LimitInput, auditFor(request))),
  );

  app.delete(
    '/risk/limits',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'Clear the velocity limit of a scope (default client_id)',
        querystring: Type.Object({ scope: Type.Optional(Scope) }),
      },
    },
    async (request, reply) => {
      const scope = request.query.scope ?? 'client_id';
      if (scope !== 'client_id' && scope !== 'ip') throw new DomainError('VALIDATION', 'scope must be client_id or ip');
      await risk.clearLimit(ctx, scope, auditFor(request));
      return reply.status(204).send();
    },
  );
}

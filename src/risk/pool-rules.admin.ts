import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import * as service from './pool-rules.service.js';

const tags = ['operator'];

const ClassesBody = Type.Object(
  {
    returning_from: Type.Integer({ description: 'completed payments with the merchant from which a payer is returning (default 1)' }),
    trusted_from: Type.Integer({ description: 'completed payments with the merchant from which a payer is trusted (default 10); above returning_from' }),
  },
  { additionalProperties: false },
);
const ClassesAnswer = Type.Object({
  returning_from: Type.Integer(),
  trusted_from: Type.Integer(),
  updated_at: Type.String({ format: 'date-time' }),
});

const Limit = (what: string) =>
  Type.Union(
    [
      Type.Object(
        { max: Type.Number({ description: what }), window_seconds: Type.Integer({ description: 'the sliding window: the last this many seconds (1–86400)' }) },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    { description: 'null or absent: no such limit' },
  );
const VelocityBody = Type.Object(
  {
    payments: Type.Optional(Limit('most hand-outs of one requisite in the window')),
    amount: Type.Optional(Limit('most one requisite may be handed out for in the window, in its own currency (what payers pay)')),
  },
  { additionalProperties: false },
);
const VelocityAnswer = Type.Object({
  payments: Type.Union([Type.Object({ max: Type.Integer(), window_seconds: Type.Integer() }), Type.Null()]),
  amount: Type.Union([Type.Object({ max: Type.Number(), window_seconds: Type.Integer() }), Type.Null()]),
  updated_at: Type.String({ format: 'date-time' }),
});

/**
 * The pool's risk rules (issue 36 items 3 and 2; docs/risk-classes.md): the payers' traffic
 * class thresholds, and the requisite velocity.
 */
export async function poolRulesAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/risk/classes',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: ClassesAnswer }, tags, summary: "The payers' traffic class thresholds" } },
    async () => service.toClasses(await service.getPoolRules(ctx)),
  );

  app.put(
    '/risk/classes',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: ClassesAnswer },
        tags,
        summary:
          "Set the payers' traffic class thresholds: fewer than returning_from completed payments with the merchant is new, from trusted_from on trusted, returning between",
        body: ClassesBody,
        errors: { VALIDATION: 'A threshold out of range, or trusted_from not above returning_from' },
      },
    },
    async (request) => service.toClasses(await service.setClasses(ctx, request.body, auditFor(request))),
  );

  app.get(
    '/risk/requisite-limits',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: VelocityAnswer }, tags, summary: 'The requisite velocity: hand-outs and amount per requisite in sliding windows' },
    },
    async () => service.toRequisiteVelocity(await service.getPoolRules(ctx)),
  );

  app.put(
    '/risk/requisite-limits',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: VelocityAnswer },
        tags,
        summary:
          'Set the requisite velocity (replaces it): each requisite at most payments.max hand-outs and amount.max in their sliding windows; the cascade passes a requisite past it over',
        body: VelocityBody,
        errors: { VALIDATION: 'A limit or a window out of range' },
      },
    },
    async (request) => service.toRequisiteVelocity(await service.setRequisiteVelocity(ctx, request.body, auditFor(request))),
  );
}

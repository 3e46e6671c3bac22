import { Type } from 'typebox';
import { audit, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import { rateSettingRoutes } from '../rates/rates.admin.js';
import { effectiveRates } from '../rates/rates.repo.js';
import { listSettings, parseCurrency, removeTerminalSetting, toEffective, toRate } from '../rates/rates.service.js';
import {
  AdminCreateTerminalAdjustmentAnswer,
  AdminGetTerminalStatementAnswer,
  AdminListTerminalRatesAnswer,
  AdminRotateTerminalApiKeyAnswer,
  NoContent,
} from './terminals.admin.answers.js';
import { AdjustmentBody, AdminTerminal, RotateBody, toAdminTerminal, UpdateTerminalBody } from './terminals.schemas.js';
import * as service from './terminals.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const RateParams = Type.Object({ id: Type.String({ format: 'uuid' }), currency: Type.String() });

/** Operator API for terminals: settings, keys, balance adjustments and the terminal's own rates. */
export async function terminalAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/terminals/:id',
    {
      config: { access: 'support' },
      schema: { tags, summary: 'Get a terminal with its balances, fees and settings', params: IdParams, response: { 200: AdminTerminal } },
    },
    async (request) => toAdminTerminal(await service.getTerminal(ctx, request.params.id)),
  );

  app.get(
    '/terminals/:id/statement',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminGetTerminalStatementAnswer },
        tags,
        summary: "A terminal's statement: its ledger postings, newest first, with the balance after each",
        params: IdParams,
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
      },
    },
    async (request) => service.terminalStatement(ctx, request.params.id, parseListQuery(request.query, 'VALIDATION')),
  );

  app.patch(
    '/terminals/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags,
        summary: 'Change a terminal: name, on or off, fees, return URL',
        description: 'A terminal switched off answers requests signed with its API key with `403 AUTH_003`.',
        params: IdParams,
        body: UpdateTerminalBody,
        response: { 200: AdminTerminal },
        errors: { VALIDATION: 'Invalid parameters: the message names the field (a fee out of range, `return_url` not an absolute http(s) URL)' },
      },
    },
    async (request) => {
      return toAdminTerminal(await service.updateTerminal(ctx, request.params.id, request.body, auditFor(request)));
    },
  );

  app.post(
    '/terminals/:id/api-key/rotate',
    {
      config: { secret: true, access: 'admin', confirm: true },
      schema: {
        documentedResponse: { 200: AdminRotateTerminalApiKeyAnswer },
        tags,
        summary: "Rotate a terminal's API key: the new key is shown once; the old one works for grace_seconds more",
        params: IdParams,
        body: RotateBody,
      },
    },
    async (request) => {
      const grace = request.body.grace_seconds ?? 0;
      const rotated = await service.rotateApiKey(ctx, request.params.id, grace, auditFor(request));
      return { id: request.params.id, ...rotated };
    },
  );

  app.post(
    '/terminals/:id/adjustments',
    {
      config: { access: 'finance', confirm: true, idempotencyKey: true },
      schema: {
        documentedResponse: { 201: AdminCreateTerminalAdjustmentAnswer },
        tags,
        summary: "Credit or debit a terminal's available balance by hand, with a reason",
        description:
          'Moves money: one posting between the terminal and the system adjustments account, with `reason` as its memo, in the audit log. A debit may not take the available balance below zero.',
        params: IdParams,
        body: AdjustmentBody,
        errors: { VALIDATION: 'Invalid parameters: `amount` zero or not a USDT amount, or a debit larger than the available balance (`data.available`)' },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const after = await service.adjustBalance(
        ctx,
        request.params.id,
        body,
        (tx, before, adjusted) =>
          audit(
            tx,
            request,
            'terminal.adjust_balance',
            'terminal',
            adjusted.id,
            { balance: before.balance, balance_frozen: before.balance_frozen },
            { balance: adjusted.balance, balance_frozen: adjusted.balance_frozen, amount: body.amount, reason: body.reason },
          ),
        request.idempotency?.requestId,
      );
      return reply.status(201).send({ balance: Number(after.balance), balance_frozen: Number(after.balance_frozen) });
    },
  );

  app.get(
    '/terminals/:id/rates',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListTerminalRatesAnswer },
        tags,
        summary: "A terminal's own USDT rate settings (they take precedence over the currency's), and the rates it prices with",
        params: IdParams,
      },
    },
    async (request) => {
      await service.getTerminal(ctx, request.params.id);
      const [own, effective] = await Promise.all([listSettings(ctx, request.params.id), effectiveRates(ctx.db, request.params.id, null)]);
      return {
        rates: own.map((r) => ({ terminal_id: request.params.id, ...toRate(r) })),
        effective: effective.map(toEffective),
      };
    },
  );

  rateSettingRoutes(app, ctx, {
    prefix: '/terminals/:id/rates/:currency',
    params: RateParams,
    what: "a terminal's own USDT rate",
    scopeOf: async (request) => {
      const params = request.params as { id: string; currency: string };
      await service.getTerminal(ctx, params.id);
      return { terminalId: params.id, currency: parseCurrency(params.currency) };
    },
    answer: (setting, scope) => ({ terminal_id: scope.terminalId, ...setting }),
  });

  app.delete(
    '/terminals/:id/rates/:currency',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 204: NoContent },
        tags,
        summary: 'Remove a terminal’s own rate: the currency’s rate applies again',
        params: RateParams,
        errors: {
          NOT_FOUND: 'The terminal has no rate of its own in this currency (or there is no such terminal)',
          VALIDATION: 'Not a currency Kassir prices',
        },
      },
    },
    async (request, reply) => {
      await removeTerminalSetting(ctx, request.params.id, parseCurrency(request.params.currency), auditFor(request));
      return reply.status(204).send();
    },
  );
}

import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { listMerchantTerminals } from '../terminals/terminals.repo.js';
import { AdminTerminal, CreateTerminalBody, RotateBody, toAdminTerminal } from '../terminals/terminals.schemas.js';
import * as terminals from '../terminals/terminals.service.js';
import {
  AdminCreateMerchantAnswer,
  AdminGetMerchantAnswer,
  AdminListMerchantsAnswer,
  AdminListMerchantTerminalsAnswer,
  AdminRotateMerchantSecretKeyAnswer,
} from './merchants.admin.answers.js';
import * as merchants from './merchants.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const CreateMerchantBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) });

/** Operator API for merchants and their secrets (DESIGN.md "The operator side"). */
export async function merchantAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/merchants',
    {
      config: { secret: true, access: 'admin' },
      schema: {
        documentedResponse: { 201: AdminCreateMerchantAnswer },
        tags,
        summary: 'Create a merchant; its secret key is shown once',
        body: CreateMerchantBody,
      },
    },
    async (request, reply) => {
      const { name } = request.body;
      const merchant = await merchants.createMerchant(ctx, name, auditFor(request));
      return reply.status(201).send({ id: merchant.id, name: merchant.name, secret_key: merchant.secret_key, created_at: merchant.created_at });
    },
  );

  app.get(
    '/merchants',
    { config: { access: 'support' }, schema: { documentedResponse: { 200: AdminListMerchantsAnswer }, tags, summary: 'List merchants' } },
    async () => ({
      merchants: await merchants.listMerchants(ctx),
    }),
  );

  app.get(
    '/merchants/:id',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminGetMerchantAnswer }, tags, summary: 'Get a merchant with its terminals', params: IdParams },
    },
    async (request) => {
      const merchant = await merchants.getMerchant(ctx, request.params.id);
      const rows = await listMerchantTerminals(ctx.db, merchant.id);
      return { ...merchant, terminals: rows.map((row) => toAdminTerminal(row)) };
    },
  );

  app.post(
    '/merchants/:id/secret-key/rotate',
    {
      config: { secret: true, access: 'admin', confirm: true },
      schema: {
        documentedResponse: { 200: AdminRotateMerchantSecretKeyAnswer },
        tags,
        summary: "Rotate a merchant's secret key: the new one is shown once; the old one signs for grace_seconds more",
        description: 'Every terminal of the merchant signs with the new key; with `grace_seconds` 0 the old one stops at once.',
        params: IdParams,
        body: RotateBody,
      },
    },
    async (request) => {
      const grace = request.body.grace_seconds ?? 0;
      const rotated = await merchants.rotateSecret(ctx, request.params.id, grace, auditFor(request));
      return { id: request.params.id, ...rotated };
    },
  );

  app.post(
    '/merchants/:id/terminals',
    {
      config: { secret: true, access: 'admin' },
      schema: {
        tags,
        summary: 'Create a terminal for a merchant; its API key is shown once',
        params: IdParams,
        body: CreateTerminalBody,
        response: { 201: AdminTerminal },
      },
    },
    async (request, reply) => {
      const merchant = await merchants.getMerchant(ctx, request.params.id);
      const { terminal, apiKey } = await terminals.createTerminal(ctx, merchant, request.body, auditFor(request));
      return reply.status(201).send({ ...toAdminTerminal(terminal), api_key: apiKey });
    },
  );

  app.get(
    '/merchants/:id/terminals',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminListMerchantTerminalsAnswer }, tags, summary: "A merchant's terminals", params: IdParams },
    },
    async (request) => {
      await merchants.getMerchant(ctx, request.params.id);
      return { terminals: (await listMerchantTerminals(ctx.db, request.params.id)).map((row) => toAdminTerminal(row)) };
    },
  );
}

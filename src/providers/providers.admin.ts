import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { getTerminal } from '../terminals/terminals.service.js';
import {
  AdminCreateProviderAnswer,
  AdminListProvidersAnswer,
  AdminListTerminalRoutesAnswer,
  AdminSetTerminalRoutesAnswer,
  AdminUpdateProviderAnswer,
} from './providers.admin.answers.js';
import { listProviders, terminalRoutes } from './providers.repo.js';
import { callbackUrl, createProvider, providerView, routeView, setRoutes, updateProvider } from './providers.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  kind: Type.String({ description: 'kassir: a provider speaking the Kassir merchant API' }),
  base_url: Type.String({ maxLength: 2048 }),
  api_key: Type.String({ minLength: 1, maxLength: 500, description: 'our terminal API key at the provider' }),
  secret_key: Type.String({ minLength: 1, maxLength: 500, description: 'our Secret Key at the provider' }),
});
const UpdateBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  base_url: Type.Optional(Type.String({ maxLength: 2048 })),
  api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  secret_key: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  is_active: Type.Optional(Type.Boolean()),
});
const Route = Type.Object({
  executors: Type.Optional(Type.Boolean()),
  provider_id: Type.Optional(Type.String()),
  currencies: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z]{3}$' }))),
  methods: Type.Optional(Type.Array(Type.String({ maxLength: 32 }))),
});

/** Operator API for upstream providers and the terminals' routes (DESIGN.md operator table). */
export async function providerAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/providers',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 201: AdminCreateProviderAnswer },
        tags,
        summary: 'Add an upstream provider (a service speaking the Kassir merchant API); answers its callback URL',
        body: CreateBody,
        errors: { VALIDATION: 'Invalid parameters: the message names the field (`kind` not `kassir`, `base_url` not an absolute http(s) URL)' },
      },
    },
    async (request, reply) => {
      const provider = await createProvider(ctx, request.body, auditFor(request));
      const { id, name, kind } = provider;
      return reply.status(201).send({ id, name, kind, callback_url: callbackUrl(ctx, id) });
    },
  );

  app.get(
    '/providers',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 200: AdminListProvidersAnswer }, tags, summary: 'List providers with their callback URL and circuit breaker' },
    },
    async () => ({
      providers: (await listProviders(ctx.db)).map((p) => providerView(ctx, p)),
    }),
  );

  app.patch(
    '/providers/:id',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: AdminUpdateProviderAnswer },
        tags,
        summary: 'Change a provider: name, address, keys, on or off',
        params: IdParams,
        body: UpdateBody,
      },
    },
    async (request) => {
      return providerView(ctx, await updateProvider(ctx, request.params.id, request.body, auditFor(request)));
    },
  );

  app.get(
    '/terminals/:id/routes',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListTerminalRoutesAnswer },
        tags,
        summary: "A terminal's routes, in order: executors or a provider, for which currencies and methods",
        params: IdParams,
      },
    },
    async (request) => {
      await getTerminal(ctx, request.params.id);
      return (await terminalRoutes(ctx.db, request.params.id)).map(routeView);
    },
  );

  app.put(
    '/terminals/:id/routes',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: AdminSetTerminalRoutesAnswer },
        tags,
        summary: "Replace a terminal's routes",
        description:
          'Each route is `{"executors": true}` or `{"provider_id": …}`, optionally only for some `currencies` and `methods` (`PAYOUT` for payouts). A payment or payout tries the routes that serve it in this order; with none, the executors serve everything.',
        params: IdParams,
        body: Type.Array(Route, { maxItems: 20 }),
        errors: {
          VALIDATION: 'Invalid parameters: the message names the route (neither executors nor a provider, an unknown provider, currency or method)',
        },
      },
    },
    async (request) => {
      await getTerminal(ctx, request.params.id);
      return setRoutes(ctx, request.params.id, request.body, auditFor(request));
    },
  );
}

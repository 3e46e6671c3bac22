import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { AdminBank, BankDirectory, CreateBankBody, toAdminBank, UpdateBankBody } from './banks.schemas.js';
import * as service from './banks.service.js';

/** `GET /v1/public/banks`: the public directory, no authentication (spec "Endpoints"). */
export async function bankRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/public/banks',
    {
      schema: {
        tags: ['directory'],
        summary: 'Bank and operator directory (public)',
        description:
          'Public: no authentication, no signature. The active banks and mobile operators, sorted by name: `code` is what `bank` takes in `POST /v1/payments` (an operator code for CROSS_BORDER_SIM), `name` the display name.',
        security: [],
        response: {
          200: {
            ...BankDirectory,
            description: 'The directory',
            'x-examples': {
              directory: {
                summary: 'A few entries',
                value: {
                  banks: [
                    { code: 'alfabank', name: 'Альфа-Банк' },
                    { code: 'sberbank', name: 'Сбербанк' },
                    { code: 'tinkoff', name: 'Т-Банк' },
                  ],
                },
              },
            },
          },
        },
        errors: {},
      },
    },
    async () => ({ banks: await service.publicDirectory(ctx) }),
  );
}

/** Operator side of the directory: every entry, and edits (the directory is operator-editable). */
export async function bankAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/banks',
    {
      config: { access: 'support' },
      schema: {
        tags: ['operator'],
        summary: 'The whole bank and operator directory, entries switched off included',
        response: { 200: Type.Object({ banks: Type.Array(AdminBank) }) },
      },
    },
    async () => ({
      banks: (await service.listAllBanks(ctx)).map(toAdminBank),
    }),
  );

  app.post(
    '/banks',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['operator'],
        summary: 'Add a bank or mobile operator to the directory',
        body: CreateBankBody,
        response: { 201: AdminBank },
        errors: { CONFLICT: 'A directory entry with this `code` already exists: change it with `PATCH /admin/v1/banks/{code}`' },
      },
    },
    async (request, reply) => {
      const bank = await service.createBank(ctx, request.body, auditFor(request));
      return reply.status(201).send(toAdminBank(bank));
    },
  );

  app.patch(
    '/banks/:code',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['operator'],
        summary: 'Change a directory entry: name, country, kind, on or off, its mobile operator',
        params: Type.Object({ code: Type.String() }),
        body: UpdateBankBody,
        response: { 200: AdminBank },
        errors: {
          VALIDATION:
            'Invalid parameters: the message names the field (an `operator_code` that is not a mobile operator of the country, or set on an operator)',
        },
      },
    },
    async (request) => {
      return toAdminBank(await service.updateBank(ctx, request.params.code, request.body, auditFor(request)));
    },
  );
}

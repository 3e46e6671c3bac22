import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import type { PersonActor } from '../lib/actor.js';
import { NoContent, TelegramLinkAnswer, TelegramStatusAnswer } from './telegram.answers.js';
import * as telegram from './telegram.service.js';

const tags = ['telegram'];
const SettingsBody = Type.Object(
  {
    language: Type.Optional(Type.Union([Type.Literal('ru'), Type.Literal('en')])),
    switches: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z_]{1,64}$' }), Type.Boolean(), { description: '{kind: on or off}' })),
  },
  { additionalProperties: false },
);

/** The signed-in person of a request: Telegram links people, so an executor's machine token cannot. */
function personOf(request: FastifyRequest): PersonActor {
  const actor = request.actor;
  if (actor?.kind !== 'user') throw new DomainError('AUTH_003', 'A Telegram chat is linked to a person: sign in to the cabinet (POST /auth/v1/login)');
  return actor;
}

/**
 * The signed-in person's own Telegram link (issue 37 item 1), the same routes under each
 * audience's prefix: /executor/v1 (the executor cabinet), /auth/v1 (staff), /merchant/v1 (the
 * merchant cabinet). Each reaches only the person's own link; changes are audited as theirs.
 */
export function telegramRoutes(audience: 'executor' | 'staff' | 'merchant') {
  // The people's group declares who may call each route; the cabinets' groups are one audience.
  const config: FastifyContextConfig = audience === 'staff' ? { access: 'person' } : {};
  return async (app: RouteApp, ctx: AppContext): Promise<void> => {
    app.post(
      '/telegram/link',
      {
        config: { ...config, secret: true },
        schema: {
          documentedResponse: { 201: TelegramLinkAnswer },
          tags,
          summary: 'A one-time code linking your Telegram chat: open the link (or scan the QR code) and press Start',
          description: 'The bot links the chat that sends `/start <code>` to you; the code is good once, for 10 minutes, and a newer one retires it.',
          errors: { TELEGRAM_OFF: 'The operator has not set TELEGRAM_BOT_TOKEN', UNAVAILABLE: 'Telegram does not answer right now' },
        },
      },
      async (request, reply) => reply.status(201).send(await telegram.createLinkCode(ctx, personOf(request), auditFor(request))),
    );

    app.get(
      '/telegram',
      { config, schema: { documentedResponse: { 200: TelegramStatusAnswer }, tags, summary: 'Your Telegram link, message language and switches' } },
      async (request) => telegram.telegramStatus(ctx, personOf(request)),
    );

    app.patch(
      '/telegram',
      {
        config,
        schema: {
          documentedResponse: { 200: TelegramStatusAnswer },
          tags,
          summary: 'Change the language of your messages, or switch kinds of message on and off',
          body: SettingsBody,
          errors: { VALIDATION: 'A kind your role is never sent', CONFLICT: 'A language with no chat linked' },
        },
      },
      async (request) => telegram.updateTelegramSettings(ctx, personOf(request), request.body, auditFor(request)),
    );

    app.delete(
      '/telegram',
      { config, schema: { documentedResponse: { 204: NoContent }, tags, summary: 'Unlink your Telegram chat: no more messages there' } },
      async (request, reply) => {
        await telegram.unlinkTelegram(ctx, personOf(request), auditFor(request));
        return reply.status(204).send();
      },
    );
  };
}

import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import * as messages from '../incoming/messages.service.js';
import { parseListQuery } from '../lib/pagination.js';
import {
  ExecutorCreateDeviceAnswer,
  ExecutorLinkDeviceMessageAnswer,
  ExecutorListDeviceMessagesAnswer,
  ExecutorListDevicesAnswer,
  ExecutorListMessagePaymentsAnswer,
  ExecutorListPendingPaymentsAnswer,
  ExecutorReceivedTodayAnswer,
  ExecutorSetAsideDeviceMessageAnswer,
  ExecutorSetDeviceSilenceAnswer,
  NoContent,
} from './devices.executor.answers.js';
import { LinkMessageBody, linkMessageErrors } from './devices.schemas.js';
import * as devices from './devices.service.js';

const tags = ['executor'];
const IdParams = Type.Object({ id: Type.String() });
const ListQuery = Type.Object({ status: Type.Optional(Type.String()), limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) });

/** An executor's own phones and the messages they sent; each change is audited as the executor's act. */
export async function deviceExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/devices',
    {
      config: { secret: true, confirm: true },
      schema: {
        documentedResponse: { 201: ExecutorCreateDeviceAnswer },
        tags,
        summary: 'Register a phone; its token is shown once',
        description:
          'From the cabinet (a session) the executor must have confirmed it is them in the last five minutes (`POST /auth/v1/confirm`), else `403 AUTH_004`: a stolen session cannot attach a phone that completes payments.',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
      },
    },
    async (request, reply) => {
      const { device, token, signingSecret } = await devices.registerDevice(ctx, request.executor!.id, request.body.name, auditFor(request));
      return reply
        .status(201)
        .send({ ...devices.toDevice(device), token, signing_secret: signingSecret, forwarder_urls: devices.forwarderUrls(ctx.config.publicBaseUrl, token) });
    },
  );

  app.get(
    '/devices',
    { schema: { documentedResponse: { 200: ExecutorListDevicesAnswer }, tags, summary: 'Your phones, with when each was last heard from' } },
    async (request) => ({
      devices: (await devices.listDevices(ctx, request.executor!.id)).map(devices.toDevice),
    }),
  );

  app.delete(
    '/devices/:id',
    { schema: { documentedResponse: { 204: NoContent }, tags, summary: 'Revoke a phone: its token stops working at once', params: IdParams } },
    async (request, reply) => {
      await devices.revokeDevice(ctx, request.executor!.id, request.params.id, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.put(
    '/device-silence',
    {
      schema: {
        documentedResponse: { 200: ExecutorSetDeviceSilenceAnswer },
        tags,
        summary: 'How long your phones may be silent before your requisites leave the cascade (null: never)',
        body: Type.Object({ minutes: Type.Union([Type.Integer({ minimum: 1, maximum: 10080 }), Type.Null()]) }),
      },
    },
    async (request) => {
      await devices.setSilence(ctx, request.executor!.id, request.body.minutes, auditFor(request));
      return { device_silence_minutes: request.body.minutes };
    },
  );

  app.get(
    '/payments/pending',
    {
      schema: { documentedResponse: { 200: ExecutorListPendingPaymentsAnswer }, tags, summary: 'Payments waiting on your requisites, soonest to expire first' },
    },
    async (request) => ({
      payments: await devices.pendingPayments(ctx, request.executor!.id),
    }),
  );

  app.get(
    '/payments/received-today',
    {
      schema: {
        documentedResponse: { 200: ExecutorReceivedTodayAnswer },
        tags,
        summary: 'The money your cards received today (UTC): completed payments, per currency',
      },
    },
    async (request) => devices.receivedToday(ctx, request.executor!.id),
  );

  app.get(
    '/device-messages',
    {
      schema: {
        documentedResponse: { 200: ExecutorListDeviceMessagesAnswer },
        tags,
        summary: 'Bank messages your phones sent, newest first, by status (`waiting`: every one that waits for you)',
        querystring: ListQuery,
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const { rows, total } = await messages.listMessages(ctx, { executorId: request.executor!.id, status: request.query.status, ...page });
      return { messages: rows.map(messages.toMessage), total, ...page };
    },
  );

  app.get(
    '/device-messages/:id/payments',
    {
      schema: {
        documentedResponse: { 200: ExecutorListMessagePaymentsAnswer },
        tags,
        summary: 'Your PENDING payments a waiting message of yours may be linked to',
        description:
          'Of the amount the message reports (every one when it reports none), on its requisite when it was matched to one; those whose card or phone ends in the digits the text names first. Empty for a message that no longer waits.',
        params: IdParams,
        errors: { NOT_FOUND: 'No message with this id among yours' },
      },
    },
    async (request) => ({ payments: await messages.candidatesForMessage(ctx, request.executor!.id, request.params.id) }),
  );

  app.post(
    '/device-messages/:id/link',
    {
      schema: {
        documentedResponse: { 200: ExecutorLinkDeviceMessageAnswer },
        tags,
        summary: 'Link a message that waits for a person to the PENDING payment it is for',
        description:
          'Moves money as a matched message would have: the payment becomes COMPLETED and the merchant’s terminal is credited. The payment must be on one of your requisites, for the amount the message reports.',
        params: IdParams,
        body: LinkMessageBody,
        errors: linkMessageErrors('No message with this id among yours', true),
      },
    },
    async (request) => messages.toMessage(await messages.linkMessage(ctx, request.executor!.id, request.params.id, request.body.payment_id, auditFor(request))),
  );

  app.post(
    '/device-messages/:id/set-aside',
    {
      schema: {
        documentedResponse: { 200: ExecutorSetAsideDeviceMessageAnswer },
        tags,
        summary: 'Set aside a message of yours that waits for you (not a payment, or handled already), with the reason',
        params: IdParams,
        body: Type.Object({ note: Type.String({ minLength: 1, maxLength: 1000 }) }),
        errors: {
          NOT_FOUND: 'No message with this id among yours',
          CONFLICT: 'The message does not wait for a person (it is matched, ignored or resolved), or its notification was handled already',
        },
      },
    },
    async (request) => messages.toMessage(await messages.setAsideMessage(ctx, request.executor!.id, request.params.id, request.body.note, auditFor(request))),
  );
}

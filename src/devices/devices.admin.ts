import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import * as messages from '../incoming/messages.service.js';
import { parseListQuery } from '../lib/pagination.js';
import {
  AdminCreateExecutorDeviceAnswer,
  AdminLinkDeviceMessageAnswer,
  AdminListDeviceMessagesAnswer,
  AdminListExecutorDevicesAnswer,
  AdminSetAsideDeviceMessageAnswer,
  AdminSetExecutorDeviceSilenceAnswer,
  NoContent,
} from './devices.admin.answers.js';
import { AdminLinkMessageBody, adminLinkRef, linkMessageErrors } from './devices.schemas.js';
import * as devices from './devices.service.js';

const tags = ['operator'];
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const DeviceParams = Type.Object({ id: Type.String({ format: 'uuid' }), deviceId: Type.String() });
const MessageParams = Type.Object({ id: Type.String() });
const ListQuery = Type.Object({
  executor_id: Type.Optional(Type.String({ format: 'uuid' })),
  status: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
});

/** Operator API for executors' phones and the messages they sent. */
export async function deviceAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/executors/:id/devices',
    {
      config: { secret: true, access: 'admin' },
      schema: {
        documentedResponse: { 201: AdminCreateExecutorDeviceAnswer },
        tags,
        summary: 'Register a phone for an executor; its token is shown once',
        params: IdParams,
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }),
      },
    },
    async (request, reply) => {
      const { device, token, signingSecret } = await devices.registerDevice(ctx, request.params.id, request.body.name, auditFor(request));
      return reply
        .status(201)
        .send({ ...devices.toDevice(device), token, signing_secret: signingSecret, forwarder_urls: devices.forwarderUrls(ctx.config.publicBaseUrl, token) });
    },
  );

  app.put(
    '/executors/:id/device-silence',
    {
      config: { access: 'admin' },
      schema: {
        documentedResponse: { 200: AdminSetExecutorDeviceSilenceAnswer },
        tags,
        summary: "How long the executor's phones may be silent before its requisites leave the cascade (null: never)",
        params: IdParams,
        body: Type.Object({ minutes: Type.Union([Type.Integer({ minimum: 1, maximum: 10080 }), Type.Null()]) }),
      },
    },
    async (request) => {
      await devices.setSilence(ctx, request.params.id, request.body.minutes, auditFor(request));
      return { device_silence_minutes: request.body.minutes };
    },
  );

  app.get(
    '/executors/:id/devices',
    {
      config: { access: 'support' },
      // The list of an unknown executor is empty: the id is not looked up.
      schema: {
        documentedResponse: { 200: AdminListExecutorDevicesAnswer },
        tags,
        summary: "An executor's phones, with when each was last heard from",
        params: IdParams,
        errors: { NOT_FOUND: false },
      },
    },
    async (request) => ({
      devices: (await devices.listDevices(ctx, request.params.id)).map(devices.toDevice),
    }),
  );

  app.delete(
    '/executors/:id/devices/:deviceId',
    {
      config: { access: 'support' },
      schema: { documentedResponse: { 204: NoContent }, tags, summary: "Revoke an executor's phone: its token stops working at once", params: DeviceParams },
    },
    async (request, reply) => {
      await devices.revokeDevice(ctx, request.params.id, request.params.deviceId, auditFor(request));
      return reply.status(204).send();
    },
  );

  app.get(
    '/device-messages',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminListDeviceMessagesAnswer },
        tags,
        summary: "Bank messages executors' phones sent, newest first, by executor and status",
        querystring: ListQuery,
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      const { rows, total } = await messages.listMessages(ctx, { executorId: request.query.executor_id, status: request.query.status, ...page });
      return { messages: rows.map(messages.toMessage), total, ...page };
    },
  );

  app.post(
    '/device-messages/:id/link',
    {
      config: { access: 'support', idempotencyKey: true },
      schema: {
        documentedResponse: { 200: AdminLinkDeviceMessageAnswer },
        tags,
        summary: 'Link a message that waits for a person to the PENDING payment it is for: the payment completes',
        description:
          'The payment is named by its id (`payment_id`) or by the merchant’s order id (`ext_id`; with `merchant_id` or `terminal_id` when two merchants use the same one). Moves money as a matched message would have: the payment becomes COMPLETED and the merchant’s terminal is credited. The payment must be on a requisite of the executor whose phone sent the message, for the amount the message reports.',
        params: MessageParams,
        body: AdminLinkMessageBody,
        errors: linkMessageErrors('No message with this id'),
      },
    },
    async (request) => messages.toMessage(await messages.linkMessage(ctx, null, request.params.id, adminLinkRef(request.body), auditFor(request))),
  );

  app.post(
    '/device-messages/:id/set-aside',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminSetAsideDeviceMessageAnswer },
        tags,
        summary: 'Set aside a message that waits for a person (an unmatched one with its notification), with a note',
        params: MessageParams,
        body: Type.Object({ note: Type.String({ minLength: 1, maxLength: 1000 }) }),
        errors: { CONFLICT: 'The message does not wait for a person (it is matched, ignored or resolved), or its notification was handled already' },
      },
    },
    async (request) => messages.toMessage(await messages.setAsideMessage(ctx, null, request.params.id, request.body.note, auditFor(request))),
  );
}

import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { DeviceSendMessageAnswer, NoContent } from './devices.device.answers.js';
import * as devices from './devices.service.js';

const tags = ['device'];
const State = {
  battery: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'battery percent' })),
  app_version: Type.Optional(Type.String({ maxLength: 100 })),
};
const MessageBody = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 4000, description: 'the SMS or push notification as the bank sent it' }),
  sender: Type.Optional(Type.String({ maxLength: 200, description: "the SMS sender id ('900', 'Tinkoff') or the app's package or title" })),
  received_at: Type.Optional(Type.String({ description: 'when the phone received it, ISO 8601' })),
  ...State,
});

/** The device API: what an executor's phone sends (DESIGN.md "Devices (contract)"). */
export async function deviceRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/messages',
    {
      schema: {
        documentedResponse: { 200: DeviceSendMessageAnswer },
        tags,
        summary: 'A bank message the phone received: matched to a requisite and a payment, or kept for a person',
        description:
          'Moves money: a message that reads with certainty as an incoming transfer on one of the executor’s requisites completes the PENDING payment of that amount there, as `POST /executor/v1/notifications` does; anything else waits for a person (`status`, `reason`). A repeat answers as the first did (`duplicate`).',
        body: MessageBody,
      },
    },
    async (request) => devices.receiveMessage(ctx, request.device!, request.body, auditFor(request)),
  );

  app.post(
    '/heartbeat',
    { schema: { documentedResponse: { 204: NoContent }, tags, summary: 'The phone is alive (and its battery and app version)', body: Type.Object(State) } },
    async (request, reply) => {
      await devices.heartbeat(ctx, request.device!, request.body ?? {});
      return reply.status(204).send();
    },
  );
}

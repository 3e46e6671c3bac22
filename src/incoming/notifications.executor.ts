import { Type } from 'typebox';
import { auditActorOf } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { ExecutorSendNotificationAnswer } from '../executors/executors.executor.answers.js';
import { receiveNotification } from './notifications.service.js';

const tags = ['executor'];
const NotificationBody = Type.Object({
  requisite_id: Type.String({ format: 'uuid' }),
  amount: Type.Optional(Type.Number({ description: 'amount received, in the requisite currency; read from text when absent' })),
  text: Type.Optional(Type.String({ maxLength: 4000, description: 'the notification as the bank sent it (SMS or push)' })),
  received_at: Type.Optional(Type.String({ description: 'when the transfer arrived, ISO 8601' })),
});

/** The executor API: reporting money that arrived on a requisite (the banking-app companion's side). */
export async function incomingExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/notifications',
    {
      schema: {
        documentedResponse: { 200: ExecutorSendNotificationAnswer },
        tags,
        summary: 'Report a transfer that arrived on one of your requisites: the PENDING payment it matches completes',
        description:
          'Moves money: the one PENDING payment on the requisite with this amount becomes COMPLETED and the merchant’s terminal is credited. A repeat answers as the first did (`duplicate`); a transfer that matches nothing is kept for the operator.',
        body: NotificationBody,
        errors: {
          NOT_FOUND: 'The requisite is not one of yours',
          VALIDATION:
            'Invalid parameters: the message names the field (no `amount` and a `text` that is not a recognised incoming transfer, a transfer in another currency than the requisite’s, `received_at` not ISO 8601)',
        },
      },
    },
    async (request) => {
      const result = await receiveNotification(ctx, request.executor!, request.body, auditActorOf(request));
      return result;
    },
  );
}

import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { listRequisites } from '../requisites/requisites.repo.js';
import { Requisite, toRequisite } from '../requisites/requisites.schemas.js';
import { receiveNotification } from './notifications.service.js';

const tags = ['executor'];
const NotificationBody = Type.Object({
  requisite_id: Type.String({ format: 'uuid' }),
  amount: Type.Optional(Type.Number({ description: 'amount received, in the requisite currency; read from text when absent' })),
  text: Type.Optional(Type.String({ maxLength: 4000, description: 'the notification as the bank sent it (SMS or push)' })),
  received_at: Type.Optional(Type.String({ description: 'when the transfer arrived, ISO 8601' })),
});

/** The executor API's own routes (the banking-app companion's side): notifications and requisites. */
export async function executorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post('/notifications', { schema: { tags, body: NotificationBody } }, async (request) => {
    const result = await receiveNotification(ctx, request.executor!, request.body);
    return result;
  });

  app.get('/requisites', { schema: { tags, response: { 200: Type.Object({ requisites: Type.Array(Requisite) }) } } }, async (request) => ({
    requisites: (await listRequisites(ctx.db, { executorId: request.executor!.id })).map((row) => toRequisite(row)),
  }));
}

import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { actorName } from '../lib/actor.js';
import { AdminSettleRiskHitAnswer } from './flags.admin.answers.js';
import { settleFlag, toFlag } from './flags.service.js';

const tags = ['operator'];

/** A person settles a risk flag (issue 36 item 4); the console's Risk screen calls it. */
export async function riskFlagAdminRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.post(
    '/risk/hits/:id/settle',
    {
      config: { access: 'support' },
      schema: {
        documentedResponse: { 200: AdminSettleRiskHitAnswer },
        tags,
        summary: 'Settle a risk flag: a person looked at it',
        description:
          'A flag (a reused receipt or bank reference, a payer name that does not match) waits for a person; settling records who, when and why (`comment`) and is audited. It changes nothing on the payment or dispute. Settling a settled flag answers it as it is. A refusal (`action` refused) is settled when made: 409 `CONFLICT`.',
        params: Type.Object({ id: Type.String({ description: 'the risk hit id (UUID)' }) }),
        body: Type.Optional(Type.Object({ comment: Type.Optional(Type.String({ maxLength: 1000, description: 'why it is settled, in the person’s words' })) })),
        errors: {
          NOT_FOUND: 'No risk hit with this id',
          CONFLICT: 'The hit is a refusal, not a flag',
          VALIDATION: 'Invalid parameters: `comment` longer than 1000 characters',
        },
      },
    },
    async (request) => {
      const comment = request.body?.comment?.trim() || null;
      return toFlag(await settleFlag(ctx, request.params.id, actorName(request.actor), comment, auditFor(request)));
    },
  );
}

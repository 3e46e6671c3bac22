import { Type } from 'typebox';
import { actorOf, auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import { parseListQuery } from '../lib/pagination.js';
import { sendReceiptFile } from '../receipts/receipts.routes.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { ExecutorDispute, ExecutorListDisputesAnswer } from './disputes.executor.answers.js';
import {
  acceptDispute,
  contestDispute,
  executorDisputes,
  getExecutorDispute,
  listExecutorDisputes,
  openContestFile,
  openExecutorDisputeReceipt,
} from './disputes.service.js';

const tags = ['executor'];
const IdParams = Type.Object({ id: Type.String() });
const NOT_FOUND = { NOT_FOUND: 'No dispute with this id on your payments' };
const NOT_OPEN = 'The dispute can no longer be answered (`data.status` is its status): it was decided, cancelled, or you contested it already';

/**
 * The executor's side of disputes (DESIGN.md "Disputes with the executor in them"): the disputes
 * on its own payments, its acceptance (approved exactly as the operator approves) or its contest
 * (to support). Another executor's dispute is "not found". Each answer is audited in the
 * transaction of the change, naming the executor.
 */
export async function disputeExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get(
    '/disputes',
    {
      schema: {
        documentedResponse: { 200: ExecutorListDisputesAnswer },
        tags,
        summary: 'Disputes on your payments: open ones first, nearest deadline first; closed ones stay in the list',
        querystring: Type.Object({ limit: Type.Optional(Type.String()), offset: Type.Optional(Type.String()) }),
      },
    },
    async (request) => {
      const page = parseListQuery(request.query, 'VALIDATION');
      return { disputes: await listExecutorDisputes(ctx, request.executor!.id, page), ...page };
    },
  );

  app.get(
    '/disputes/:id',
    { schema: { documentedResponse: { 200: ExecutorDispute }, tags, summary: 'One dispute on your payments', params: IdParams, errors: NOT_FOUND } },
    async (request) => (await executorDisputes(ctx, [await getExecutorDispute(ctx, request.executor!.id, request.params.id)]))[0],
  );

  app.post(
    '/disputes/:id/accept',
    {
      config: { idempotencyKey: true },
      schema: {
        documentedResponse: { 200: ExecutorDispute },
        tags,
        summary: 'Accept a dispute: the money came. It is approved as the operator approves one',
        description:
          'Moves money: the payment becomes COMPLETED (or COMPLETED_APPEAL when `amount` differs from the order amount), the merchant’s terminal is credited and the value frozen on your deposit when the dispute opened pays for it. `amount` is what you received (default: what the merchant claims); `notification_id` names a late bank message of yours offered in `late_money` instead. Possible while the dispute awaits you, or after its deadline escalated it; not once contested.',
        params: IdParams,
        body: Type.Object({
          amount: Type.Optional(Type.Number({ description: 'the amount you received, in the order currency' })),
          notification_id: Type.Optional(Type.String({ description: 'one of the dispute’s `late_money` messages: “this is the disputed payment”' })),
        }),
        errors: {
          ...NOT_FOUND,
          CONFLICT: NOT_OPEN,
          VALIDATION: 'Invalid parameters: `amount` not a positive amount in the order currency, or `notification_id` not one of the dispute’s `late_money`',
          DEPOSIT_SHORT: 'Your deposit and credit line do not cover the payment (the dispute was uncovered): top the deposit up and try again',
        },
      },
    },
    async (request) => {
      const row = await acceptDispute(ctx, request.executor!.id, request.params.id, request.body ?? {}, auditFor(request), actorOf(request).name);
      return (await executorDisputes(ctx, [row]))[0];
    },
  );

  app.post(
    '/disputes/:id/contest',
    {
      config: { upload: RECEIPT_FILES },
      schema: {
        documentedResponse: { 200: ExecutorDispute },
        tags,
        summary: 'Contest a dispute: the money did not come. Support decides',
        description:
          'JSON `{comment}`, or multipart/form-data with `comment` and a `file` (a screenshot of your bank’s history: png, jpg/jpeg, webp, heic or pdf, up to 10 MB, judged by its content). The dispute becomes `contested`, with support’s own deadline; from then on only a person decides. You can never reject a dispute yourself.',
        params: IdParams,
        consumes: ['application/json', 'multipart/form-data'],
        documentedBody: {
          required: true,
          description: 'the reason, and your bank’s history as a file',
          content: {
            'application/json': { schema: Type.Object({ comment: Type.String({ maxLength: 2000 }) }) },
            'multipart/form-data': {
              schema: Type.Object({
                comment: Type.Optional(Type.String({ maxLength: 2000 })),
                file: Type.Optional(
                  Type.String({
                    contentMediaType: 'application/octet-stream',
                    description: 'your bank’s history (also accepted as `receipt`, `attachment` or `proof`)',
                  }),
                ),
              }),
            },
          },
        },
        errors: {
          ...NOT_FOUND,
          CONFLICT: NOT_OPEN,
          VALIDATION: 'Neither a comment nor a file, or a comment over 2000 characters',
          PAY_002: 'The file came in another field, or more than one file was sent',
          PAY_009: 'The file is larger than 10 MB',
          PAY_010: 'The file is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => {
      const row = await contestDispute(ctx, request.executor!.id, request.params.id, await request.readUpload(), auditFor(request));
      return (await executorDisputes(ctx, [row]))[0];
    },
  );

  app.get(
    '/disputes/:id/receipt',
    {
      schema: {
        tags,
        summary: 'The merchant’s receipt of a dispute on your payment, to show inline',
        params: IdParams,
        documentedResponse: {
          200: { description: 'The receipt file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' },
        },
        errors: { NOT_FOUND: 'No dispute with this id on your payments, or it has no stored receipt file' },
      },
    },
    async (request, reply) => {
      const { receipt, content } = await openExecutorDisputeReceipt(ctx, request.executor!.id, request.params.id);
      return sendReceiptFile(reply, receipt, content, { inline: true });
    },
  );

  app.get(
    '/disputes/:id/file',
    {
      schema: {
        tags,
        summary: 'The file you contested a dispute with',
        params: IdParams,
        documentedResponse: { 200: { description: 'The file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' } },
        errors: { NOT_FOUND: 'No dispute with this id on your payments, or you sent no file' },
      },
    },
    async (request, reply) => {
      const dispute = await getExecutorDispute(ctx, request.executor!.id, request.params.id);
      const { contentType, content } = await openContestFile(ctx, dispute);
      return sendContestFile(reply, dispute.id, contentType, content);
    },
  );
}

/** Sends an executor's contest file as receipts are sent: sandboxed, never sniffed. */
export function sendContestFile(reply: import('fastify').FastifyReply, id: string, contentType: string, content: NodeJS.ReadableStream) {
  return reply
    .header('content-type', contentType)
    .header('content-disposition', `inline; filename="dispute-${id}-executor"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .send(content);
}

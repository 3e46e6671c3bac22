import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditFor } from '../admin/audit.service.js';
import type { AppContext, RouteApp } from '../context.js';
import type { Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { flagReusedProof } from './evidence.js';
import { ExecutorCompletePayoutAnswer, ExecutorFailPayoutAnswer, ExecutorListPayoutsAnswer, ExecutorTakePayoutAnswer } from './payouts.executor.answers.js';
import type { PayoutRow } from './payouts.repo.js';
import { listAvailablePayouts, listExecutorPayouts, listPaidPayouts } from './payouts.repo.js';
import { toAvailablePayout, toPaidPayout, toTakenPayout } from './payouts.schemas.js';
import { actOnPayout, openOwnProof } from './payouts.service.js';

const tags = ['executor'];
const IdParams = Type.Object({ id: Type.String() });
const FailBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 1000 }) });
const NOT_FOUND = { PAYOUT_NOT_FOUND: 'No payout with this id' };
/** A payout that is not (or no longer) the executor's to act on. */
const NOT_YOURS =
  'The payout is not processing and taken by you (`data.status` is its status): another executor took it, or the operator completed, failed or cancelled it';

/**
 * The executor's side of payouts: see what is available, take one, report completed or failed.
 * Each act is audited in the transaction of the change, naming the executor.
 */
export async function payoutExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  const audited = (request: FastifyRequest, event: string, extra: Record<string, unknown> = {}) => {
    const record = auditFor(request);
    return (tx: Tx, before: PayoutRow, after: PayoutRow) =>
      record(tx, `payout.${event}`, 'payout', after.id, { status: before.status }, { status: after.status, ...extra });
  };

  app.get(
    '/payouts',
    {
      schema: {
        documentedResponse: { 200: ExecutorListPayoutsAnswer },
        tags,
        summary: 'Payouts you can take (oldest first), those you have taken, and those you paid',
      },
    },
    async (request) => ({
      available: (await listAvailablePayouts(ctx.db, 100)).map(toAvailablePayout),
      taken: (await listExecutorPayouts(ctx.db, request.executor!.id)).map(toTakenPayout),
      paid: (await listPaidPayouts(ctx.db, request.executor!.id, 50)).map(toPaidPayout),
    }),
  );

  app.get(
    '/payouts/:id/proof',
    {
      schema: {
        tags,
        summary: 'Download the proof you sent for one of your payouts',
        params: IdParams,
        produces: ['application/octet-stream'],
        response: { 200: { description: 'The proof file (png, jpeg, webp, heic or pdf)', type: 'string', contentMediaType: 'application/octet-stream' } },
        errors: { ...NOT_FOUND, NOT_FOUND: 'The payout has no proof (or is not one you took)' },
      },
    },
    async (request, reply) => {
      const { payout, content, contentType, extension } = await openOwnProof(ctx, request.executor!.id, request.params.id);
      // As a stored receipt is sent: a download, never sniffed into another type, sandboxed.
      return (reply as FastifyReply)
        .header('content-type', contentType)
        .header('content-disposition', `attachment; filename="payout-${payout.id}-proof.${extension}"`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(content);
    },
  );

  /** Exactly one executor gets a payout, even when several take it at once (guarded on pending). */
  app.post(
    '/payouts/:id/take',
    {
      schema: {
        documentedResponse: { 200: ExecutorTakePayoutAnswer },
        tags,
        summary: 'Take a pending payout: it becomes processing, yours to pay',
        description:
          'Exactly one executor gets a payout, even when several take it at once: the others get `409 CONFLICT`. You see the recipient’s details once you have it.',
        params: IdParams,
        errors: {
          ...NOT_FOUND,
          CONFLICT: 'The payout is no longer pending (`data.status` is its status): another executor took it, or a provider executes it',
        },
      },
    },
    async (request) =>
      toTakenPayout(
        await actOnPayout(
          ctx,
          request.params.id,
          'take',
          { executorId: request.executor!.id },
          audited(request, 'take', { executor_id: request.executor!.id }),
        ),
      ),
  );

  /** Completed, with the proof of the transfer (a png/jpg/webp/heic/pdf, multipart field `proof`). */
  app.post(
    '/payouts/:id/complete',
    {
      config: { upload: RECEIPT_FILES },
      schema: {
        documentedResponse: { 200: ExecutorCompletePayoutAnswer },
        tags,
        summary: 'Report a payout you took as paid, with the proof of the transfer',
        description:
          'Moves money: the payout becomes completed and its reserve is credited to your deposit with your reward. The proof is a file (png, jpg/jpeg, webp, heic or pdf, up to 10 MB, judged by its content) in a multipart/form-data body.',
        params: IdParams,
        consumes: ['multipart/form-data'],
        documentedBody: {
          required: true,
          description: 'multipart/form-data with the proof of the transfer',
          content: {
            'multipart/form-data': {
              schema: Type.Object({
                proof: Type.String({
                  contentMediaType: 'application/octet-stream',
                  description: 'the proof file (also accepted as `receipt`, `attachment` or `file`)',
                }),
              }),
            },
          },
        },
        errors: {
          ...NOT_FOUND,
          CONFLICT: NOT_YOURS,
          VALIDATION: 'No proof file attached, or invalid parameters (the message names the field)',
          PAY_002: 'The file came in another field, or more than one file was sent',
          PAY_009: 'The proof file is larger than 10 MB',
          PAY_010: 'The proof is not a png, jpg/jpeg, webp, heic or pdf file',
        },
      },
    },
    async (request) => {
      const upload = await request.readUpload();
      if (!upload.file) throw new DomainError('VALIDATION', 'Attach the proof of the transfer as a file (multipart field proof)');
      const proof = upload.file;
      const audit = audited(request, 'complete', { proof: proof.key });
      try {
        return toTakenPayout(
          await actOnPayout(
            ctx,
            request.params.id,
            'complete',
            { requireExecutor: request.executor!.id, proofKey: proof.key, proofSha256: proof.sha256 },
            async (tx, before, after) => {
              await audit(tx, before, after);
              // A proof already used elsewhere flags the payout for a person; it never changes the answer.
              await flagReusedProof(tx, proof.sha256, after);
            },
          ),
        );
      } catch (err) {
        await ctx.files.discard(upload.file.key, 'a payout completion that failed');
        throw err;
      }
    },
  );

  app.post(
    '/payouts/:id/fail',
    {
      schema: {
        documentedResponse: { 200: ExecutorFailPayoutAnswer },
        tags,
        summary: 'Report a payout you took as failed, with the reason: its reserve returns to the merchant',
        params: IdParams,
        body: FailBody,
        errors: { ...NOT_FOUND, CONFLICT: NOT_YOURS },
      },
    },
    async (request) => {
      const { reason } = request.body;
      return toTakenPayout(
        await actOnPayout(ctx, request.params.id, 'fail', { requireExecutor: request.executor!.id, reason }, audited(request, 'fail', { reason })),
      );
    },
  );
}

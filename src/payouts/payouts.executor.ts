import { Type } from 'typebox';
import type { AppContext, RouteApp } from '../context.js';
import { DomainError } from '../errors.js';
import { RECEIPT_FILES } from '../receipts/upload.js';
import { listAvailablePayouts, listExecutorPayouts } from './payouts.repo.js';
import { toAvailablePayout, toTakenPayout } from './payouts.schemas.js';
import { actOnPayout } from './payouts.service.js';

const tags = ['executor'];
const IdParams = Type.Object({ id: Type.String() });
const FailBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 1000 }) });

/** The executor's side of payouts: see what is available, take one, report completed or failed. */
export async function payoutExecutorRoutes(app: RouteApp, ctx: AppContext): Promise<void> {
  app.get('/payouts', { schema: { tags } }, async (request) => ({
    available: (await listAvailablePayouts(ctx.db, 100)).map(toAvailablePayout),
    taken: (await listExecutorPayouts(ctx.db, request.executor!.id)).map(toTakenPayout),
  }));

  /** Exactly one executor gets a payout, even when several take it at once (guarded on pending). */
  app.post('/payouts/:id/take', { schema: { tags, params: IdParams } }, async (request) =>
    toTakenPayout(await actOnPayout(ctx, request.params.id, 'take', { executorId: request.executor!.id })),
  );

  /** Completed, with the proof of the transfer (a png/jpg/webp/heic/pdf, multipart field `proof`). */
  app.post('/payouts/:id/complete', { config: { upload: RECEIPT_FILES }, schema: { tags, params: IdParams } }, async (request) => {
    const upload = await request.readUpload();
    if (!upload.file) throw new DomainError('VALIDATION', 'Attach the proof of the transfer as a file (multipart field proof)');
    try {
      return toTakenPayout(await actOnPayout(ctx, request.params.id, 'complete', { requireExecutor: request.executor!.id, proofKey: upload.file.key }));
    } catch (err) {
      await ctx.files.discard(upload.file.key, 'a payout completion that failed');
      throw err;
    }
  });

  app.post('/payouts/:id/fail', { schema: { tags, params: IdParams, body: FailBody } }, async (request) => {
    const { reason } = request.body;
    return toTakenPayout(await actOnPayout(ctx, request.params.id, 'fail', { requireExecutor: request.executor!.id, reason }));
  });
}

import { type BatchOptions, StatementBatches, type Waiting } from '../db/batches.js';
import { type Db, isDatabaseUnavailable, pgErrorCode } from '../db/pool.js';
import type { Logger } from '../lib/logger.js';
import { completeReportedTransfers, type LifecycleContext, type ReportedTransfer, type ReportedTransferOutcome } from '../payments/lifecycle.js';
import type { NotificationResult } from './notifications.service.js';

declare module '../context.js' {
  interface AppContext {
    /** The executors' reported transfers, completed together under load. */
    reportedTransfers: NotificationBatches;
  }
}

/** A reported transfer, and how to answer it the whole way alone. */
export interface QueuedTransfer {
  transfer: ReportedTransfer;
  /** The transfer's notification recorded in a transaction of its own, as before issue 38: unmatched, late, DEPOSIT_SHORT, a race. */
  alone: () => Promise<NotificationResult>;
}

/**
 * Executors' reported transfers completed together (issue 38 item 1; docs/performance.md
 * "Completion (issue 38)"), as payment creates are (src/payments/cascade/create-batches.ts): the
 * transfers that arrive while `maxInFlight` statements are already in progress wait, and go
 * together, up to `maxItems`, as one statement and one transaction when one of those ends. Nothing
 * waits for a batch to fill: with fewer in progress, each goes at once, alone — also one statement
 * (its completion, notification and audit row, committed with it) where it was seven round trips.
 *
 * Each transfer's answer is what it would have been alone:
 *   * a batch's items never wait for a lock, so two batches cannot wait for each other; an item
 *     that would have waited comes back busy and its statement runs again alone once its batch
 *     committed, waiting where it must;
 *   * an item that matched no PENDING payment, or whose executor's deposit cannot cover it, left
 *     nothing and runs the whole way alone (unmatched or late; DEPOSIT_SHORT), not failing the others;
 *   * a statement PostgreSQL failed (two repeats of one notification racing, a deadlock) did
 *     nothing, and each of its items runs the whole way alone;
 *   * a statement whose connection was lost may or may not have committed: none of its items runs
 *     again, each answers the lost connection (503) as a notification alone does.
 */
export class NotificationBatches extends StatementBatches<QueuedTransfer, NotificationResult> {
  constructor(
    private readonly db: Db,
    private readonly ctx: LifecycleContext,
    private readonly log: Logger,
    options: BatchOptions,
  ) {
    super(options, 'a reported transfer queued for a batch');
  }

  /** `transfer` completed with its notification and audit row, alone or with others; `alone` where that cannot be. */
  receive(transfer: ReportedTransfer, alone: () => Promise<NotificationResult>): Promise<NotificationResult> {
    return this.enqueue({ transfer, alone });
  }

  protected async run(batch: Waiting<QueuedTransfer, NotificationResult>[]): Promise<void> {
    this.ctx.metrics.completionsSent(batch.length === 1 ? 'alone' : 'together', batch.length);
    let outcomes: ReportedTransferOutcome[];
    try {
      outcomes = await completeReportedTransfers(
        this.db,
        this.ctx,
        batch.map((w) => w.item.transfer),
        batch.length === 1,
      );
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // Whether the statement committed is not known: each answers the lost connection (503).
        for (const w of batch) w.reject(err);
        return;
      }
      // Rolled back whole. Only the code: a message may quote a key's value.
      this.log.info({ code: pgErrorCode(err), transfers: batch.length }, 'a statement of reported transfers failed; each runs again alone');
      for (const w of batch) void this.settleAlone(w);
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i]!;
      if (outcome.outcome === 'busy') {
        void this.settleAgain(w);
      } else if (outcome.outcome === 'matched' || outcome.outcome === 'duplicate') {
        w.resolve(answer(outcome));
      } else {
        void this.settleAlone(w);
      }
    });
  }

  /**
   * A busy item once its batch has committed: its one statement again, alone, waiting where it
   * must; the whole way alone only if that cannot take it either.
   */
  private async settleAgain(w: Waiting<QueuedTransfer, NotificationResult>): Promise<void> {
    this.ctx.metrics.completionsSent('again', 1);
    let outcome: ReportedTransferOutcome;
    try {
      [outcome] = (await completeReportedTransfers(this.db, this.ctx, [w.item.transfer], true)) as [ReportedTransferOutcome];
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        w.reject(err);
        return;
      }
      outcome = { outcome: 'again' };
    }
    if (outcome.outcome === 'matched' || outcome.outcome === 'duplicate') w.resolve(answer(outcome));
    else await this.settleAlone(w, false);
  }

  private async settleAlone(w: Waiting<QueuedTransfer, NotificationResult>, counted = true): Promise<void> {
    if (counted) this.ctx.metrics.completionsSent('again', 1);
    try {
      w.resolve(await w.item.alone());
    } catch (err) {
      w.reject(err);
    }
  }
}

/** What a report answers when its statement did it. */
function answer(outcome: Extract<ReportedTransferOutcome, { outcome: 'matched' | 'duplicate' }>): NotificationResult {
  const { notification } = outcome;
  return {
    matched: notification.status === 'matched',
    payment_id: notification.payment_id,
    notification_id: notification.id,
    status: notification.status,
    duplicate: outcome.outcome === 'duplicate',
  };
}

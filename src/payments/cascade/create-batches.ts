import { type BatchOptions, StatementBatches, type Waiting } from '../../db/batches.js';
import { type Db, isDatabaseUnavailable, pgConstraint, pgErrorCode } from '../../db/pool.js';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { NewPayment } from './cascade.js';
import { type CascadeOutcome, insertPaymentWithCascade, insertWindowBatch } from './cascade.repo.js';

declare module '../../context.js' {
  interface AppContext {
    /** The executors' cascade of payment creates, taken together under load. */
    creates: CreateBatches;
  }
}

/** maxItems 1 sends every create on its own. */
export interface CreateBatchOptions extends BatchOptions {
  /**
   * A create sent alone and in progress this long stops counting against `maxInFlight`: alone, a
   * create waits for a lock another transaction holds, and it holds the queue up this long at
   * most, not until the lock is let go. A batch never waits for a lock and counts until it ends: a
   * slow batch is a busy database, which more statements at once would not help.
   */
  slowMs: number;
  sameAmountLimit: number;
}

/**
 * Payment creates taken together (issue 17, item 7; migration 034; docs/performance.md
 * "Creates taken together"): the `window` cascades of the creates that arrive while
 * `maxInFlight` statements are already in progress wait, and go together, up to `maxItems`, as
 * one statement and one transaction when one of those ends, or is a create alone that has taken
 * `slowMs` (waiting for a lock: the queue goes on without it). Nothing waits for a batch to fill:
 * with fewer creates in progress, each goes at once, alone.
 *
 * Each create's outcome is what it would have been alone:
 *   * a batch's creates never wait for a lock (migration 034), so two batches cannot wait for each
 *     other; a create that would have waited, or found nothing it could take without waiting,
 *     comes back busy and runs again alone once the batch committed, waiting where it must;
 *   * a batch whose statement PostgreSQL failed (a create racing another for an ext_id, a
 *     deadlock with a sweep) did nothing, and each of its creates runs again alone, answering what
 *     it answers alone (PAY_003 for the ext_id);
 *   * a batch whose connection was lost may or may not have committed: none of its creates runs
 *     again, each answers the lost connection (503) as a create alone does.
 */
export class CreateBatches extends StatementBatches<NewPayment, CascadeOutcome> {
  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly metrics: Pick<Metrics, 'createsSent'>,
    private readonly options: CreateBatchOptions,
  ) {
    super(options, 'a payment create queued for a batch');
  }

  /** insertPaymentWithCascade's `window` mode for `payment`, alone or with others. */
  window(payment: NewPayment): Promise<CascadeOutcome> {
    if (this.options.maxItems <= 1) return this.alone(payment, 'alone');
    return this.enqueue(payment);
  }

  protected async run(batch: Waiting<NewPayment, CascadeOutcome>[]): Promise<void> {
    if (batch.length === 1) {
      await this.settleAlone(batch[0]!, 'alone');
      return;
    }
    this.metrics.createsSent('together', batch.length);
    let outcomes: (CascadeOutcome | undefined)[];
    try {
      outcomes = await insertWindowBatch(
        this.db,
        batch.map((w) => w.item),
        this.options.sameAmountLimit,
      );
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // The connection went: whether the statement committed is not known, and a create run
        // again would answer PAY_003 to the request that made its payment. Each answers what a
        // create alone answers for a lost connection (503).
        for (const w of batch) w.reject(err);
        return;
      }
      // Rolled back whole. Only the code and constraint: a message may quote a key's value.
      this.log.info(
        { code: pgErrorCode(err), constraint: pgConstraint(err), creates: batch.length },
        'a batch of payment creates failed; each runs again alone',
      );
      for (const w of batch) void this.settleAlone(w, 'again');
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (outcome) w.resolve(outcome);
      else void this.settleAlone(w, 'again');
    });
  }

  private async settleAlone(w: Waiting<NewPayment, CascadeOutcome>, how: 'alone' | 'again'): Promise<void> {
    try {
      w.resolve(await this.alone(w.item, how));
    } catch (err) {
      w.reject(err);
    }
  }

  private alone(payment: NewPayment, how: 'alone' | 'again'): Promise<CascadeOutcome> {
    this.metrics.createsSent(how, 1);
    return insertPaymentWithCascade(this.db, payment, 'window', this.options.sameAmountLimit);
  }
}

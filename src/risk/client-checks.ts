import { type BatchOptions, StatementBatches, type Waiting } from '../db/batches.js';
import type { Db } from '../db/pool.js';
import { type ClientCheck, type ClientChecked, checkClientIds } from './velocity.repo.js';

export type ClientCheckOptions = Pick<BatchOptions, 'maxItems' | 'maxInFlight'>;

/** Statements of client_id checks in progress at once (as the creates' CREATE_BATCHES_IN_FLIGHT). */
export const CLIENT_CHECKS_IN_FLIGHT = 2;
/** Checks in one statement at most: a statement of 64 runs in about a millisecond. */
export const CLIENT_CHECKS_MAX_ITEMS = 64;

/**
 * The client_id rules of payment creates taken together (issue 36; docs/performance.md "Risk rules
 * on"), as the creates themselves are (src/payments/cascade/create-batches.ts): the checks that
 * arrive while `maxInFlight` statements are in progress wait, and go together, up to `maxItems`,
 * as one call of risk_client_checks — one statement, one transaction, one commit — as soon as one
 * of those ends. Nothing waits for a batch to fill: with fewer in progress, each goes at once.
 *
 * Each check comes out as it would alone: the statement counts its entries one after the other,
 * each seeing the ones before it, under the window rows' locks (exact across instances), and
 * locks the rows in the order of their keys, so that two statements cannot wait for each other.
 * A statement that fails fails each of its checks, as the one statement of a check alone would;
 * nothing of it was counted (it is one transaction), unless its connection was lost after the
 * commit — then its entries tighten their windows until they leave them, as before.
 */
export class ClientChecks extends StatementBatches<ClientCheck, ClientChecked> {
  constructor(
    private readonly db: Db,
    options: ClientCheckOptions = { maxItems: CLIENT_CHECKS_MAX_ITEMS, maxInFlight: CLIENT_CHECKS_IN_FLIGHT },
  ) {
    super(options, 'a payment create queued for its risk checks');
  }

  check(check: ClientCheck): Promise<ClientChecked> {
    return this.enqueue(check);
  }

  protected async run(batch: Waiting<ClientCheck, ClientChecked>[]): Promise<void> {
    try {
      const answers = await checkClientIds(
        this.db,
        batch.map((w) => w.item),
      );
      batch.forEach((w, i) => {
        w.resolve(answers[i]!);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}

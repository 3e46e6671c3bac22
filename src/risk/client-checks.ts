import { CONNECTION_TIMEOUT_MS, DatabaseWaitTimeout, type Db } from '../db/pool.js';
import { type ClientCheck, type ClientChecked, checkClientIds } from './velocity.repo.js';

export interface ClientCheckOptions {
  /** Checks in one statement at most. */
  maxItems: number;
  /** Statements of checks in progress at once, each on a pool connection. */
  maxInFlight: number;
}

/** Statements of client_id checks in progress at once (as the creates' CREATE_BATCHES_IN_FLIGHT). */
export const CLIENT_CHECKS_IN_FLIGHT = 2;
/** Checks in one statement at most: a statement of 64 runs in about a millisecond. */
export const CLIENT_CHECKS_MAX_ITEMS = 64;

interface Waiting {
  check: ClientCheck;
  resolve: (checked: ClientChecked) => void;
  reject: (err: unknown) => void;
  /** Ends the wait as the pool ends a wait for a connection: a stuck database answers 503, not never. */
  timer: NodeJS.Timeout;
}

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
export class ClientChecks {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly options: ClientCheckOptions = { maxItems: CLIENT_CHECKS_MAX_ITEMS, maxInFlight: CLIENT_CHECKS_IN_FLIGHT },
  ) {}

  check(check: ClientCheck): Promise<ClientChecked> {
    return new Promise<ClientChecked>((resolve, reject) => {
      const w: Waiting = { check, resolve, reject, timer: setTimeout(() => this.giveUp(w), CONNECTION_TIMEOUT_MS) };
      this.waiting.push(w);
      this.send();
    });
  }

  private giveUp(w: Waiting): void {
    const at = this.waiting.indexOf(w);
    if (at === -1) return;
    this.waiting.splice(at, 1);
    w.reject(new DatabaseWaitTimeout('a payment create queued for its risk checks'));
  }

  private send(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxItems);
      for (const w of batch) clearTimeout(w.timer);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.send();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const answers = await checkClientIds(
        this.db,
        batch.map((w) => w.check),
      );
      batch.forEach((w, i) => {
        w.resolve(answers[i]!);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}

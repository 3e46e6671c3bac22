import { performance } from 'node:perf_hooks';
import { CONNECTION_TIMEOUT_MS, DatabaseWaitTimeout } from './pool.js';

export interface BatchOptions {
  /** Items in one statement at most. */
  maxItems: number;
  /** Statements in progress at once, each on a pool connection. */
  maxInFlight: number;
  /**
   * A statement of one item in progress this long stops counting against `maxInFlight` (waiting
   * for a lock: the queue goes on without it). Unset: every statement counts until it ends.
   */
  slowMs?: number;
}

/** The weight of each batch's time in StatementBatches.batchMs (an exponential moving average over some ten batches). */
const BATCH_MS_WEIGHT = 0.1;

export interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
  /** Ends the wait as the pool ends a wait for a connection: a stuck database answers 503, not never. */
  timer: NodeJS.Timeout;
}

/**
 * Work for the database taken together under load (the payment creates' cascade, the creates'
 * client_id rules): what arrives while `maxInFlight` statements are already in progress waits,
 * and goes together, up to `maxItems`, as one statement when one of those ends. Nothing waits for
 * a batch to fill: with fewer in progress, each goes at once. `run` settles every item of its batch.
 */
export abstract class StatementBatches<T, R> {
  private readonly waiting: Waiting<T, R>[] = [];
  private inFlight = 0;
  private holdEwma: number | undefined;

  constructor(
    private readonly batching: BatchOptions,
    /** What a request waited for, in the 503 a wait too long answers. */
    private readonly waitingFor: string,
  ) {}

  protected abstract run(batch: Waiting<T, R>[]): Promise<void>;

  /**
   * How long a batch of several items has lately taken from its start to its end, ms (a moving
   * average; undefined before the first): what an item waiting for the next batch waits for, one
   * batch (issue 38: the creates' shedding allows that much queueing, src/http/overload.ts).
   * Items sent alone are not counted: under load every batch is full, and one alone is cheaper.
   */
  get batchMs(): number | undefined {
    return this.holdEwma;
  }

  protected enqueue(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const w: Waiting<T, R> = { item, resolve, reject, timer: setTimeout(() => this.giveUp(w), CONNECTION_TIMEOUT_MS) };
      this.waiting.push(w);
      this.send();
    });
  }

  private giveUp(w: Waiting<T, R>): void {
    const at = this.waiting.indexOf(w);
    if (at === -1) return;
    this.waiting.splice(at, 1);
    w.reject(new DatabaseWaitTimeout(this.waitingFor));
  }

  private send(): void {
    while (this.inFlight < this.batching.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.batching.maxItems);
      for (const w of batch) clearTimeout(w.timer);
      this.inFlight++;
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        this.inFlight--;
        this.send();
      };
      const { slowMs } = this.batching;
      const slow = batch.length === 1 && slowMs !== undefined ? setTimeout(release, slowMs) : undefined;
      const started = performance.now();
      void this.run(batch).finally(() => {
        if (batch.length > 1) {
          const ms = performance.now() - started;
          this.holdEwma = this.holdEwma === undefined ? ms : this.holdEwma + BATCH_MS_WEIGHT * (ms - this.holdEwma);
        }
        clearTimeout(slow);
        release();
      });
    }
  }
}

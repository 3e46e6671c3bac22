import type { Queryable } from '../db/pool.js';
import type { Logger } from '../lib/logger.js';
import { insertRiskHits } from '../risk/hits.batch.repo.js';
import type { RiskHit } from '../risk/hits.repo.js';
import { insertRefusals, type Refusal } from './refusals.repo.js';

declare module '../context.js' {
  interface AppContext {
    /** Payment creates refused for want of capacity (lost demand), written in the background. */
    refusals: RefusalLog;
  }
}

export type { Refusal } from './refusals.repo.js';

/**
 * Refusals waiting to be written beyond which new ones are dropped (and counted in the log): a
 * refusal storm while the database is slow must not grow the process without bound.
 */
const MAX_WAITING = 10_000;

/**
 * The record of lost demand (migration 029): creates refused with PAY_004 or PAY_005, written
 * after the merchant has its answer.
 *
 * Telemetry, never part of the answer: `record` returns at once, and the rows are written in the
 * background, all that arrived meanwhile in one INSERT, one at a time — so a burst of refusals
 * takes one pool connection, not one each away from the creates. A failed write is logged at
 * warn and the rows are lost: the merchant's answer must not depend on, nor wait for, the count
 * of answers like it.
 */
export class RefusalLog {
  private waiting: Refusal[] = [];
  private hits: RiskHit[] = [];
  private writing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
  ) {}

  /** Queues one refusal to be written; never throws, never waits. */
  record(refusal: Refusal): void {
    if (this.waiting.length >= MAX_WAITING) {
      this.dropped++;
      return;
    }
    this.waiting.push(refusal);
    this.writing ??= this.write();
  }

  /**
   * Queues the explanation of a risk rule's refusal of a create (issue 36: the rule, its inputs and
   * its figure), written with the refusals — a test terminal's has the hit alone, being no demand.
   */
  recordHit(hit: RiskHit): void {
    if (this.hits.length >= MAX_WAITING) {
      this.dropped++;
      return;
    }
    this.hits.push(hit);
    this.writing ??= this.write();
  }

  /** Resolves once every refusal recorded so far is written (or given up on): at shutdown, in tests. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async write(): Promise<void> {
    try {
      while (this.waiting.length > 0 || this.hits.length > 0) {
        const batch = this.waiting;
        const hits = this.hits;
        this.waiting = [];
        this.hits = [];
        try {
          await insertRefusals(this.db, batch);
          await insertRiskHits(this.db, hits);
        } catch (err) {
          // The one place a failure is swallowed on purpose: see the class comment.
          this.log.warn(
            { err, refusals: batch.length, hits: hits.length },
            'could not record refused payment creates (lost demand, risk hits); the dashboard will undercount them',
          );
        }
      }
      if (this.dropped > 0) {
        this.log.warn({ refusals: this.dropped }, 'refused payment creates not recorded: too many waiting to be written');
        this.dropped = 0;
      }
    } finally {
      this.writing = undefined;
    }
  }
}

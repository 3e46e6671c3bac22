import type { AppContext } from '../context.js';
import { StatementBatches, type Waiting } from '../db/batches.js';
import type { Queryable } from '../db/pool.js';
import { type Delivery, recordDeliveries } from './webhooks.repo.js';

/** Delivered attempts recorded in one statement at most. */
const MAX_ITEMS = 64;

/**
 * The delivered attempts of an instance's dispatches, recorded together (docs/performance.md
 * "Webhooks taken together"): with one such statement in progress, the deliveries that end
 * meanwhile wait and go together when it ends, up to MAX_ITEMS, as one statement — the attempts'
 * rows, their events delivered, their endpoints' runs of failures ended. Nothing waits for a batch
 * to fill: with none in progress, a delivery is recorded at once. The HTTP requests are long over
 * by then; a statement that fails records none of its deliveries, and each is made again when its
 * lease runs out (at least once, as when one alone could not be recorded).
 */
export class DeliveryRecords extends StatementBatches<Delivery, void> {
  constructor(
    private readonly db: Queryable,
    private readonly metrics: Pick<AppContext['metrics'], 'webhookDeliveriesRecorded'>,
  ) {
    super({ maxItems: MAX_ITEMS, maxInFlight: 1 }, 'a delivered webhook attempt queued to be recorded');
  }

  /** Resolves once `delivery` is recorded (committed), together with whatever went with it. */
  record(delivery: Delivery): Promise<void> {
    return this.enqueue(delivery);
  }

  protected async run(batch: Waiting<Delivery, void>[]): Promise<void> {
    try {
      await recordDeliveries(
        this.db,
        batch.map((w) => w.item),
      );
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    this.metrics.webhookDeliveriesRecorded(batch.length === 1 ? 'alone' : 'together', batch.length);
    for (const w of batch) w.resolve();
  }
}

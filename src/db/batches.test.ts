import { describe, expect, it } from 'vitest';
import { StatementBatches, type Waiting } from './batches.js';

/** Batches whose statements end when the test says. */
class Manual extends StatementBatches<number, number> {
  readonly running: { batch: Waiting<number, number>[]; end: () => void }[] = [];
  constructor() {
    super({ maxItems: 4, maxInFlight: 1 }, 'a test item');
  }
  add(n: number): Promise<number> {
    return this.enqueue(n);
  }
  protected run(batch: Waiting<number, number>[]): Promise<void> {
    return new Promise((resolve) => {
      this.running.push({
        batch,
        end: () => {
          for (const w of batch) w.resolve(w.item);
          resolve();
        },
      });
    });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('StatementBatches.batchMs', () => {
  it('is how long batches of several items lately took; an item alone is not counted', async () => {
    const b = new Manual();
    expect(b.batchMs).toBeUndefined();
    // The first goes alone (nothing in progress), the next three wait and go together.
    const alone = b.add(1);
    const together = [b.add(2), b.add(3), b.add(4)];
    await sleep(30);
    b.running[0]!.end();
    await alone;
    expect(b.batchMs).toBeUndefined();
    expect(b.running[1]!.batch.map((w) => w.item)).toEqual([2, 3, 4]);
    await sleep(60);
    b.running[1]!.end();
    expect(await Promise.all(together)).toEqual([2, 3, 4]);
    expect(b.batchMs!).toBeGreaterThanOrEqual(55);
    expect(b.batchMs!).toBeLessThan(500);
  });
});

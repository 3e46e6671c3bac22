/**
 * The jobs' share of the pool (src/db/share.ts) on a real database: a session held across other
 * work (a withdrawal send's advisory lock) is taken outside it, so that work holding such a session
 * never waits on the share for a second place. The share's own counting: src/db/share.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../src/db/pool.js';
import { outsideShare, poolShare } from '../src/db/share.js';
import { createTestDatabase } from './helpers.js';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 8);
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

/** Settles with `work`'s value, or with 'stuck' if it has not settled within `ms`. */
function within<T>(ms: number, work: Promise<T>): Promise<T | 'stuck'> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), ms);
  });
  return Promise.race([work, stuck]).finally(() => clearTimeout(timer));
}

describe('a share of the pool', () => {
  it('lets four sessions held outside it query through it at once, as four withdrawal sends do', async () => {
    const share = poolShare(pool, 2, 60_000);
    expect(outsideShare(share)).toBe(pool);
    expect(outsideShare(pool)).toBe(pool);
    const send = async (id: number) => {
      const lock = await outsideShare(share).connect();
      try {
        const { rows } = await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(7462, $1) AS ok', [id]);
        expect(rows[0]!.ok).toBe(true);
        // The send's own reads and writes, through the share, while its lock's session is held.
        for (let step = 0; step < 3; step++) await share.query('SELECT pg_sleep(0.01)');
        await lock.query('SELECT pg_advisory_unlock(7462, $1)', [id]);
      } finally {
        lock.release();
      }
      return id;
    };
    // Were the sessions taken through the share, two of them would hold both places and every
    // query would wait the share's minute for a third.
    expect(await within(10_000, Promise.all([1, 2, 3, 4].map(send)))).toEqual([1, 2, 3, 4]);
  });
});

import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Db } from './pool.js';
import { backgroundConnections, poolShare } from './share.js';

/** A pool that hands out connections at once (or fails when told) and counts those out. */
function fakePool() {
  const state = { out: 0, most: 0, fail: false, queries: [] as unknown[][] };
  let pendingQueries: (() => void)[] = [];
  const pool = {
    totalCount: 8,
    async connect() {
      if (state.fail) throw new Error('no connection');
      state.out++;
      state.most = Math.max(state.most, state.out);
      let released = false;
      const client = {
        // pg's pool refuses a second release of one checkout; this one ignores it.
        release(_err?: Error | boolean) {
          if (!released) state.out--;
          released = true;
        },
      };
      return client as unknown as pg.PoolClient;
    },
    query(...args: unknown[]) {
      state.queries.push(args);
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        callback(null, { rows: [] });
        return undefined;
      }
      state.out++;
      state.most = Math.max(state.most, state.out);
      // Answered when the test says so.
      return new Promise((resolve) =>
        pendingQueries.push(() => {
          state.out--;
          resolve({ rows: [] });
        }),
      );
    },
  };
  return {
    pool: pool as unknown as Db,
    state,
    answerQueries() {
      const now = pendingQueries;
      pendingQueries = [];
      for (const answer of now) answer();
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('poolShare', () => {
  it('holds at most its connections at once; the next in line gets the place of one released', async () => {
    const { pool, state } = fakePool();
    const share = poolShare(pool, 2);
    const first = await share.connect();
    const second = await share.connect();
    let third: pg.PoolClient | undefined;
    void share.connect().then((client) => {
      third = client;
    });
    await tick();
    expect(third).toBeUndefined();
    expect(state.out).toBe(2);
    first.release();
    first.release(); // counted once by the share too
    await tick();
    expect(third).toBeDefined();
    expect(state.most).toBe(2);
    second.release();
    third!.release();
    // All places free again: two at once, not more.
    const again = [await share.connect(), await share.connect()];
    let beyond: pg.PoolClient | undefined;
    void share.connect().then((client) => {
      beyond = client;
    });
    await tick();
    expect(beyond).toBeUndefined();
    expect(state.out).toBe(2);
    for (const client of again) client.release();
    await tick();
    beyond!.release();
  });

  it('counts a query while it runs, and passes the callback forms (a LISTEN connection) straight to the pool', async () => {
    const { pool, state, answerQueries } = fakePool();
    const share = poolShare(pool, 1);
    const running = share.query('SELECT 1');
    const queued = share.query('SELECT 2');
    await tick();
    expect(state.queries).toHaveLength(1);
    let called = false;
    share.query('SELECT 3', [], () => {
      called = true;
    });
    expect(called).toBe(true);
    answerQueries();
    await running;
    await tick();
    expect(state.queries.map((args) => args[0])).toEqual(['SELECT 1', 'SELECT 3', 'SELECT 2']);
    answerQueries();
    await queued;
    expect(state.most).toBe(1);
  });

  it('gives the place back when the pool cannot give a connection', async () => {
    const { pool, state } = fakePool();
    const share = poolShare(pool, 1);
    state.fail = true;
    await expect(share.connect()).rejects.toThrow('no connection');
    state.fail = false;
    const client = await share.connect();
    client.release();
    // Everything else is the pool's own.
    expect(share.totalCount).toBe(8);
  });

  it('work that waited its limit for a place goes to the pool without one: a place held while asking for another cannot wait for ever', async () => {
    const { pool, state } = fakePool();
    const share = poolShare(pool, 1, 500);
    const held = await share.connect();
    // As a transaction that queries the pool itself meanwhile.
    const inner = await share.connect();
    expect(state.out).toBe(2);
    inner.release();
    held.release();
    // Uncounted, the inner one gave no place back: one place, as before.
    const first = await share.connect();
    let second: pg.PoolClient | undefined;
    void share.connect().then((client) => {
      second = client;
    });
    await tick();
    expect(second).toBeUndefined();
    first.release();
    await tick();
    expect(second).toBeDefined();
    second!.release();
  });

  it('a quarter of the pool for the background, at least two', () => {
    expect(backgroundConnections(8)).toBe(2);
    expect(backgroundConnections(6)).toBe(2);
    expect(backgroundConnections(20)).toBe(5);
  });
});

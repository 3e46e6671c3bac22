import type pg from 'pg';
import { CONNECTION_TIMEOUT_MS, type Db } from './pool.js';

/**
 * The connections of the pool that background work (the job queue and its tasks) may hold at
 * once: a quarter of them, at least two. The rest are the requests' alone.
 */
export function backgroundConnections(poolSize: number): number {
  return Math.max(2, Math.floor(poolSize / 4));
}

/**
 * A view of `pool` through which at most `connections` of its connections are in use at once;
 * whatever asks for more waits in the view's own queue, not in the pool's. The pool hands its
 * connections out first come, first served: without this, the job queue's work (a webhook
 * dispatch records up to 32 deliveries at once, each a transaction waiting for its commit to be
 * flushed) queued in front of the requests, and an executor's notification — three turns at the
 * pool each — waited behind every burst of it. Issue 38: under twice the load the machine carries,
 * the instance that runs the jobs answered notifications seconds late where the one without jobs
 * answered them in a few hundred milliseconds; a share for the jobs gives the requests, and among
 * them what completes money already on its way, the rest of the pool.
 *
 * `query` and `connect` in their promise forms go through the view; their callback forms (the
 * job queue's LISTEN connection, held for as long as it runs) and everything else go straight to
 * the pool. A connection taken through the view counts until it is released. Whatever waits
 * `waitLimitMs` (the pool's own limit on a wait, CONNECTION_TIMEOUT_MS) for a place goes to the
 * pool without one.
 */
export function poolShare(pool: Db, connections: number, waitLimitMs = CONNECTION_TIMEOUT_MS): Db {
  if (!(connections >= 1)) throw new Error(`a pool share needs at least one connection, got ${connections}`);
  let inUse = 0;
  const waiting: ((counted: boolean) => void)[] = [];
  /**
   * A place in the share: true once one is free; false after waitLimitMs without one, and the work
   * goes to the pool uncounted. Work that holds a place and asks for another (a query on the pool
   * inside a transaction) could otherwise wait for ever on work that does the same.
   */
  const acquire = (): Promise<boolean> | boolean => {
    if (inUse < connections) {
      inUse++;
      return true;
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const at = waiting.indexOf(give);
        if (at >= 0) waiting.splice(at, 1);
        resolve(false);
      }, waitLimitMs);
      const give = (counted: boolean) => {
        clearTimeout(timer);
        resolve(counted);
      };
      waiting.push(give);
    });
  };
  const release = () => {
    const next = waiting.shift();
    // The place passes straight to the next in line: inUse stays as it is.
    if (next) next(true);
    else inUse--;
  };
  const query = async (...args: unknown[]) => {
    const counted = await acquire();
    try {
      return await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } finally {
      if (counted) release();
    }
  };
  const connect = async (): Promise<pg.PoolClient> => {
    const counted = await acquire();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      if (counted) release();
      throw err;
    }
    if (!counted) return client;
    // The pool gives each checkout a release of its own; this one is wrapped for this checkout only.
    const poolRelease = client.release;
    let released = false;
    client.release = (err?: Error | boolean) => {
      if (!released) {
        released = true;
        release();
      }
      return poolRelease.call(client, err);
    };
    return client;
  };
  const share = new Proxy(pool, {
    get(target, property) {
      if (property === 'query')
        return (...args: unknown[]) => (typeof args.at(-1) === 'function' ? (target.query as (...a: unknown[]) => unknown)(...args) : query(...args));
      if (property === 'connect') return (callback?: unknown) => (callback ? target.connect(callback as never) : connect());
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  shared.set(share, pool);
  return share;
}

/** Each share's pool, for outsideShare. */
const shared = new WeakMap<Db, Db>();

/**
 * The pool behind `db` when it is a share (else `db` itself), for a session held across other
 * work, as a session advisory lock is: held through the share, it would take a place while its
 * holder waits on the network, and its holder's own queries would ask the share for a second place,
 * which work like it may hold in turn, until waitLimitMs gives up.
 */
export function outsideShare(db: Db): Db {
  return shared.get(db) ?? db;
}

import { createHash } from 'node:crypto';
import pg from 'pg';
import { clientClassFor, hostsFor, ReadOnlyHostError } from './hosts.js';

export type Db = pg.Pool;
export type Tx = pg.PoolClient;
/** Anything that can run a query: the pool or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient;

// int8 (count(*)) fits in a JS number for every count this service makes; numeric stays a string
// so that money goes straight into decimal.js without passing through binary floating point.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/**
 * How long a request waits for a connection: a new one to be established, or a busy one to be
 * released. Without a limit, a request arriving while the database cannot be reached (a host that
 * drops packets, every connection stuck) waited for ever; now it fails and answers 503.
 */
export const CONNECTION_TIMEOUT_MS = 5_000;

/**
 * Work that waited CONNECTION_TIMEOUT_MS for its turn at the database in a queue of the service's
 * own (a payment create waiting for a batch, src/payments/cascade/create-batches.ts): the pool's wait
 * ending, by another road, and answered the same (503).
 */
export class DatabaseWaitTimeout extends Error {
  constructor(what: string) {
    super(`${what} waited ${CONNECTION_TIMEOUT_MS} ms for the database`);
    this.name = 'DatabaseWaitTimeout';
  }
}

/**
 * Opens a connection pool of at most `max` connections (config KASSIR_DB_POOL_SIZE). A URL naming
 * several hosts or a target_session_attrs (db/hosts.ts) gets connections that follow the host
 * accepting writes.
 */
export function createPool(connectionString: string, max: number): Db {
  const list = hostsFor(connectionString);
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
    ...(list ? { Client: clientClassFor(list) } : {}),
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A named statement: PostgreSQL plans it once per connection and reuses the plan, where an
 * unnamed statement is planned again on every call. For the hot paths, whose queries (joins, CTEs,
 * many candidate indexes) cost more to plan than to run (docs/performance.md). The name comes from the text: a new text, a new name.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let digest = preparedDigests.get(text);
  if (!digest) {
    digest = createHash('sha1').update(text).digest('hex').slice(0, 20);
    preparedDigests.set(text, digest);
  }
  return { name: `k${preparedGeneration}_${digest}`, text, values };
}

// The hot paths build a handful of distinct texts; hashing each once is enough.
const preparedDigests = new Map<string, string>();
let preparedGeneration = 0;

/**
 * A migration that changes a table under a running instance (a rolling upgrade) breaks that
 * instance's named statements returning `*`: "cached plan must not change result type" (0A000),
 * on every connection where they were prepared.
 */
function isStalePrepared(err: unknown): boolean {
  return pgErrorCode(err) === '0A000' && /cached plan must not change result type/.test(String((err as Error).message));
}

/**
 * Runs `work` — database work that did nothing if it failed (one statement, or a transaction) —
 * once more under new statement names, which every connection then prepares afresh, when it
 * failed on a stale named statement (see isStalePrepared).
 */
async function againIfStale<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!isStalePrepared(err)) throw err;
    preparedGeneration++;
    return work();
  }
}

/** Runs one named statement on the pool, as its own transaction (see againIfStale). */
export async function queryPrepared<R extends pg.QueryResultRow>(db: Db, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
  return againIfStale(() => db.query<R>(prepared(text, values)));
}

/**
 * Runs `fn` in a transaction: COMMIT when it resolves, ROLLBACK when it throws (and once more
 * after a stale named statement, see againIfStale; only prepared statements that return `*` can
 * fail so, and the `fn`s that run them do nothing outside the database).
 */
export async function transaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return againIfStale(() => runTransaction(db, fn));
}

/** What runs once each open transaction (by client) has committed: see afterCommit. */
const commitHooks = new WeakMap<Tx, (() => void)[]>();

/**
 * Runs `hook` once the transaction that `tx` is in (one of `transaction`'s) has committed, and
 * never if it rolls back; on a client outside `transaction`, at once. For in-process effects of
 * work that must not count until it is durable — counters (src/observability) — never for I/O. A
 * hook that throws cannot fail a transaction already committed: its error becomes a process
 * warning (on stderr) instead.
 */
export function afterCommit(tx: Tx, hook: () => void): void {
  const hooks = commitHooks.get(tx);
  if (hooks) hooks.push(hook);
  else runHook(hook);
}

function runHook(hook: () => void): void {
  try {
    hook();
  } catch (err) {
    process.emitWarning(err instanceof Error ? err : String(err), 'AfterCommitHookWarning');
  }
}

async function runTransaction<T>(db: Db, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await db.connect();
  const hooks: (() => void)[] = [];
  commitHooks.set(client, hooks);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    commitHooks.delete(client);
    client.release();
    for (const hook of hooks) runHook(hook);
    return result;
  } catch (err) {
    commitHooks.delete(client);
    // A ROLLBACK fails only on a connection that is itself broken, which `err` already reports:
    // that connection is closed rather than handed to the next transaction.
    const broken = await client.query('ROLLBACK').then(
      () => undefined,
      (rollbackErr: Error) => rollbackErr,
    );
    client.release(broken);
    throw err;
  }
}

/** PostgreSQL error codes this service translates into domain outcomes. */
export const PgCode = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  foreignKeyViolation: '23503',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  invalidTextRepresentation: '22P02',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

export function pgConstraint(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'constraint' in err ? String((err as { constraint: unknown }).constraint) : undefined;
}

/**
 * Whether `err` is PostgreSQL ending a transaction because it collided with another (deadlock
 * detected, 40P01; serialization failure, 40001): everything it did was rolled back, and the same
 * request sent again succeeds. Lock orders are fixed so that this should not happen; should it,
 * the client is told to retry rather than that the service failed.
 */
export function isTransientConflict(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code === PgCode.deadlockDetected || code === PgCode.serializationFailure;
}

/** Socket errors of a connection that cannot be made or was cut. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * Whether `err` says the database cannot be reached right now, rather than that a statement was
 * wrong: no connection (refused, reset, timed out — also while waiting for one from the pool), a
 * connection cut, or the server refusing sessions while it shuts down, starts or recovers
 * (SQLSTATE class 08, 57P01–57P03, 53300 too many connections), or, with several hosts, the one
 * reached being a standby while the primary is found (db/hosts.ts).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  if (err instanceof DatabaseWaitTimeout || err instanceof ReadOnlyHostError) return true;
  const code = pgErrorCode(err);
  if (code !== undefined && (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code) || CONNECTION_ERRNOS.has(code))) return true;
  const message = err instanceof Error ? err.message : '';
  return /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/.test(
    message,
  );
}

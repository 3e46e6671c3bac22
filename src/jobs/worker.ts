import { type Runner, run, type TaskList, Logger as WorkerLogger } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { type Db, isDatabaseUnavailable, type Tx } from '../db/pool.js';

/**
 * What the queue runs, handed in by the composition root (src/jobs.ts), so that jobs/ knows no
 * feature: every task by name, the cron lines, and what starts once the queue runs.
 */
export interface Jobs {
  taskList: TaskList;
  crontab: string[];
  /** Once the queue runs: first jobs and listeners; stopped with the queue. Undoes what it began when it throws. */
  start(runner: Runner): Promise<{ stop(): Promise<void> }>;
}

/** The running job queue of this instance. */
export interface Worker {
  /** Whether the queue's runner is still at work (false once it stopped or failed): /readyz and /metrics. */
  running(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL-backed job queue (graphile-worker) on the service's pool with the jobs the
 * composition root hands it (src/jobs.ts: each feature's tasks and cron lines, and what runs once
 * the queue is up).
 */
export async function startWorker(ctx: AppContext, jobs: Jobs): Promise<Worker> {
  let stopping = false;
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const line = { scope: scope.label, ...meta };
    if (level === 'error') ctx.log.error(line, message);
    else if (level === 'warning') ctx.log.warn(line, message);
    else ctx.log.debug(line, message);
  });
  const runner = await run({
    pgPool: waitingForDatabase(ctx.db, ctx.log, () => stopping),
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 1000,
    logger,
    taskList: jobs.taskList,
    crontab: jobs.crontab.join('\n'),
  });
  let running = true;
  // The runner's promise settles when it stops or fails; `finally` passes a failure on unchanged.
  void runner.promise.finally(() => {
    running = false;
  });
  let started: { stop(): Promise<void> } | undefined;
  try {
    started = await jobs.start(runner);
  } catch (err) {
    await runner.stop();
    throw err;
  }
  return {
    running: () => running,
    async stop() {
      stopping = true;
      await started?.stop();
      await runner.stop();
    },
  };
}

/**
 * The pool as graphile-worker uses it: `connect()` waits while the database cannot be reached,
 * instead of failing. graphile-worker (0.17) records a job's completion or failure without
 * awaiting it, and retries only some connection errors (57P03, EHOSTUNREACH, ETIMEDOUT — not a
 * refused or cut connection): a job that ended while the database was away became an unhandled
 * rejection, which ended the whole process (issue 15's fault suite). Waiting, the job's end is
 * recorded once the database is back. Everything else is the pool itself.
 */
function waitingForDatabase(pool: Db, log: AppContext['log'], stopping: () => boolean): Db {
  const connect = async (): Promise<Tx> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const client = await pool.connect();
        if (attempt > 0) log.info({ attempts: attempt + 1 }, 'job worker reached the database again');
        return client;
      } catch (err) {
        if (stopping() || !isDatabaseUnavailable(err)) throw err;
        if (attempt === 0) log.warn({ err: { message: (err as Error).message } }, 'job worker cannot reach the database; waiting for it');
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 250 * 2 ** attempt)));
      }
    }
  };
  return new Proxy(pool, {
    get(target, property) {
      // The callback form (graphile-worker's LISTEN connection) reconnects by itself.
      if (property === 'connect') return (callback?: unknown) => (callback ? target.connect(callback as never) : connect());
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

import { Logger as WorkerLogger, run, type Runner, type Task, type TaskList } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { paymentsChanged } from '../payments/events.js';
import { expireDue } from '../payments/state.js';
import { dispatchTask } from '../webhooks/dispatch.js';
import { DISPATCH_KEY, DISPATCH_TASK, LEGACY_DELIVER_TASK, scheduleDispatch } from '../webhooks/outbox.js';
import { wakeDispatchOnNewEvents } from '../webhooks/wakeup.js';
import type { ChainClient } from '../withdrawals/chain.js';
import { resumeSends, sendTask } from '../withdrawals/send.js';
import { createTronClient } from '../withdrawals/tron.js';
import { SEND_TASK } from '../withdrawals/withdrawals.service.js';
import { ACTIONS_TASK, POLL_TASK, actionsTask, pollTask } from '../providers/jobs.js';

/** How many payments one sweep statement expires; the sweep repeats until none are due. */
const EXPIRY_BATCH = 500;
const EXPIRE_TASK = 'payments_expire_due';

/**
 * Expiry (spec: "PENDING — timeout — CANCELLED"): a sweep job that cancels every PENDING
 * payment past `valid_until`, then schedules its next run. The job key makes it one job across
 * all instances; the sweep itself skips rows another instance holds, and the status guard means
 * a payment is expired once. A cron line restarts the chain should it ever break.
 */
function expireTask(ctx: AppContext): Task {
  return async (_payload, helpers) => {
    let expired = 0;
    for (;;) {
      // Each batch's cancellations and their webhook events commit together.
      const batch = await transaction(ctx.db, async (tx) => {
        const done = await expireDue(tx, EXPIRY_BATCH);
        await paymentsChanged(tx, ctx.config, done.map((row) => row.id));
        return done;
      });
      expired += batch.length;
      if (batch.length < EXPIRY_BATCH) break;
    }
    if (expired > 0) ctx.log.info({ expired }, 'expired pending payments');
    await helpers.addJob(EXPIRE_TASK, {}, {
      jobKey: EXPIRE_TASK,
      jobKeyMode: 'preserve_run_at',
      runAt: new Date(Date.now() + ctx.config.expirySweepSeconds * 1000),
    });
  };
}

const CLEANUP_TASK = 'idempotency_cleanup';

/** Stored Idempotency-Key answers are kept 24 hours. */
function cleanupTask(ctx: AppContext): Task {
  return async () => {
    const { rowCount } = await ctx.db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '24 hours'`);
    if (rowCount) ctx.log.info({ removed: rowCount }, 'removed expired idempotency keys');
  };
}

export function taskList(ctx: AppContext): TaskList {
  let chain: ChainClient | undefined;
  const chainClient = () => {
    if (!ctx.config.tron) throw new Error('a withdrawal needs the Tron adapter, but KASSIR_TRON_FULL_NODE is not set');
    return (chain ??= ctx.chain ?? createTronClient(ctx.config.tron));
  };
  return {
    [EXPIRE_TASK]: expireTask(ctx),
    [DISPATCH_TASK]: dispatchTask(ctx),
    [LEGACY_DELIVER_TASK]: dispatchTask(ctx),
    [SEND_TASK]: sendTask(ctx, chainClient),
    [CLEANUP_TASK]: cleanupTask(ctx),
    [ACTIONS_TASK]: actionsTask(ctx),
    [POLL_TASK]: pollTask(ctx),
  };
}

/** The running job queue of this instance. */
export interface Worker {
  stop(): Promise<void>;
}

/**
 * Starts the PostgreSQL-backed job queue (graphile-worker) on the service's pool, and the
 * listener that starts a webhook dispatch when events are written (on `databaseUrl`).
 */
export async function startWorker(ctx: AppContext, databaseUrl: string): Promise<Worker> {
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    const line = { scope: scope.label, ...meta };
    if (level === 'error') ctx.log.error(line, message);
    else if (level === 'warning') ctx.log.warn(line, message);
    else ctx.log.debug(line, message);
  });
  const runner = await run({
    pgPool: ctx.db,
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 1000,
    logger,
    taskList: taskList(ctx),
    crontab: [
      `* * * * * ${EXPIRE_TASK} ?jobKey=${EXPIRE_TASK}&jobKeyMode=preserve_run_at`,
      `17 * * * * ${CLEANUP_TASK} ?jobKey=${CLEANUP_TASK}`,
      `* * * * * ${POLL_TASK} ?jobKey=${POLL_TASK}`,
      // The safety net of webhook delivery: events whose announcement was missed, leases that ran out.
      `* * * * * ${DISPATCH_TASK} ?jobKey=${DISPATCH_KEY}&jobKeyMode=preserve_run_at`,
    ].join('\n'),
  });
  const dispatchNow = () => scheduleDispatch(ctx.db);
  let wakeup: { stop(): Promise<void> } | undefined;
  try {
    await runner.addJob(EXPIRE_TASK, {}, { jobKey: EXPIRE_TASK, jobKeyMode: 'preserve_run_at' });
    wakeup = await wakeDispatchOnNewEvents(databaseUrl, ctx.log, dispatchNow);
    // Events written while no instance was listening.
    await dispatchNow();
    const resumed = await resumeSends(ctx);
    if (resumed > 0) ctx.log.info({ withdrawals: resumed }, 'resumed sending open withdrawals');
  } catch (err) {
    await wakeup?.stop();
    await runner.stop();
    throw err;
  }
  return {
    async stop() {
      await wakeup?.stop();
      await runner.stop();
    },
  };
}

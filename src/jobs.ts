import type { Runner, Task, TaskList } from 'graphile-worker';
import type { ChainClient } from './chain/chain.js';
import { createTronClient } from './chain/tron.js';
import type { AppContext } from './context.js';
import { analyzeParents, dropPartitionsBefore, ensureMonthsAhead, PARTITION_MONTHS_AHEAD } from './db/partitions.js';
import { transaction } from './db/pool.js';
import { sweepSilence } from './devices/devices.service.js';
import { DEADLINES_TASK, deadlinesTask } from './disputes/disputes.jobs.js';
import { POLL_TASK, pollTask } from './disputes/provider-status.service.js';
import { DEPOSITS_TASK, depositsTask } from './executors/deposits.jobs.js';
import { refreshScores } from './executors/executors.repo.js';
import { sweepLowDeposits } from './executors/executors.service.js';
import { removeFailedJobsOlderThan, removeIdempotencyKeysOlderThan } from './jobs/jobs.repo.js';
import type { Jobs } from './jobs/worker.js';
import { LEDGER_CHECK_TASK, LEDGER_TOTALS_TASK, ledgerCheckTask, ledgerTotalsTask } from './ledger/ledger.jobs.js';
import { countPaymentChanges, expireDuePayments } from './payments/lifecycle.js';
import { ACTIONS_TASK, actionsTask } from './providers/providers.jobs.js';
import { purgeOldRefreshes, REFRESH_TASK, refreshTask } from './rates/rates.jobs.js';
import { ALERTS_TASK, alertsTask } from './reports/alerts.jobs.js';
import { DASHBOARD_ROLLUP_TASK, dashboardRollupTask } from './reports/dashboard.jobs.js';
import { purgeOldUsage } from './requisites/requisites.repo.js';
import { switchOffUnpaidStreaks } from './requisites/requisites.service.js';
import { DISPATCH_KEY, DISPATCH_TASK, scheduleDispatch } from './webhooks/outbox.js';
import { wakeDispatchOnNewEvents } from './webhooks/wakeup.js';
import { dispatchTask } from './webhooks/webhooks.jobs.js';
import { resumeSends, sendTask } from './withdrawals/withdrawals.jobs.js';
import { SEND_TASK } from './withdrawals/withdrawals.service.js';

/*
 * The composition root's jobs: each feature's tasks (its *.jobs.ts) and cron lines, registered
 * here for the queue in jobs/worker.ts, which knows no feature. A new background job: its task in
 * the feature's *.jobs.ts, its name in taskList and, if it runs on a schedule, a line in crontab.
 */

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
      const batch = await transaction(ctx.db, (tx) => expireDuePayments(tx, ctx.config, EXPIRY_BATCH));
      expired += batch.length;
      // Counted once the batch committed, like every other payment change (lifecycle.ts).
      countPaymentChanges(ctx.metrics, batch);
      // Automatic care, after the batch committed and on its own (it locks requisites, which
      // must never follow the ledger rows the batch locked): requisites whose latest hand-outs
      // all ended unpaid are switched off.
      const requisiteIds = [...new Set(batch.flatMap((change) => (change.requisite_id ? [change.requisite_id] : [])))];
      for (const off of await switchOffUnpaidStreaks(ctx.db, requisiteIds)) {
        ctx.log.warn({ requisite_id: off.id, executor_id: off.executor_id }, off.disabled_reason);
      }
      if (batch.length < EXPIRY_BATCH) break;
    }
    if (expired > 0) ctx.log.info({ expired }, 'expired pending payments');
    await helpers.addJob(
      EXPIRE_TASK,
      {},
      {
        jobKey: EXPIRE_TASK,
        jobKeyMode: 'preserve_run_at',
        runAt: new Date(Date.now() + ctx.config.expirySweepSeconds * 1000),
      },
    );
  };
}

const SCORE_TASK = 'executors_score';

/** Every minute: the executors' scores that order the cascade, phones gone silent, deposits gone low, and old usage counters dropped. */
function scoreTask(ctx: AppContext): Task {
  return async () => {
    const changed = await refreshScores(ctx.db, ctx.config.disputes.ratioLimit);
    if (changed) ctx.log.info({ executors: changed }, 'executor scores changed');
    await sweepSilence(ctx);
    const low = await sweepLowDeposits(ctx);
    if (low) ctx.log.info({ executors: low }, "executors' deposits fell below their low-deposit line");
    await purgeOldUsage(ctx.db);
  };
}

const CLEANUP_TASK = 'idempotency_cleanup';

/** Stored Idempotency-Key answers are kept 24 hours; rate fetches that gave no rate, REFRESH_HISTORY_HOURS. */
function cleanupTask(ctx: AppContext): Task {
  return async () => {
    const removed = await removeIdempotencyKeysOlderThan(ctx.db, 24);
    if (removed) ctx.log.info({ removed }, 'removed expired idempotency keys');
    const refreshes = await purgeOldRefreshes(ctx);
    if (refreshes) ctx.log.info({ removed: refreshes }, 'removed old rate fetches that gave no rate');
  };
}

const HISTORY_TASK = 'history_maintenance';
const DAY_MS = 86_400_000;

/**
 * History that does not slow the present (issue 38): the partitioned history tables get their
 * coming months ahead of time; webhook attempts older than WEBHOOK_ATTEMPTS_RETENTION_DAYS go a
 * whole month's partition at a time; jobs that failed for good go after
 * KASSIR_FAILED_JOBS_RETENTION_DAYS. Postings, payments and the audit log are never dropped
 * (db/partitions.ts refuses them). `now` is a parameter for the tests.
 */
export async function maintainHistory(ctx: AppContext, now = new Date()): Promise<{ created: string[]; dropped: string[]; failedJobs: number }> {
  const created = await ensureMonthsAhead(ctx.db, now, PARTITION_MONTHS_AHEAD);
  const dropped = await dropPartitionsBefore(ctx.db, 'webhook_attempts', new Date(now.getTime() - ctx.config.webhookAttemptsRetentionDays * DAY_MS));
  const changed = [...created, ...dropped].map((name) => name.replace(/_p\d{6}$|_history$/, ''));
  await analyzeParents(ctx.db, changed);
  const failedJobs = await removeFailedJobsOlderThan(ctx.db, ctx.config.failedJobsRetentionDays);
  return { created, dropped, failedJobs };
}

function historyTask(ctx: AppContext): Task {
  return async () => {
    const done = await maintainHistory(ctx);
    if (done.created.length + done.dropped.length + done.failedJobs > 0)
      ctx.log.info(done, 'history maintenance: partitions created and dropped, failed jobs removed');
  };
}

export function taskList(ctx: AppContext): TaskList {
  let chain: ChainClient | undefined;
  const chainClient = () => {
    if (!ctx.config.tron) throw new Error('a withdrawal or a deposit poll needs the Tron adapter, but KASSIR_TRON_FULL_NODE is not set');
    chain ??= createTronClient(ctx.config.tron);
    return chain;
  };
  return {
    ...(ctx.config.tronDeposits ? { [DEPOSITS_TASK]: depositsTask(ctx, chainClient) } : {}),
    [EXPIRE_TASK]: expireTask(ctx),
    [DISPATCH_TASK]: dispatchTask(ctx),
    [SEND_TASK]: sendTask(ctx, chainClient),
    [CLEANUP_TASK]: cleanupTask(ctx),
    [HISTORY_TASK]: historyTask(ctx),
    [ACTIONS_TASK]: actionsTask(ctx),
    [POLL_TASK]: pollTask(ctx),
    [SCORE_TASK]: scoreTask(ctx),
    [DEADLINES_TASK]: deadlinesTask(ctx),
    [LEDGER_CHECK_TASK]: ledgerCheckTask(ctx),
    [LEDGER_TOTALS_TASK]: ledgerTotalsTask(ctx),
    [ALERTS_TASK]: alertsTask(ctx),
    [DASHBOARD_ROLLUP_TASK]: dashboardRollupTask(ctx),
    [REFRESH_TASK]: refreshTask(ctx, (source, outcome) => ctx.metrics.rateFetched(source, outcome)),
  };
}

/** Every feature's jobs for the queue (jobs/worker.ts), with what starts once it runs. */
export function featureJobs(ctx: AppContext, databaseUrl: string): Jobs {
  return {
    taskList: taskList(ctx),
    crontab: [
      `* * * * * ${EXPIRE_TASK} ?jobKey=${EXPIRE_TASK}&jobKeyMode=preserve_run_at`,
      `17 * * * * ${CLEANUP_TASK} ?jobKey=${CLEANUP_TASK}`,
      // Partitions ahead, webhook attempts and failed jobs past their retention.
      `29 * * * * ${HISTORY_TASK} ?jobKey=${HISTORY_TASK}`,
      `* * * * * ${POLL_TASK} ?jobKey=${POLL_TASK}`,
      `* * * * * ${SCORE_TASK} ?jobKey=${SCORE_TASK}`,
      // Disputes whose executor did not answer in time: the terminal's dispute_timeout decides.
      `* * * * * ${DEADLINES_TASK} ?jobKey=${DEADLINES_TASK}`,
      // The ledger's invariants, for /metrics (kassir_ledger_check_*): what was written since the previous
      // run (migration 065), and the whole ledger at 03:41 UTC (ledger.service.ts checkLedgerByJob).
      `41 * * * * ${LEDGER_CHECK_TASK} ?jobKey=${LEDGER_CHECK_TASK}`,
      // The system accounts' totals (migration 056), so that the dashboard sums a minute of entries.
      `* * * * * ${LEDGER_TOTALS_TASK} ?jobKey=${LEDGER_TOTALS_TASK}`,
      // The dashboard's payments summed per minute and hour (migration 063), so that it reads a minute of payments.
      `* * * * * ${DASHBOARD_ROLLUP_TASK} ?jobKey=${DASHBOARD_ROLLUP_TASK}`,
      // The staff alert rules (GET /admin/v1/alerts), told by Telegram once per cooldown.
      `* * * * * ${ALERTS_TASK} ?jobKey=${ALERTS_TASK}`,
      // The rate feeds: the job sleeps until the next feed is due; this line wakes it should the chain break.
      `* * * * * ${REFRESH_TASK} ?jobKey=${REFRESH_TASK}&jobKeyMode=preserve_run_at`,
      // The safety net of webhook delivery: events whose announcement was missed, leases that ran out.
      `* * * * * ${DISPATCH_TASK} ?jobKey=${DISPATCH_KEY}&jobKeyMode=preserve_run_at`,
      // Executors' deposit addresses (when configured): the job reschedules itself every
      // KASSIR_TRON_DEPOSIT_POLL_MS; the cron line restarts the chain should it ever break.
      ...(ctx.config.tronDeposits ? [`* * * * * ${DEPOSITS_TASK} ?jobKey=${DEPOSITS_TASK}&jobKeyMode=preserve_run_at`] : []),
    ],
    async start(runner: Runner) {
      const dispatchNow = () => scheduleDispatch(ctx.db);
      let wakeup: { stop(): Promise<void> } | undefined;
      try {
        await runner.addJob(EXPIRE_TASK, {}, { jobKey: EXPIRE_TASK, jobKeyMode: 'preserve_run_at' });
        // At every start too, not only at minute 29: a database that was off for months gets its months before the first write needs them.
        await runner.addJob(HISTORY_TASK, {}, { jobKey: HISTORY_TASK });
        if (ctx.config.tronDeposits) await runner.addJob(DEPOSITS_TASK, {}, { jobKey: DEPOSITS_TASK, jobKeyMode: 'preserve_run_at' });
        // When the database is back after an outage, open withdrawals get their send job again: one
        // whose job was running then may keep it locked for hours (its end could not be recorded).
        const resumeAfterOutage = () =>
          void resumeSends(ctx).catch((err: unknown) => ctx.log.error({ err }, 'could not resume sending open withdrawals after the database came back'));
        wakeup = await wakeDispatchOnNewEvents(databaseUrl, ctx.log, dispatchNow, resumeAfterOutage);
        // Events written while no instance was listening.
        await dispatchNow();
        const resumed = await resumeSends(ctx);
        if (resumed > 0) ctx.log.info({ withdrawals: resumed }, 'resumed sending open withdrawals');
      } catch (err) {
        await wakeup?.stop();
        throw err;
      }
      return wakeup;
    },
  };
}

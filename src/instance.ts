import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { runMigrations } from 'graphile-worker';
import { type Config, CREATE_BATCH_SLOW_MS, CREATE_BATCHES_IN_FLIGHT } from './config.js';
import type { AppContext } from './context.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from './db/embedded.js';
import { locateWritableHost } from './db/hosts.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { backgroundConnections, poolShare } from './db/share.js';
import { keepTablesInShape } from './db/upkeep.js';
import { buildApp } from './http/app.js';
import { NotificationBatches } from './incoming/notification-batches.js';
import { startWorker, type Worker } from './jobs/worker.js';
import { featureJobs } from './jobs.js';
import type { Logger } from './lib/logger.js';
import { IdentityCache } from './merchants/identity.cache.js';
import { ServiceMetrics } from './observability/metrics.js';
import { CreateBatches } from './payments/cascade/create-batches.js';
import { RefusalLog } from './payments/refusals.js';
import { LocalFileStore, S3FileStore } from './receipts/store.js';
import { RiskRules } from './risk/rules.js';
import { loadAdminToken, loadSecretBox } from './settings.js';
import { type TelegramActions, TelegramBot } from './telegram/bot.js';
import { startTelegram } from './telegram/runtime.js';

export interface RunningService {
  ctx: AppContext;
  app: FastifyInstance;
  /** Graceful stop: HTTP first (in-flight requests finish), then jobs, the pool, the embedded database. */
  stop(): Promise<void>;
}

/**
 * Starts everything `npm start` runs: the database (embedded unless DATABASE_URL is set),
 * migrations, the HTTP application and the job worker. `listen` false leaves the HTTP server
 * unbound (tests use inject or listen themselves).
 */
export async function startService(
  config: Config,
  log: Logger,
  options: {
    listen?: boolean;
    onNewAdminToken?: (token: string) => void;
    /** What the bot's buttons do (src/telegram/bot.ts); the payout feature's Take by default. */
    telegramActions?: TelegramActions;
  } = {},
): Promise<RunningService> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, log, config.embeddedSharedBuffers);
    databaseUrl = embedded.url;
  }
  await locateWritableHost(databaseUrl);
  const db = createPool(databaseUrl, config.dbPoolSize);
  let worker: Worker | undefined;
  let upkeep: { stop(): Promise<void> } | undefined;
  let telegram: { stop(): Promise<void> } | undefined;
  let app: FastifyInstance | undefined;
  const identities = new IdentityCache(log);
  let riskRules: RiskRules | undefined;
  try {
    await migrate(db, log);
    // The job queue's schema is needed by every instance, worker or not: status changes add
    // webhook jobs in their own transactions.
    await runMigrations({ pgPool: db });
    const box = await loadSecretBox(db, config.dataDir, config.masterKey);
    const adminToken = await loadAdminToken(db, config.adminToken);
    // Shown at once: should anything below fail, the one chance to see the token is not lost.
    if (adminToken.created) options.onNewAdminToken?.(adminToken.created);
    const files = config.s3 ? new S3FileStore(config.s3, log) : new LocalFileStore(join(config.dataDir, 'receipts'), log);
    // After the migrations: they create the triggers that announce what it listens for.
    await identities.start(databaseUrl);
    const risk = new RiskRules(db, box, log);
    await risk.start(databaseUrl);
    riskRules = risk;
    const refusals = new RefusalLog(db, log);
    const metrics = new ServiceMetrics({ runWorker: config.runWorker });
    const creates = new CreateBatches(db, log, metrics, {
      maxItems: config.createBatchSize,
      maxInFlight: CREATE_BATCHES_IN_FLIGHT,
      slowMs: CREATE_BATCH_SLOW_MS,
      sameAmountLimit: config.sameAmountLimit,
    });
    // Taken together as the creates are, and as many at once (docs/performance.md "Completion (issue 38)").
    const reportedTransfers = new NotificationBatches(db, { config, metrics }, log, {
      maxItems: config.completionBatchSize,
      maxInFlight: CREATE_BATCHES_IN_FLIGHT,
      slowMs: CREATE_BATCH_SLOW_MS,
    });
    const ctx: AppContext = {
      config,
      db,
      log,
      box,
      adminTokenHash: adminToken.hash,
      identities,
      files,
      refusals,
      creates,
      reportedTransfers,
      metrics,
      risk,
    };
    // Before the routes: linking and the webhook route reach the bot through the context.
    if (config.telegram) ctx.telegram = new TelegramBot(ctx, config.telegram, options.telegramActions ?? {});
    app = await buildApp(ctx);
    if (config.runWorker) {
      // The jobs reach the database through a share of the pool: a queue of their work never
      // stands in front of the requests' (src/db/share.ts).
      const jobs: AppContext = { ...ctx, db: poolShare(db, backgroundConnections(config.dbPoolSize)) };
      worker = await startWorker(jobs, featureJobs(jobs, databaseUrl));
      metrics.watchWorker(worker);
      upkeep = keepTablesInShape(db, log);
    }
    if (options.listen !== false) await app.listen({ host: config.host, port: config.port });
    // After listening: with a webhook, Telegram may call as soon as it is set.
    if (ctx.telegram) telegram = await startTelegram(ctx, ctx.telegram, databaseUrl, config.runWorker);
    const started = app;
    return {
      ctx,
      app: started,
      async stop() {
        await telegram?.stop();
        await started.close();
        // The last refusals recorded by requests that just finished, while the pool still serves.
        await refusals.drain();
        await upkeep?.stop();
        await worker?.stop();
        await identities.stop();
        await riskRules?.stop();
        await db.end();
        await embedded?.stop();
      },
    };
  } catch (err) {
    // Each part started so far is stopped, even if another fails to; the start's own error is
    // what the caller gets, a failure to stop is only logged.
    const undo = async (part: string, stop: () => Promise<void> | undefined) => {
      try {
        await stop();
      } catch (stopErr) {
        log.warn({ err: stopErr }, `could not stop the ${part} after a failed start`);
      }
    };
    await undo('Telegram bot', () => telegram?.stop());
    await undo('HTTP server', () => app?.close());
    await undo('table upkeep', () => upkeep?.stop());
    await undo('job worker', () => worker?.stop());
    await identities.stop();
    await undo('risk announcements', () => riskRules?.stop());
    await undo('database pool', () => db.end());
    await undo('embedded PostgreSQL', () => embedded?.stop());
    throw err;
  }
}

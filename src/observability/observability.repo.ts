import type { Queryable } from '../db/pool.js';
import { LEDGER_CHECK_SETTING, type LedgerCheckRecord } from '../ledger/ledger.service.js';

/** The job queue by task, as a scrape shows it. */
export interface JobsRow {
  task: string;
  ready: number;
  running: number;
  scheduled: number;
  failed: number;
  /** How long the task's oldest ready job has been due (0 when none is). */
  oldest_ready_seconds: number;
}

/** What a scrape reads from the database. */
export interface QueueState {
  jobs: JobsRow[];
  webhooks: { pending: number; oldest_seconds: number };
  /** The last ledger check's outcome; undefined when none ever ran. */
  ledgerCheck: { at: Date; ok: boolean; problems: number; ms: number } | undefined;
  /** Every feed-kept rate's freshness (a handful of rows: one per currency, and per terminal with its own feed). */
  rates: { currency: string; terminal_id: string | null; age_seconds: number | null; stale: boolean; failures: number }[];
}

/**
 * The job queue, the webhook outbox's backlog and the last ledger check, in one round trip. Cheap
 * by construction: graphile-worker's jobs are a few per task (scheduled sweeps, a retry job per
 * resource whose webhook is failing), pending webhook events are read through their partial index
 * (webhook_events_pending), and the ledger check is only read back (it runs hourly, and when the
 * operator asks), never run here.
 */
export async function readQueueState(db: Queryable): Promise<QueueState> {
  const { rows } = await db.query<{
    jobs: JobsRow[];
    webhooks: { pending: number; oldest_seconds: number };
    ledger: string | null;
    rates: QueueState['rates'];
  }>(
    `SELECT
       (SELECT coalesce(json_agg(j ORDER BY j.task), '[]'::json) FROM (
          SELECT task_identifier AS task,
                 count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now())::int AS ready,
                 count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running,
                 count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at > now())::int AS scheduled,
                 count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed,
                 coalesce(extract(epoch FROM now() - min(run_at) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now())), 0)::float8
                   AS oldest_ready_seconds
            FROM graphile_worker.jobs
           GROUP BY task_identifier) j) AS jobs,
       (SELECT json_build_object('pending', count(*)::int,
                                 'oldest_seconds', coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8)
          FROM webhook_events WHERE status = 'pending') AS webhooks,
       (SELECT value FROM settings WHERE key = $1) AS ledger,
       (SELECT coalesce(json_agg(json_build_object(
                 'currency', currency, 'terminal_id', terminal_id,
                 'age_seconds', extract(epoch FROM now() - fetched_at)::float8,
                 'stale', fetched_at IS NULL OR fetched_at < now() - make_interval(secs => max_age_seconds),
                 'failures', failures)), '[]'::json)
          FROM rates WHERE mode = 'feed') AS rates`,
    [LEDGER_CHECK_SETTING],
  );
  const row = rows[0]!;
  return { jobs: row.jobs, webhooks: row.webhooks, ledgerCheck: parseLedgerCheck(row.ledger), rates: row.rates };
}

function parseLedgerCheck(value: string | null): QueueState['ledgerCheck'] {
  if (value === null) return undefined;
  try {
    const record = JSON.parse(value) as LedgerCheckRecord;
    const at = new Date(record.at);
    if (Number.isNaN(at.getTime())) return undefined;
    return { at, ok: record.ok === true, problems: Number(record.problems) || 0, ms: Number(record.ms) || 0 };
  } catch {
    return undefined;
  }
}

/** The database answers and is migrated (what /healthz asks too). */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('SELECT 1 FROM schema_migrations LIMIT 1');
}

/** The job queue's tables can be read. */
export async function pingQueue(db: Queryable): Promise<void> {
  await db.query('SELECT 1 FROM graphile_worker.jobs LIMIT 1');
}

import { type Db, isDatabaseUnavailable } from '../db/pool.js';
import { pingDatabase, pingQueue } from './observability.repo.js';
import { TimeoutError, withTimeout } from './timeout.js';

/** How long each probe of /readyz may take before it counts as failed. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * - database: `ok`; `unavailable` (cannot be reached, or no answer in time); `error` (it answers,
 *   but the schema cannot be read: not migrated).
 * - jobs: `ok` (this instance's worker runs and the queue can be read); `disabled` (no worker here,
 *   KASSIR_WORKER=false: this instance only adds jobs, and the queue can be read); `stopped` (the
 *   worker ended); `starting`; `unavailable` (the queue cannot be read); `unknown` (no database).
 */
export interface Readiness {
  ready: boolean;
  checks: { database: 'ok' | 'unavailable' | 'error'; jobs: 'ok' | 'disabled' | 'stopped' | 'starting' | 'unavailable' | 'unknown' };
}

/**
 * Whether this instance can serve: its database answers, and its job worker runs (or it runs none,
 * by configuration) with the queue readable. Two small queries; unlike /healthz, which says only
 * that the process and its database are up, this says whether to send traffic here.
 */
export async function checkReadiness(db: Db, worker: { configured: boolean; running: boolean | undefined }): Promise<Readiness> {
  try {
    await withTimeout(pingDatabase(db), PROBE_TIMEOUT_MS);
  } catch (err) {
    const database = isDatabaseUnavailable(err) || err instanceof TimeoutError ? 'unavailable' : 'error';
    return { ready: false, checks: { database, jobs: 'unknown' } };
  }
  let queueReadable = true;
  try {
    await withTimeout(pingQueue(db), PROBE_TIMEOUT_MS);
  } catch {
    queueReadable = false;
  }
  const jobs: Readiness['checks']['jobs'] = !queueReadable
    ? 'unavailable'
    : !worker.configured
      ? 'disabled'
      : worker.running === undefined
        ? 'starting'
        : worker.running
          ? 'ok'
          : 'stopped';
  return { ready: jobs === 'ok' || jobs === 'disabled', checks: { database: 'ok', jobs } };
}

import type { Queryable } from '../db/pool.js';
import { PgCode, pgErrorCode } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { PendingRow } from '../incoming/messages.repo.js';

export interface DeviceRow {
  id: string;
  executor_id: string;
  name: string;
  created_at: Date;
  last_seen_at: Date | null;
  battery: number | null;
  app_version: string | null;
  revoked_at: Date | null;
}

const DEVICE = 'id, executor_id, name, created_at, last_seen_at, battery, app_version, revoked_at';

/** Registers a device; an unknown executor is NOT_FOUND. */
export async function insertDevice(db: Queryable, executorId: string, name: string, tokenHash: Buffer, sealedSecret: string): Promise<DeviceRow> {
  try {
    const { rows } = await db.query<DeviceRow>(
      `INSERT INTO devices (executor_id, name, token_hash, signing_secret) VALUES ($1, $2, $3, $4) RETURNING ${DEVICE}`,
      [executorId, name, tokenHash, sealedSecret],
    );
    return rows[0]!;
  } catch (err) {
    if (pgErrorCode(err) === PgCode.foreignKeyViolation) throw new DomainError('NOT_FOUND', `Executor ${executorId} not found`);
    throw err;
  }
}

/** The executor's devices still in use, oldest first. */
export async function listDevices(db: Queryable, executorId: string): Promise<DeviceRow[]> {
  const { rows } = await db.query<DeviceRow>(`SELECT ${DEVICE} FROM devices WHERE executor_id = $1 AND revoked_at IS NULL ORDER BY created_at`, [executorId]);
  return rows;
}

/** Revokes one of the executor's devices; false when it has no such device in use. */
export async function revokeDevice(db: Queryable, executorId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE devices SET revoked_at = now() WHERE id = $1 AND executor_id = $2 AND revoked_at IS NULL', [id, executorId]);
  return rowCount === 1;
}

/** The device a token names, with whether its executor is active; revoked devices are not found. */
export async function findDeviceByToken(db: Queryable, tokenHash: Buffer): Promise<(DeviceRow & { executor_active: boolean }) | undefined> {
  const { rows } = await db.query<DeviceRow & { executor_active: boolean }>(
    `SELECT d.id, d.executor_id, d.name, d.created_at, d.last_seen_at, d.battery, d.app_version, d.revoked_at, e.is_active AS executor_active
       FROM devices d JOIN executors e ON e.id = d.executor_id
      WHERE d.token_hash = $1 AND d.revoked_at IS NULL`,
    [tokenHash],
  );
  return rows[0];
}

/** The device reported now (a message or a heartbeat), with what it says of itself when it says it. */
export async function markSeen(db: Queryable, id: string, state: { battery?: number; appVersion?: string }): Promise<void> {
  const { rows } = await db.query<{ executor_id: string }>(
    'UPDATE devices SET last_seen_at = now(), battery = COALESCE($2, battery), app_version = COALESCE($3, app_version) WHERE id = $1 RETURNING executor_id',
    [id, state.battery ?? null, state.appVersion ?? null],
  );
  // A phone heard from brings its executor's requisites back at once (no write when they never left).
  if (rows[0]) await db.query('UPDATE executors SET devices_silent = false WHERE id = $1 AND devices_silent', [rows[0].executor_id]);
}

/** Sets how long the executor's phones may be silent (null: the rule is off, and the executor is not silent). */
export async function setSilence(db: Queryable, executorId: string, minutes: number | null): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE executors SET device_silence_minutes = $2, devices_silent = devices_silent AND $2::int IS NOT NULL WHERE id = $1',
    [executorId, minutes],
  );
  return rowCount === 1;
}

/**
 * Marks silent the executors with the rule on whose phones (at least one in use) have all been
 * silent longer than allowed, and not silent the others; answers those that changed. Executor
 * rows, then (by trigger) their requisites: the lock order of every executor change.
 */
export async function sweepSilence(db: Queryable): Promise<{ id: string; devices_silent: boolean; device_silence_minutes: number | null; at: Date }[]> {
  const { rows } = await db.query<{ id: string; devices_silent: boolean; device_silence_minutes: number | null; at: Date }>(
    `WITH state AS (
       SELECT e.id,
              e.device_silence_minutes IS NOT NULL
              AND EXISTS (SELECT 1 FROM devices d WHERE d.executor_id = e.id AND d.revoked_at IS NULL)
              AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.executor_id = e.id AND d.revoked_at IS NULL
                                AND coalesce(d.last_seen_at, d.created_at) > now() - make_interval(mins => e.device_silence_minutes)) AS silent
         FROM executors e
     )
     UPDATE executors e SET devices_silent = s.silent FROM state s
      WHERE s.id = e.id AND e.devices_silent IS DISTINCT FROM s.silent
      RETURNING e.id, e.devices_silent, e.device_silence_minutes, now() AS at`,
  );
  return rows;
}

/** The device's sealed signing secret (for the forwarders' signatures). */
export async function findSigningSecret(db: Queryable, deviceId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ signing_secret: string | null }>('SELECT signing_secret FROM devices WHERE id = $1', [deviceId]);
  return rows[0]?.signing_secret ?? undefined;
}

/**
 * Records that a signature stamp (SmsForwarder's timestamp) came with this body: true the first
 * time or again with the same body (a retry), false when it comes back with another body.
 * Stamps older than an hour are forgotten (the signature's window is shorter).
 */
export async function claimStamp(db: Queryable, deviceId: string, stamp: string, bodyHash: Buffer): Promise<boolean> {
  await db.query(`DELETE FROM device_hook_stamps WHERE device_id = $1 AND created_at < now() - interval '1 hour'`, [deviceId]);
  const inserted = await db.query('INSERT INTO device_hook_stamps (device_id, stamp, body_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
    deviceId,
    stamp,
    bodyHash,
  ]);
  if (inserted.rowCount === 1) return true;
  const { rows } = await db.query<{ body_hash: Buffer }>('SELECT body_hash FROM device_hook_stamps WHERE device_id = $1 AND stamp = $2', [deviceId, stamp]);
  return rows[0]?.body_hash.equals(bodyHash) ?? false;
}

/** The PENDING payments waiting on the executor's requisites, soonest to expire first (what a kept message may be linked to). */
export async function pendingOnRequisites(db: Queryable, executorId: string): Promise<PendingRow[]> {
  const { rows } = await db.query<PendingRow>(
    `SELECT p.id, p.requisite_id, p.payer_amount::text, p.req_currency AS payer_currency, p.valid_until, p.created_at,
            (SELECT min(c.created_at) FROM payment_confirmations c WHERE c.payment_id = p.id) AS payer_confirmed_at
       FROM payments p JOIN requisites r ON r.id = p.requisite_id
      WHERE r.executor_id = $1 AND p.status = 'PENDING'
      ORDER BY p.valid_until LIMIT 500`,
    [executorId],
  );
  return rows;
}

/**
 * The money the executor's requisites received today (UTC), per currency: the payments completed
 * since midnight, at the amount the payer sent — not what was handed out, which the cards' limits count.
 * Read on payments_executor_created: a payment completes within its lifetime (an hour or so) of
 * being created; one completed by a dispute's decision days later is the dispute's, not today's takings.
 */
export async function receivedToday(db: Queryable, executorId: string): Promise<{ currency: string; amount: string; count: number }[]> {
  const { rows } = await db.query<{ currency: string; amount: string; count: number }>(
    `WITH today AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start)
     SELECT p.req_currency AS currency, sum(p.payer_amount)::text AS amount, count(*)::int AS count
       FROM payments p, today
      WHERE p.executor_id = $1 AND p.created_at >= today.start - interval '1 day'
        AND p.status IN ('COMPLETED', 'COMPLETED_APPEAL') AND p.completed_at >= today.start
      GROUP BY p.req_currency ORDER BY p.req_currency`,
    [executorId],
  );
  return rows;
}

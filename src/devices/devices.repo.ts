import type { Queryable, Tx } from '../db/pool.js';
import { PgCode, pgConstraint, pgErrorCode } from '../db/pool.js';
import { DomainError } from '../errors.js';

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
export async function sweepSilence(db: Queryable): Promise<{ id: string; devices_silent: boolean }[]> {
  const { rows } = await db.query<{ id: string; devices_silent: boolean }>(
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
      RETURNING e.id, e.devices_silent`,
  );
  return rows;
}

export type MessageStatus = 'matched' | 'unmatched' | 'ambiguous' | 'unreadable' | 'ignored' | 'resolved';

export interface MessageRow {
  id: string;
  device_id: string;
  executor_id: string;
  text: string;
  sender: string | null;
  received_at: Date | null;
  status: MessageStatus;
  reason: string | null;
  amount: string | null;
  currency: string | null;
  digits: string | null;
  parsed_bank: string | null;
  requisite_id: string | null;
  notification_id: string | null;
  resolved_note: string | null;
  created_at: Date;
  /** The payment the message's notification completed or probably belongs to (read with it). */
  payment_id?: string | null;
}

const MESSAGE =
  'm.id, m.device_id, m.executor_id, m.text, m.sender, m.received_at, m.status, m.reason, m.amount::text, m.currency, m.digits, m.parsed_bank, m.requisite_id, m.notification_id, m.resolved_note, m.created_at, coalesce(n.payment_id, n.candidate_payment_id) AS payment_id';

export async function findMessageByDedupeKey(db: Queryable, key: Buffer): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE} FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id WHERE m.dedupe_key = $1`,
    [key],
  );
  return rows[0];
}

export function isDuplicateMessage(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'device_messages_dedupe_key_key';
}

export type NewMessage = Omit<MessageRow, 'id' | 'created_at' | 'resolved_note' | 'payment_id'> & { dedupe_key: Buffer };

export async function insertMessage(tx: Queryable, m: NewMessage): Promise<MessageRow> {
  const { rows } = await tx.query<{ id: string }>(
    `INSERT INTO device_messages (device_id, executor_id, text, sender, received_at, status, reason, amount, currency, digits, parsed_bank, requisite_id, notification_id, dedupe_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
    [
      m.device_id,
      m.executor_id,
      m.text,
      m.sender,
      m.received_at,
      m.status,
      m.reason,
      m.amount,
      m.currency,
      m.digits,
      m.parsed_bank,
      m.requisite_id,
      m.notification_id,
      m.dedupe_key,
    ],
  );
  return (await findMessage(tx, m.executor_id, rows[0]!.id))!;
}

/** One of the executor's messages (owner-scoped: another executor's is not found); `lock` takes it for a change. */
export async function findMessage(db: Queryable, executorId: string | null, id: string, lock = false): Promise<MessageRow | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE} FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id
      WHERE m.id = $1 AND ($2::uuid IS NULL OR m.executor_id = $2)${lock ? ' FOR UPDATE OF m' : ''}`,
    [id, executorId],
  );
  return rows[0];
}

/** Messages newest first: one executor's (or every executor's for the operator), optionally in one status. */
export async function listMessages(
  db: Queryable,
  filter: { executorId?: string; status?: MessageStatus; limit: number; offset: number },
): Promise<{ rows: MessageRow[]; total: number }> {
  const { rows } = await db.query<MessageRow & { total: string }>(
    `SELECT ${MESSAGE}, count(*) OVER () AS total FROM device_messages m LEFT JOIN notifications n ON n.id = m.notification_id
      WHERE ($1::uuid IS NULL OR m.executor_id = $1) AND ($2::text IS NULL OR m.status = $2)
      ORDER BY m.created_at DESC, m.id LIMIT $3 OFFSET $4`,
    [filter.executorId ?? null, filter.status ?? null, filter.limit, filter.offset],
  );
  return { rows, total: Number(rows[0]?.total ?? 0) };
}

export async function resolveMessage(tx: Tx, id: string, change: { notificationId?: string; requisiteId?: string; note: string }): Promise<void> {
  await tx.query(
    `UPDATE device_messages SET status = 'resolved', resolved_note = $2, notification_id = COALESCE($3, notification_id), requisite_id = COALESCE($4, requisite_id)
      WHERE id = $1`,
    [id, change.note, change.notificationId ?? null, change.requisiteId ?? null],
  );
}

/** The executor's requisites in a currency, with their values' digits, for matching a message. */
export async function requisitesForMatching(
  db: Queryable,
  executorId: string,
  currency: string,
): Promise<{ id: string; type: string; digits: string; bank_code: string | null }[]> {
  const { rows } = await db.query<{ id: string; type: string; digits: string; bank_code: string | null }>(
    `SELECT id, type, regexp_replace(value, '\\D', '', 'g') AS digits, bank_code FROM requisites WHERE executor_id = $1 AND currency = $2`,
    [executorId, currency],
  );
  return rows;
}

/** Which of these requisites have a PENDING payment of exactly this amount. */
export async function requisitesWithPending(db: Queryable, requisiteIds: string[], amount: string): Promise<string[]> {
  if (requisiteIds.length === 0) return [];
  const { rows } = await db.query<{ requisite_id: string }>(
    `SELECT DISTINCT requisite_id FROM payments WHERE requisite_id = ANY($1::uuid[]) AND payer_amount = $2 AND status = 'PENDING'`,
    [requisiteIds, amount],
  );
  return rows.map((row) => row.requisite_id);
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
export async function pendingOnRequisites(
  db: Queryable,
  executorId: string,
): Promise<{ id: string; requisite_id: string; payer_amount: string; payer_currency: string; valid_until: Date; created_at: Date }[]> {
  const { rows } = await db.query<{ id: string; requisite_id: string; payer_amount: string; payer_currency: string; valid_until: Date; created_at: Date }>(
    `SELECT p.id, p.requisite_id, p.payer_amount::text, p.req_currency AS payer_currency, p.valid_until, p.created_at
       FROM payments p JOIN requisites r ON r.id = p.requisite_id
      WHERE r.executor_id = $1 AND p.status = 'PENDING'
      ORDER BY p.valid_until LIMIT 500`,
    [executorId],
  );
  return rows;
}

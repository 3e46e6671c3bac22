import type { Queryable } from './db/pool.js';

/**
 * A stored setting's value, or undefined when it was never set. `lock` takes its row for a change
 * in the same transaction (a setting never stored has no row to lock: its first two writers may
 * both read the default).
 */
export async function getSetting(db: Queryable, key: string, lock = false): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>(`SELECT value FROM settings WHERE key = $1${lock ? ' FOR UPDATE' : ''}`, [key]);
  return rows[0]?.value;
}

/** Inserts the value unless another instance got there first; returns the stored value. */
export async function initSetting(db: Queryable, key: string, value: string): Promise<string> {
  await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
  return (await getSetting(db, key))!;
}

/** Sets a setting, replacing what was stored. */
export async function putSetting(db: Queryable, key: string, value: string): Promise<void> {
  await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()', [key, value]);
}

/**
 * Stores `at` (a moment, as ISO text) under `key` unless the moment stored there is less than
 * `minutes` before it; true when it stored it. One row's conditional upsert: of two transactions
 * claiming one key at once, the second waits for the first and then finds it taken.
 */
export async function claimMoment(db: Queryable, key: string, at: Date, minutes: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO settings (key, value) VALUES ($1, $2)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
      WHERE settings.value::timestamptz <= $2::timestamptz - make_interval(mins => $3)`,
    [key, at.toISOString(), minutes],
  );
  return rowCount === 1;
}

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db, Queryable } from './db/pool.js';
import { hashToken, randomToken, SecretBox } from './lib/crypto.js';
import { getSetting, initSetting } from './settings.repo.js';

/**
 * The master key that seals merchant secrets: `KASSIR_MASTER_KEY` (base64 of 32 bytes), or a
 * key file created on first start under the data directory. The database records a fingerprint,
 * so a service started with the wrong key refuses to start instead of failing every signature.
 */
export async function loadSecretBox(db: Db, dataDir: string, configured: string | undefined): Promise<SecretBox> {
  let key: Buffer;
  if (configured) {
    key = Buffer.from(configured, 'base64');
    if (key.length !== 32) throw new Error('KASSIR_MASTER_KEY must be the base64 encoding of 32 random bytes (openssl rand -base64 32)');
  } else {
    const file = join(dataDir, 'master.key');
    if (!existsSync(file)) {
      await mkdir(dataDir, { recursive: true });
      await writeFile(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
    key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  }
  const box = new SecretBox(key);
  const stored = await initSetting(db, 'master_key_fingerprint', box.fingerprint());
  if (stored !== box.fingerprint()) {
    throw new Error(
      'This database was set up with a different master key. Start Kassir with the KASSIR_MASTER_KEY (or the ' +
        `${join(dataDir, 'master.key')} file) it was first started with.`,
    );
  }
  return box;
}

/**
 * The operator's bearer token: `ADMIN_TOKEN` when set; otherwise generated on first start,
 * stored as a hash and returned once (`created`) so that it can be printed once.
 */
export async function loadAdminToken(db: Db, configured: string | undefined): Promise<{ hash: Buffer; created?: string }> {
  if (configured) return { hash: hashToken(configured) };
  const existing = await getSetting(db, 'admin_token_sha256');
  if (existing) return { hash: Buffer.from(existing, 'hex') };
  const token = randomToken('adm_', 32);
  const stored = await initSetting(db, 'admin_token_sha256', hashToken(token).toString('hex'));
  const hash = Buffer.from(stored, 'hex');
  return hash.equals(hashToken(token)) ? { hash, created: token } : { hash };
}

/**
 * The operator's alert thresholds (issue 37 item 3; GET/PUT /admin/v1/alerts): one JSON setting,
 * each field falling back to its default, so that a new field needs no migration. The Prometheus
 * rules in docs/alerts.rules.yml are written with the defaults.
 */
export interface AlertSettings {
  /** A rule tells the same people of the same thing at most once in this many minutes. */
  cooldown_minutes: number;
  /** A merchant's webhook endpoint is failing after this many failed attempts in a row (the merchant and support are told). */
  webhook_failures: number;
  /** Conversion (completed ÷ ended payments) below this percent over the window alerts. */
  conversion_min_percent: number;
  /** The window of the conversion rule, minutes: payments created in it that have ended. */
  conversion_window_minutes: number;
  /** Fewer ended payments than this in the window say nothing of conversion: no alert. */
  conversion_min_payments: number;
}

export const ALERT_SETTINGS_KEY = 'alert_rules';

export const ALERT_DEFAULTS: Readonly<AlertSettings> = {
  cooldown_minutes: 30,
  webhook_failures: 3,
  conversion_min_percent: 20,
  conversion_window_minutes: 60,
  conversion_min_payments: 10,
};

/** The stored alert settings over the defaults; a field missing or unreadable keeps its default. */
export function parseAlertSettings(value: string | undefined): AlertSettings {
  let stored: Record<string, unknown> = {};
  try {
    stored = value ? (JSON.parse(value) as Record<string, unknown>) : {};
  } catch {
    stored = {};
  }
  const settings = { ...ALERT_DEFAULTS };
  for (const key of Object.keys(ALERT_DEFAULTS) as (keyof AlertSettings)[]) {
    const figure = stored[key];
    if (typeof figure === 'number' && Number.isFinite(figure)) settings[key] = figure;
  }
  return settings;
}

/** The alert settings now (one read of the settings table). */
export async function readAlertSettings(db: Queryable): Promise<AlertSettings> {
  return parseAlertSettings(await getSetting(db, ALERT_SETTINGS_KEY));
}

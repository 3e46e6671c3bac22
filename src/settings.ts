import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from './db/pool.js';
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

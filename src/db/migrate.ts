import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Db } from './pool.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const FUNCTIONS_DIR = fileURLToPath(new URL('./functions/', import.meta.url));
// Any constant works; it only has to be the same for every instance of Kassir.
const MIGRATION_LOCK = 7_461_001;

/**
 * Applies `migrations/NNN_name.sql` in order, each in its own transaction, recording applied
 * names in `schema_migrations`; then the repeatable `functions/*.sql` (CREATE OR REPLACE, the one
 * current text of the database functions, e.g. the cascade's payment_create_window), every time,
 * in one transaction. An advisory lock makes concurrent starts of several instances safe: the
 * second waits and then finds nothing left to do but the (idempotent) functions.
 */
export async function migrate(db: Db, log: { info(msg: string): void }): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
  const client = await db.connect();
  const applied: string[] = [];
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(MIGRATIONS_DIR + file, 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (err) {
        // A failed ROLLBACK means a broken connection, closed below; the migration's error is the one to report.
        broken = await client.query('ROLLBACK').then(
          () => undefined,
          (rollbackErr: Error) => rollbackErr,
        );
        throw new Error(`migration ${file} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      log.info(`applied migration ${file}`);
      applied.push(file);
    }
    // A database migrated by a newer release (an upgrade rolling through the instances: the new
    // release has started, this older one still runs) keeps the newer release's functions: they
    // are written for its schema, and the older release's calls are kept working by the rule that
    // migrations expand first and contract a release later (docs/operations.md "Upgrades").
    const newer = [...done].filter((name) => !files.includes(name) && /^\d{3}_/.test(name)).sort();
    if (newer.length > 0) {
      log.info(`the database is newer than this release (migration ${newer.at(-1)}); keeping its database functions`);
      return applied;
    }
    // The repeatable functions, every start, after the migrations they may rely on.
    const functions = (await readdir(FUNCTIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
    try {
      await client.query('BEGIN');
      for (const file of functions) await client.query(await readFile(FUNCTIONS_DIR + file, 'utf8'));
      await client.query('COMMIT');
    } catch (err) {
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (rollbackErr: Error) => rollbackErr,
      );
      throw new Error(`database functions (src/db/functions/) failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  } finally {
    // The lock belongs to the session: when the unlock fails, closing the connection releases it.
    broken ??= await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).then(
      () => undefined,
      (unlockErr: Error) => unlockErr,
    );
    client.release(broken);
  }
  return applied;
}

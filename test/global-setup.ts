import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from 'graphile-worker';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { findChromium } from './browser.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A connection URL with the right to create databases. */
    adminDatabaseUrl: string;
    /** A migrated database that each test file copies. */
    templateDatabase: string;
    /** Names this run's per-file databases, so teardown can drop them all. */
    runId: string;
    /** The Chromium that browser tests launch (found once: the bundled one unpacks on first use). */
    chromiumPath: string;
  }
}

const silent = { info: () => undefined, debug: () => undefined };

/**
 * Tests run against a real PostgreSQL: the server in DATABASE_URL when set (CI runs the suite
 * once that way), otherwise an embedded one started here — the same default users get.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | undefined;
  let dataDir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'kassir-test-'));
    embedded = await startEmbeddedPostgres(dataDir, undefined, silent);
    adminUrl = embedded.url;
  }
  const runId = `${process.pid}_${Date.now()}`;
  const template = `kassir_tpl_${runId}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  const pool = createPool(url.toString(), 2);
  await migrate(pool, silent);
  await runMigrations({ pgPool: pool });
  await pool.end();
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  project.provide('runId', runId);
  const browser = await findChromium();
  console.log(
    `browser tests use ${browser.source === 'bundled' ? 'the Chromium bundled in @sparticuz/chromium' : `Chromium from ${browser.source}`}: ${browser.path}`,
  );
  project.provide('chromiumPath', browser.path);

  return async () => {
    // Drop what the run created, including per-file databases left by a crashed worker.
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`, [
      template,
      `kassir_t_${runId}_%`,
    ]);
    for (const row of rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    await admin.end();
    await embedded?.stop();
    // Run as root from a private folder, the cluster is linked from dataDir, not inside it.
    if (embedded) await rm(embedded.dir, { recursive: true, force: true });
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}

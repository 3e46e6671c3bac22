/**
 * `kassir backup <dir>` and `kassir restore <dir>` (issue 39 item 3, docs/operations.md "Backups"):
 * PostgreSQL's own dump (pg_dump, custom format) of the service's database, the receipt store's
 * files beside it, and a manifest with a checksum of every file and the ledger's figures at the
 * time. A restore goes into an empty database only, checks every checksum before it changes
 * anything, and ends by running the ledger check on what it restored.
 *
 * The master key (KASSIR_MASTER_KEY) is never written into a backup: it decrypts what the database
 * keeps encrypted, so a backup and its key kept together are one theft away from everything.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Config } from '../config.js';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../db/embedded.js';
import { createPool, type Db } from '../db/pool.js';
import { checkLedger, type LedgerProblem } from '../ledger/ledger.service.js';
import { databaseFacts, type LedgerFigures, ledgerFigures, serverMajor, storedFileKeys, userTables } from './backup.repo.js';
import { BackupError, findPgTool } from './pg-tools.js';

export { BackupError } from './pg-tools.js';

export const MANIFEST = 'manifest.json';
const DUMP = 'database.dump';
const RECEIPTS = 'receipts';
const FORMAT = 'kassir-backup/1';

/** Where progress lines go (the CLI prints them as they come). */
export type Progress = (line: string) => void;

export interface Manifest {
  format: string;
  created_at: string;
  kassir_version: string;
  database: { server_version: string; server_major: number; size_bytes: number; schema_migration: string | null; dump: string; pg_dump_major: number };
  receipts: { store: 'local'; files: number } | { store: 's3'; bucket: string; prefix: string; keys: string[]; note: string };
  ledger: { ok: boolean; problems: LedgerProblem[]; figures: LedgerFigures };
  master_key: string;
  /** Every file of the backup but this manifest: its path (with /) → size and sha256. */
  files: Record<string, { size: number; sha256: string }>;
  /** sha256 of this manifest written without this field: an edited or cut manifest is refused. */
  manifest_sha256?: string;
}

const MASTER_KEY_NOTE =
  'not in this backup: KASSIR_MASTER_KEY (the service environment: EnvironmentFile, compose .env or secret store) decrypts what the database keeps encrypted; keep a copy of it in another place than the backups (a password manager, a sealed envelope), never beside them';

function kassirVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every file under `root`, as paths relative to it with / between folders, sorted. */
async function filesUnder(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const found: string[] = [];
  const walk = async (dir: string) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) found.push(relative(root, path).split(sep).join('/'));
    }
  };
  await walk(root);
  return found.sort();
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A libpq connection string without its password (which goes to the tools in PGPASSWORD, never on
 * their command line, where any local user reads it), and a form safe to print.
 */
function splitPassword(url: string): { url: string; password: string | undefined; shown: string } {
  const match = /^(postgres(?:ql)?:\/\/[^:@/]*):([^@/]*)@/.exec(url);
  if (!match) return { url, password: undefined, shown: url };
  const bare = url.replace(match[0], `${match[1]}@`);
  return { url: bare, password: decodeURIComponent(match[2]!), shown: bare };
}

/** The service's database: DATABASE_URL, or the embedded one (the running instance's, else started here). */
async function openDatabase(config: Config, progress: Progress): Promise<{ url: string; stop(): Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: async () => undefined };
  const cluster = join(config.dataDir, 'pg');
  const pidFile = existsSync(cluster) ? join(realpathSync(cluster), 'postmaster.pid') : undefined;
  if (pidFile && existsSync(pidFile)) {
    // A running Kassir's embedded server: its port is the fourth line of postmaster.pid.
    const lines = readFileSync(pidFile, 'utf8').split('\n');
    const pid = Number(lines[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {
      alive = false;
    }
    if (alive) {
      progress(`database: the embedded PostgreSQL of the running Kassir (${cluster}, port ${lines[3]})`);
      return { url: `postgres://kassir:kassir@127.0.0.1:${lines[3]}/kassir`, stop: async () => undefined };
    }
  }
  progress(`database: starting the embedded PostgreSQL in ${cluster}`);
  const quiet = { info: () => undefined, debug: () => undefined };
  const embedded: EmbeddedDatabase = await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort, quiet, config.embeddedSharedBuffers);
  return { url: embedded.url, stop: () => embedded.stop() };
}

function runTool(path: string, args: string[], password: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, {
      env: { ...process.env, ...(password === undefined ? {} : { PGPASSWORD: password }), LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new BackupError(`${path.split(sep).pop()} failed (exit code ${code}): ${stderr.trim().split('\n').slice(-5).join(' ')}`)),
    );
  });
}

async function withPool<T>(url: string, work: (db: Db) => Promise<T>): Promise<T> {
  const pool = createPool(url, 2);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

function manifestHash(manifest: Manifest): string {
  const { manifest_sha256: _ignored, ...rest } = manifest;
  return createHash('sha256')
    .update(JSON.stringify(rest, null, 2))
    .digest('hex');
}

/** Writes a backup of the service's database and receipt store into `dir` (new or empty). */
export async function backup(config: Config, dir: string, progress: Progress, env: NodeJS.ProcessEnv = process.env): Promise<Manifest> {
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new BackupError(`${dir} is not empty: a backup goes into a new or empty folder, so that it never mixes with another one.`);
  }
  const database = await openDatabase(config, progress);
  try {
    const { url, password, shown } = splitPassword(database.url);
    const facts = await withPool(database.url, databaseFacts);
    if (facts.schemaMigration === null) throw new BackupError(`the database at ${shown} holds no Kassir schema (no schema_migrations): nothing to back up.`);
    progress(`database: ${shown} (PostgreSQL ${facts.serverVersion}, ${megabytes(facts.sizeBytes)}, schema at ${facts.schemaMigration})`);
    const pgDump = findPgTool('pg_dump', facts.serverMajor, env);
    // Only the operator's user reads a backup: it holds every payment and every receipt.
    await mkdir(dir, { recursive: true, mode: 0o700 });

    // The ledger is checked and counted in the very snapshot pg_dump copies (an exported
    // snapshot of a repeatable-read transaction, held open until the dump ends): the figures in
    // the manifest are the dump's own even while the service keeps taking payments.
    progress(`database: pg_dump ${pgDump.major} (${pgDump.path}) → ${DUMP}`);
    const started = Date.now();
    const ledger = await withPool(database.url, async (pool) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const snapshot = (await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0]!.id;
        const dumped = runTool(
          pgDump.path,
          ['--format=custom', '--compress=6', `--snapshot=${snapshot}`, `--file=${join(dir, DUMP)}`, `--dbname=${url}`],
          password,
        );
        // Counted while the dump runs: both read the same snapshot.
        const checked = { ...(await checkLedger(client)), figures: await ledgerFigures(client) };
        await dumped;
        await client.query('COMMIT');
        return checked;
      } finally {
        client.release();
      }
    });
    progress(
      `ledger: ${ledger.ok ? 'OK' : `${ledger.problems.length} problem(s)`}; ${ledger.figures.transactions} transactions, ${ledger.figures.payments} payments`,
    );
    await chmod(join(dir, DUMP), 0o600);
    const dumpSize = (await stat(join(dir, DUMP))).size;
    progress(`database: ${DUMP} written, ${megabytes(dumpSize)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const files: Manifest['files'] = { [DUMP]: { size: dumpSize, sha256: await sha256File(join(dir, DUMP)) } };
    let receipts: Manifest['receipts'];
    if (config.s3) {
      const keys = await withPool(database.url, storedFileKeys);
      receipts = {
        store: 's3',
        bucket: config.s3.bucket,
        prefix: config.s3.prefix,
        keys,
        note: "the files stay in the bucket: keep them with the bucket's own versioning and replication (this backup lists the keys the database points at)",
      };
      progress(
        `receipts: in the S3 bucket ${config.s3.bucket} (${keys.length} keys listed in the manifest; the bucket's versioning and replication keep the files)`,
      );
    } else {
      const root = join(config.dataDir, RECEIPTS);
      const names = await filesUnder(root);
      progress(`receipts: copying ${names.length} file(s) from ${root}`);
      let bytes = 0;
      for (const name of names) {
        const target = join(dir, RECEIPTS, ...name.split('/'));
        await mkdir(dirname(target), { recursive: true });
        await copyFile(join(root, ...name.split('/')), target);
        const size = (await stat(target)).size;
        bytes += size;
        files[`${RECEIPTS}/${name}`] = { size, sha256: await sha256File(target) };
      }
      receipts = { store: 'local', files: names.length };
      progress(`receipts: ${names.length} file(s), ${megabytes(bytes)}`);
    }

    const manifest: Manifest = {
      format: FORMAT,
      created_at: new Date().toISOString(),
      kassir_version: kassirVersion(),
      database: {
        server_version: facts.serverVersion,
        server_major: facts.serverMajor,
        size_bytes: facts.sizeBytes,
        schema_migration: facts.schemaMigration,
        dump: DUMP,
        pg_dump_major: pgDump.major,
      },
      receipts,
      ledger,
      master_key: MASTER_KEY_NOTE,
      files,
    };
    manifest.manifest_sha256 = manifestHash(manifest);
    await writeFile(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    progress(`manifest: ${MANIFEST} (${Object.keys(files).length} file(s) with their sha256)`);
    return manifest;
  } finally {
    await database.stop();
  }
}

/** Reads the manifest and checks it and every file it names; throws BackupError naming the first mismatch. */
export async function verifyBackup(dir: string, progress: Progress): Promise<Manifest> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (err) {
    throw new BackupError(
      `${join(dir, MANIFEST)} cannot be read (${err instanceof Error ? err.message : String(err)}): not a Kassir backup, or a damaged one.`,
    );
  }
  if (manifest.format !== FORMAT) throw new BackupError(`${join(dir, MANIFEST)} is not a ${FORMAT} manifest (format: ${String(manifest.format)}).`);
  if (manifest.manifest_sha256 !== manifestHash(manifest)) {
    throw new BackupError(`${join(dir, MANIFEST)} was changed after the backup was written (its own checksum does not match): refusing to restore from it.`);
  }
  const names = Object.keys(manifest.files);
  if (!names.includes(DUMP)) throw new BackupError(`the manifest names no ${DUMP}: refusing to restore.`);
  progress(`checksums: verifying ${names.length} file(s)`);
  for (const name of names) {
    const expected = manifest.files[name]!;
    if (name.split('/').includes('..')) throw new BackupError(`the manifest names a file outside the backup (${name}): refusing to restore.`);
    const path = join(dir, ...name.split('/'));
    const size = existsSync(path) ? (await stat(path)).size : -1;
    if (size === -1) throw new BackupError(`${name} is missing from the backup: refusing to restore.`);
    if (size !== expected.size || (await sha256File(path)) !== expected.sha256) {
      throw new BackupError(`${name} does not match its checksum in the manifest (damaged or changed): refusing to restore.`);
    }
  }
  progress('checksums: every file matches');
  return manifest;
}

export interface RestoreSummary {
  manifest: Manifest;
  ledger: { ok: boolean; problems: LedgerProblem[]; figures: LedgerFigures };
  /** Whether the restored ledger's figures equal those the backup recorded. */
  figuresMatch: boolean;
  receipts: number;
}

/**
 * Restores a backup into the service's database, which must be empty, and its receipt store.
 * Nothing is changed until the checksums, the target database's emptiness, the tools' versions
 * and the receipt folder have all been checked.
 */
export async function restore(config: Config, dir: string, progress: Progress, env: NodeJS.ProcessEnv = process.env): Promise<RestoreSummary> {
  const manifest = await verifyBackup(dir, progress);
  progress(
    `backup: of ${manifest.created_at}, Kassir ${manifest.kassir_version}, PostgreSQL ${manifest.database.server_version}, schema at ${manifest.database.schema_migration}`,
  );
  const receiptNames = Object.keys(manifest.files).filter((name) => name.startsWith(`${RECEIPTS}/`));
  const receiptRoot = join(config.dataDir, RECEIPTS);
  if (manifest.receipts.store === 'local' && config.s3) {
    throw new BackupError(
      `the backup holds its receipts as files, but KASSIR_S3_BUCKET is set: restore with the local store (unset KASSIR_S3_BUCKET), then copy ${receiptRoot} into the bucket under ${config.s3.prefix}.`,
    );
  }
  if (!config.s3 && receiptNames.length > 0 && (await filesUnder(receiptRoot)).length > 0) {
    throw new BackupError(`${receiptRoot} already holds files: a restore needs an empty receipt store (choose another KASSIR_DATA_DIR). Nothing was changed.`);
  }

  const database = await openDatabase(config, progress);
  try {
    const { url, password, shown } = splitPassword(database.url);
    const { tables, major } = await withPool(database.url, async (db) => ({ tables: await userTables(db), major: await serverMajor(db) }));
    if (tables.length > 0) {
      throw new BackupError(
        `the database at ${shown} is not empty (${tables.length} table(s), e.g. ${tables.slice(0, 3).join(', ')}): a restore goes into an empty database only. ` +
          'Create one (CREATE DATABASE kassir_restored) and point DATABASE_URL at it. Nothing was changed.',
      );
    }
    if (major < manifest.database.server_major) {
      throw new BackupError(
        `the database at ${shown} runs PostgreSQL ${major}, older than the backup's ${manifest.database.server_major}: restore into PostgreSQL ${manifest.database.server_major} or newer. Nothing was changed.`,
      );
    }
    const pgRestore = findPgTool('pg_restore', Math.max(major, manifest.database.pg_dump_major), env);
    progress(`database: pg_restore ${pgRestore.major} (${pgRestore.path}) into ${shown} (PostgreSQL ${major}, empty)`);
    const started = Date.now();
    // One transaction: a restore that fails half-way leaves the database as empty as it was.
    // Objects are owned by the connecting user: the backup may come from a server with other roles.
    await runTool(
      pgRestore.path,
      ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', `--dbname=${url}`, join(dir, manifest.database.dump)],
      password,
    );
    progress(`database: restored in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    if (manifest.receipts.store === 'local') {
      progress(`receipts: copying ${receiptNames.length} file(s) into ${receiptRoot}`);
      for (const name of receiptNames) {
        const relativeName = name.slice(RECEIPTS.length + 1);
        const target = join(receiptRoot, ...relativeName.split('/'));
        await mkdir(dirname(target), { recursive: true, mode: 0o750 });
        await copyFile(join(dir, ...name.split('/')), target);
        if ((await sha256File(target)) !== manifest.files[name]!.sha256)
          throw new BackupError(`${target} does not match its checksum after the copy: the disk may be failing.`);
      }
      progress(`receipts: ${receiptNames.length} file(s) restored and checked`);
    } else {
      progress(
        `receipts: kept in the S3 bucket ${manifest.receipts.bucket} (${manifest.receipts.keys.length} keys in the manifest); point KASSIR_S3_* at that bucket or a replica`,
      );
    }

    progress('ledger: checking the restored database');
    const ledger = await withPool(database.url, async (db) => ({ ...(await checkLedger(db)), figures: await ledgerFigures(db) }));
    const figuresMatch = JSON.stringify(ledger.figures) === JSON.stringify(manifest.ledger.figures);
    return { manifest, ledger, figuresMatch, receipts: receiptNames.length };
  } finally {
    await database.stop();
  }
}

/** Where the master key is, said after a backup and a restore: never in the backup. */
export function masterKeyReminder(config: Config): string {
  const keyFile = join(config.dataDir, 'master.key');
  const where = config.masterKey
    ? 'KASSIR_MASTER_KEY in this environment'
    : existsSync(keyFile)
      ? `${keyFile} (generated on the first start: no KASSIR_MASTER_KEY is set)`
      : 'KASSIR_MASTER_KEY or $KASSIR_DATA_DIR/master.key of the service that wrote this database';
  return (
    `The master key is not in the backup: it is ${where}. It seals the merchants' secret keys, and a restored service needs the same one ` +
    '(as KASSIR_MASTER_KEY, or master.key in its KASSIR_DATA_DIR). Keep a copy of it in another place than the backups, never beside them.'
  );
}

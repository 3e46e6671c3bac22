import pino from 'pino';
import { type Config, ConfigError, loadConfig } from './config.js';
import { isDatabaseUnavailable } from './db/pool.js';
import { startService } from './instance.js';
import { createLogger } from './lib/logger.js';

/**
 * Where the kassir CLI reaches this service from the same machine: the HOST and PORT it listens
 * on, through loopback when it listens on every interface (as the CLI's own default does).
 */
function localUrl(host: string, port: number): string {
  let reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  if (reach.includes(':') && !reach.startsWith('[')) reach = `[${reach}]`;
  return `http://${reach}:${port}`;
}

/** `npm start`: the whole service in one process, stopped gracefully by SIGTERM or SIGINT. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`kassir: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  // Written by the event loop, not by a blocking write per line: lines logged while a write is
  // in flight go out together with the next, and a slow reader of stdout (a full pipe) never
  // stalls requests. What is still buffered is written out on exit (pino flushes on exit).
  const log = createLogger(config.logLevel, pino.destination({ dest: 1, sync: false }));

  const cliUrl = localUrl(config.host, config.port);
  const service = await startService(config, log, {
    onNewAdminToken: (token) =>
      process.stdout.write(
        `\n  Operator token (shown once, store it now):\n\n    ADMIN_TOKEN=${token}\n\n` +
          `  Use it as "Authorization: Bearer <token>" on /admin/v1 and as ADMIN_TOKEN for the kassir CLI (with KASSIR_URL=${cliUrl}).\n` +
          '  Lost it? Start Kassir with ADMIN_TOKEN=<a token of your choice>; that token then applies.\n\n' +
          `  People sign in to the console at ${config.publicBaseUrl}/console. Create the first admin with:\n\n` +
          `    KASSIR_URL=${cliUrl} ADMIN_TOKEN=${token} npx kassir user create --email you@example.com --role admin\n\n`,
      ),
  });
  log.info(
    { url: config.publicBaseUrl, payment_page: config.paymentPageUrl, embedded_db: !config.databaseUrl },
    `Kassir listening on http://${config.host}:${config.port}`,
  );

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error('shutdown took longer than 20 s; exiting');
      process.exit(1);
    }, 20_000);
    force.unref();
    service.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  // A promise nobody awaited that failed because the database went away (graphile-worker records
  // a job's end without awaiting it, and a connection can be cut in the middle of that) must not
  // end a service that answers 503 meanwhile and recovers when the database is back. Anything
  // else still ends the process, as Node does by default.
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason;
    log.error({ err: reason }, 'a background database call failed while the database was unreachable; carrying on');
  });
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`kassir: failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

import { resolve } from 'node:path';
import { xpubProblem } from './lib/tron-hd.js';

/** The runtime contract of DESIGN.md: every setting comes from the environment, all optional. */
export interface Config {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPgPort: number | undefined;
  /** shared_buffers of the embedded PostgreSQL (KASSIR_PG_SHARED_BUFFERS). */
  embeddedSharedBuffers: string;
  host: string;
  port: number;
  publicBaseUrl: string;
  paymentPageUrl: string;
  adminToken: string | undefined;
  masterKey: string | undefined;
  paymentTtlSeconds: number;
  confirmVerifySeconds: number;
  /** Disputes (DESIGN.md "Disputes with the executor in them"): the executor's answer window, support's for escalated ones. */
  disputes: {
    answerSeconds: number;
    supportSeconds: number;
    /** Where "night" (22:00-08:00) is, for a terminal's night answer window. */
    timezone: string;
    /** Percent of its last 7 days' hand-outs disputed above which an executor is switched off; 0: never. */
    ratioLimit: number;
  };
  sameAmountLimit: number;
  /** Connections of this instance's PostgreSQL pool (the API and the job worker share it). */
  dbPoolSize: number;
  /** Payment creates sent together in one statement at most under load (src/payments/cascade/create-batches.ts); 1: each alone. */
  createBatchSize: number;
  /** Executors' reported transfers completed together in one statement at most under load (src/incoming/notification-batches.ts); 1: each alone. */
  completionBatchSize: number;
  webhookAllowPrivate: boolean;
  expirySweepSeconds: number;
  /** First retry delay of a failed webhook; doubles per attempt (with jitter), capped at 2 h. */
  webhookRetryBaseMs: number;
  /** How long failed webhooks keep being retried before they are marked failed. */
  webhookRetryHours: number;
  webhookTimeoutMs: number;
  /** Webhook delivery attempts are dropped, a month's partition at a time, once every one in it is this old (days). */
  webhookAttemptsRetentionDays: number;
  /** Jobs of the queue that failed for good are removed once unchanged this long (days). */
  failedJobsRetentionDays: number;
  logLevel: string;
  /**
   * Which X-Forwarded-* to believe (client addresses in logs, the audit log and the sign-in limit;
   * https for Secure cookies): false (none), true (every hop), or the proxies' addresses and CIDR
   * ranges, as Fastify's trustProxy takes them (docs/operations.md).
   */
  trustProxy: boolean | string;
  /** Bearer token of GET /metrics; unset: /metrics answers only direct connections from this host (src/http/observability.ts). */
  metricsToken: string | undefined;
  runWorker: boolean;
  /** People's sessions: ended after this long without a request, and this long after sign-in whatever happens; sign-in attempts per client address per minute. */
  sessions: { idleSeconds: number; maxSeconds: number; loginsPerMinute: number };
  /** How withdrawals are sent: `manual` (the operator sends and records tx_hash) or `tron` (signed and broadcast here). */
  withdrawalAdapter: 'manual' | 'tron';
  /** Tron adapter: full-node HTTP API, hot-wallet key (hex), USDT contract, fee limit (sun). */
  tron: { fullNode: string; privateKey: string; usdtContract: string; apiKey?: string; feeLimitSun: number } | undefined;
  /** How often a broadcast withdrawal is checked on chain. */
  tronPollMs: number;
  /**
   * Executors' deposit addresses (KASSIR_TRON_DEPOSIT_XPUB, an account-level BIP32 extended public
   * key, m/44'/195'/0'; executor i gets child 0/i), the confirmations an incoming transfer needs
   * before it is credited, and how often the addresses are polled. Needs the Tron full node.
   */
  tronDeposits: { xpub: string; confirmations: number; pollMs: number } | undefined;
  /** Upstream providers: the total time a payment may spend trying routes, and one provider call's limit. */
  routeBudgetMs: number;
  providerTimeoutMs: number;
  /** Circuit breaker: failures in a row that take a provider out of rotation, and for how long. */
  providerBreakerFailures: number;
  providerCooldownSeconds: number;
  /** How often open provider payments are polled when their callbacks are late. */
  providerPollSeconds: number;
  /** Receipts in an S3-compatible bucket instead of `$KASSIR_DATA_DIR/receipts` when set. */
  s3:
    | { bucket: string; endpoint?: string; region: string; accessKeyId?: string; secretAccessKey?: string; forcePathStyle: boolean; prefix: string }
    | undefined;
  /** What the HTTP server allows a slow client (src/http/timeouts.ts); 0 turns a limit off where noted. */
  timeouts: HttpTimeouts;
  /** Refusing work early under overload, by route priority (src/http/overload.ts). */
  shedding: Shedding;
  /** The Telegram bot (DESIGN.md "Telegram (contract)"); undefined when TELEGRAM_BOT_TOKEN is unset: the bot is off, everything else works. */
  telegram: TelegramConfig | undefined;
}

/** One bot: its token (only ever from the environment), where its Bot API is, and how updates arrive. */
export interface TelegramConfig {
  token: string;
  /** TELEGRAM_API_ROOT: the public Bot API, or a local stand-in (tests) or a self-hosted Bot API server. */
  apiRoot: string;
  /** TELEGRAM_WEBHOOK_URL: Telegram POSTs updates there (to this service's POST /telegram/v1/webhook) instead of being long-polled. */
  webhookUrl: string | undefined;
}

/** Limits on how slowly a client may send, in ms. */
export interface HttpTimeouts {
  /** The whole request head (request line and headers) must arrive within this. */
  headersMs: number;
  /** A connection on which nothing arrives or leaves for this long is closed (0: never). */
  idleMs: number;
  /** The whole request, body included, must arrive within this (0: no limit). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
}

/** When requests are refused for overload; delays are what a request arriving now would wait, in ms. */
export interface Shedding {
  enabled: boolean;
  /** Retry-After of a refused request, seconds. */
  retryAfterSeconds: number;
  /**
   * New payments, payouts and withdrawals are refused past this delay for a database connection or
   * of the event loop, and their adaptive limit, while reached, shrinks once their own latency
   * passes their no-load latency by more than this or one batch's time, whichever is less
   * (src/http/overload.ts)…
   */
  lowDelayMs: number;
  /** …and that limit is at most this many in progress. */
  lowConcurrency: number;
  /** Every other request past this delay, but those that complete money already on its way (never refused). */
  normalDelayMs: number;
}

export class ConfigError extends Error {}

/**
 * The embedded PostgreSQL's shared_buffers unless KASSIR_PG_SHARED_BUFFERS says otherwise.
 * PostgreSQL's own 128MB no longer holds the indexes a payment insert touches once the payments
 * table is large (measurements: docs/performance.md).
 */
export const DEFAULT_SHARED_BUFFERS = '512MB';

/**
 * Connections per instance. On the 2-core machines this is built on, 8 gave the most payment
 * creates per second (docs/performance.md): a create holds a connection for one round trip, and
 * more of them only queue inside PostgreSQL for the same two cores. The worker's listening
 * connection and its jobs (4 at most) share the pool, hence at least 6.
 */
export const DEFAULT_DB_POOL_SIZE = 8;
/** Creates in one statement at most (docs/performance.md "Creates taken together": 32 did no better). */
export const DEFAULT_CREATE_BATCH_SIZE = 16;
/**
 * Statements of several creates in progress at once per instance: 2 took more creates a second
 * than 1 or 4, with 10 executors and with 100 (docs/performance.md "Creates taken together").
 */
export const CREATE_BATCHES_IN_FLIGHT = 2;
/**
 * A create sent alone and in progress this long (waiting for a lock another transaction holds) no
 * longer holds up the creates queued behind it: 5 times the p99 of creates at the bench's 50
 * connections (52.7 ms). Batches never wait for locks and count until they end.
 */
export const CREATE_BATCH_SLOW_MS = 250;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min) {
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}

function timezone(raw: string): string {
  try {
    new Intl.DateTimeFormat('en', { timeZone: raw });
  } catch {
    throw new ConfigError(`DISPUTE_TIMEZONE must be an IANA time zone (Europe/Moscow, UTC), got "${raw}"`);
  }
  return raw;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/**
 * TRUST_PROXY: true/false, or the proxies' addresses and CIDR ranges, comma-separated, with
 * proxy-addr's names for the private ranges (loopback, linklocal, uniquelocal). A list believes
 * X-Forwarded-For only as far back as it passes through those proxies, so a client that writes
 * its own X-Forwarded-For is still named by the address the proxy saw; `true` believes every hop
 * (the leftmost address, which the client wrote unless the proxy replaces the header). Fastify
 * refuses hop counts (it cannot tell a direct client from the proxy by a count), so they are refused here.
 */
function trustProxy(raw: string | undefined): boolean | string {
  if (raw === undefined || raw.trim() === '') return false;
  const value = raw.trim();
  if (/^(true|1|yes|on)$/i.test(value)) return true;
  if (/^(false|0|no|off)$/i.test(value)) return false;
  const entries = value.split(',').map((entry) => entry.trim());
  const address = (entry: string) => /^(loopback|linklocal|uniquelocal)$/.test(entry) || (/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(entry) && /[.:]/.test(entry));
  if (entries.every(address)) return entries.join(',');
  throw new ConfigError(
    `TRUST_PROXY must be true, false or the proxies' addresses/CIDR ranges (127.0.0.1, 10.0.0.0/8, loopback, uniquelocal), comma-separated, got "${raw}"`,
  );
}

function url(name: string, raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function withdrawalAdapter(env: NodeJS.ProcessEnv): 'manual' | 'tron' {
  const value = env.KASSIR_WITHDRAWAL_ADAPTER || 'manual';
  if (value !== 'manual' && value !== 'tron') throw new ConfigError(`KASSIR_WITHDRAWAL_ADAPTER must be manual or tron, got "${value}"`);
  if (value === 'tron' && !env.KASSIR_TRON_FULL_NODE) {
    throw new ConfigError('KASSIR_WITHDRAWAL_ADAPTER=tron needs KASSIR_TRON_FULL_NODE (the full-node HTTP API) and KASSIR_TRON_PRIVATE_KEY');
  }
  return value;
}

function tronDeposits(env: NodeJS.ProcessEnv): Config['tronDeposits'] {
  const xpub = env.KASSIR_TRON_DEPOSIT_XPUB;
  if (!xpub) return undefined;
  const problem = xpubProblem(xpub);
  if (problem) throw new ConfigError(`KASSIR_TRON_DEPOSIT_XPUB ${problem}`);
  if (!env.KASSIR_TRON_FULL_NODE) {
    throw new ConfigError(
      'KASSIR_TRON_DEPOSIT_XPUB needs KASSIR_TRON_FULL_NODE (and KASSIR_TRON_PRIVATE_KEY): the deposit addresses are watched through the Tron node',
    );
  }
  return {
    xpub,
    confirmations: integer(env, 'KASSIR_TRON_DEPOSIT_CONFIRMATIONS', 19, 1),
    pollMs: integer(env, 'KASSIR_TRON_DEPOSIT_POLL_MS', 30_000, 10),
  };
}

function tronKey(raw: string | undefined): string {
  if (!raw || !/^(0x)?[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError('KASSIR_TRON_PRIVATE_KEY must be the hot wallet private key as 64 hex digits');
  return raw.replace(/^0x/, '');
}

function sharedBuffers(raw: string | undefined): string {
  if (raw === undefined || raw === '') return DEFAULT_SHARED_BUFFERS;
  if (!/^\d+(kB|MB|GB)$/.test(raw.trim())) throw new ConfigError(`KASSIR_PG_SHARED_BUFFERS must be a size such as 512MB or 2GB, got "${raw}"`);
  return raw.trim();
}

/**
 * Slow-client limits. The head of a request is a few hundred bytes, so 20 s covers the worst
 * mobile link; a body is only held to progressing (idle limit) plus a total of an hour, which a
 * 25 MB upload meets at 56 kbit/s: a receipt sent from a phone on a poor link is never cut, a
 * client that stops sending is. Keep-alive: Fastify's 72 s, longer than the 60 s idle timeout of
 * the usual proxies, so that a proxy never sends on a connection this side is closing.
 */
function timeouts(env: NodeJS.ProcessEnv): HttpTimeouts {
  const result = {
    headersMs: integer(env, 'KASSIR_HEADERS_TIMEOUT_MS', 20_000, 100),
    idleMs: integer(env, 'KASSIR_IDLE_TIMEOUT_MS', 60_000, 0),
    requestMs: integer(env, 'KASSIR_REQUEST_TIMEOUT_MS', 3_600_000, 0),
    keepAliveMs: integer(env, 'KASSIR_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1),
  };
  // Node refuses a head limit longer than the whole request's.
  if (result.requestMs > 0 && result.requestMs < result.headersMs) {
    throw new ConfigError(`KASSIR_REQUEST_TIMEOUT_MS (${result.requestMs}) must be 0 or at least KASSIR_HEADERS_TIMEOUT_MS (${result.headersMs})`);
  }
  return result;
}

/**
 * Shedding limits. The creates' limits sit above the queue that 50 clients creating payments as
 * fast as they are answered build (docs/performance.md); past them, new money waits its turn
 * outside (503 + Retry-After) rather than in the queue that every notification then waits behind.
 */
function shedding(env: NodeJS.ProcessEnv): Shedding {
  const result = {
    enabled: boolean(env, 'KASSIR_SHED', true),
    retryAfterSeconds: integer(env, 'KASSIR_SHED_RETRY_AFTER_SECONDS', 5, 1),
    lowDelayMs: integer(env, 'KASSIR_SHED_LOW_DELAY_MS', 100, 1),
    // The adaptive limit's ceiling (issue 38; 64 was the fixed limit before it).
    lowConcurrency: integer(env, 'KASSIR_SHED_LOW_CONCURRENCY', 512, 1),
    normalDelayMs: integer(env, 'KASSIR_SHED_NORMAL_DELAY_MS', 500, 1),
  };
  // Otherwise a route that should be served longer than a create would be refused first.
  if (result.normalDelayMs < result.lowDelayMs) {
    throw new ConfigError(`KASSIR_SHED_NORMAL_DELAY_MS (${result.normalDelayMs}) must be at least KASSIR_SHED_LOW_DELAY_MS (${result.lowDelayMs})`);
  }
  return result;
}

/**
 * The bot's settings. A token is `<bot id>:<secret>` as BotFather gives it; anything else is
 * refused at start rather than failing on the first call. The token is never echoed back in an
 * error: it is a secret.
 */
function telegram(env: NodeJS.ProcessEnv): TelegramConfig | undefined {
  const token = env.TELEGRAM_BOT_TOKEN?.trim();
  if (!token) return undefined;
  if (!/^\d{3,15}:[A-Za-z0-9_-]{20,}$/.test(token)) {
    throw new ConfigError('TELEGRAM_BOT_TOKEN must be the token BotFather gave (<digits>:<letters, digits, _ and ->)');
  }
  return {
    token,
    apiRoot: url('TELEGRAM_API_ROOT', env.TELEGRAM_API_ROOT || 'https://api.telegram.org'),
    webhookUrl: env.TELEGRAM_WEBHOOK_URL ? url('TELEGRAM_WEBHOOK_URL', env.TELEGRAM_WEBHOOK_URL) : undefined,
  };
}

/** Reads the configuration; throws ConfigError with the variable's name when a value is unusable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080);
  const publicBaseUrl = url('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL || `http://localhost:${port}`);
  const pgPort = env.KASSIR_PG_PORT ? integer(env, 'KASSIR_PG_PORT', 0, 1) : undefined;
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.KASSIR_DATA_DIR || './data'),
    embeddedPgPort: pgPort,
    embeddedSharedBuffers: sharedBuffers(env.KASSIR_PG_SHARED_BUFFERS),
    host: env.HOST || '127.0.0.1',
    port,
    publicBaseUrl,
    paymentPageUrl: url('PAYMENT_PAGE_URL', env.PAYMENT_PAGE_URL || `${publicBaseUrl}/pay`),
    adminToken: env.ADMIN_TOKEN || undefined,
    masterKey: env.KASSIR_MASTER_KEY || undefined,
    paymentTtlSeconds: integer(env, 'PAYMENT_TTL_SECONDS', 900, 1),
    confirmVerifySeconds: integer(env, 'CONFIRM_VERIFY_SECONDS', 1800, 1),
    disputes: {
      answerSeconds: integer(env, 'DISPUTE_ANSWER_SECONDS', 1800, 1),
      supportSeconds: integer(env, 'DISPUTE_SUPPORT_SECONDS', 3600, 1),
      timezone: timezone(env.DISPUTE_TIMEZONE || 'Europe/Moscow'),
      ratioLimit: integer(env, 'DISPUTE_RATIO_LIMIT_PERCENT', 0, 0),
    },
    sameAmountLimit: integer(env, 'SAME_AMOUNT_LIMIT', 3, 1),
    dbPoolSize: integer(env, 'KASSIR_DB_POOL_SIZE', DEFAULT_DB_POOL_SIZE, 6),
    createBatchSize: integer(env, 'KASSIR_CREATE_BATCH_SIZE', DEFAULT_CREATE_BATCH_SIZE, 1),
    completionBatchSize: integer(env, 'KASSIR_COMPLETION_BATCH_SIZE', DEFAULT_CREATE_BATCH_SIZE, 1),
    webhookAllowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    expirySweepSeconds: integer(env, 'KASSIR_EXPIRY_SWEEP_SECONDS', 5, 1),
    webhookRetryBaseMs: integer(env, 'KASSIR_WEBHOOK_RETRY_BASE_MS', 30_000, 1),
    webhookRetryHours: integer(env, 'KASSIR_WEBHOOK_RETRY_HOURS', 24, 0),
    webhookTimeoutMs: integer(env, 'KASSIR_WEBHOOK_TIMEOUT_MS', 5_000, 100),
    webhookAttemptsRetentionDays: integer(env, 'WEBHOOK_ATTEMPTS_RETENTION_DAYS', 90, 1),
    failedJobsRetentionDays: integer(env, 'KASSIR_FAILED_JOBS_RETENTION_DAYS', 30, 1),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: trustProxy(env.TRUST_PROXY),
    metricsToken: env.METRICS_TOKEN || undefined,
    runWorker: boolean(env, 'KASSIR_WORKER', true),
    sessions: {
      idleSeconds: integer(env, 'SESSION_IDLE_MINUTES', 30, 1) * 60,
      maxSeconds: integer(env, 'SESSION_MAX_HOURS', 12, 1) * 3600,
      loginsPerMinute: integer(env, 'LOGIN_ATTEMPTS_PER_MINUTE', 30, 1),
    },
    withdrawalAdapter: withdrawalAdapter(env),
    tron: env.KASSIR_TRON_FULL_NODE
      ? {
          fullNode: url('KASSIR_TRON_FULL_NODE', env.KASSIR_TRON_FULL_NODE),
          privateKey: tronKey(env.KASSIR_TRON_PRIVATE_KEY),
          usdtContract: env.KASSIR_TRON_USDT_CONTRACT || 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
          apiKey: env.KASSIR_TRON_API_KEY || undefined,
          feeLimitSun: integer(env, 'KASSIR_TRON_FEE_LIMIT_SUN', 30_000_000, 1),
        }
      : undefined,
    tronPollMs: integer(env, 'KASSIR_TRON_POLL_MS', 3000, 10),
    tronDeposits: tronDeposits(env),
    routeBudgetMs: integer(env, 'KASSIR_ROUTE_BUDGET_MS', 10_000, 100),
    providerTimeoutMs: integer(env, 'KASSIR_PROVIDER_TIMEOUT_MS', 5_000, 50),
    providerBreakerFailures: integer(env, 'KASSIR_PROVIDER_BREAKER_FAILURES', 3, 1),
    providerCooldownSeconds: integer(env, 'KASSIR_PROVIDER_COOLDOWN_SECONDS', 30, 1),
    providerPollSeconds: integer(env, 'KASSIR_PROVIDER_POLL_SECONDS', 60, 1),
    s3: env.KASSIR_S3_BUCKET
      ? {
          bucket: env.KASSIR_S3_BUCKET,
          endpoint: env.KASSIR_S3_ENDPOINT || undefined,
          region: env.KASSIR_S3_REGION || 'us-east-1',
          accessKeyId: env.KASSIR_S3_ACCESS_KEY_ID || undefined,
          secretAccessKey: env.KASSIR_S3_SECRET_ACCESS_KEY || undefined,
          forcePathStyle: boolean(env, 'KASSIR_S3_FORCE_PATH_STYLE', Boolean(env.KASSIR_S3_ENDPOINT)),
          prefix: env.KASSIR_S3_PREFIX ?? 'receipts/',
        }
      : undefined,
    timeouts: timeouts(env),
    shedding: shedding(env),
    telegram: telegram(env),
  };
}

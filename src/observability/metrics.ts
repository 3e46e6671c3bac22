import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/pool.js';
import { type AlertSettings, readAlertSettings } from '../settings.js';
import { type AlertFigures, readAlertFigures } from './alert-figures.js';
import { type QueueState, readQueueState } from './observability.repo.js';
import { withTimeout } from './timeout.js';

declare module '../context.js' {
  interface AppContext {
    /**
     * This instance's metrics (its own Prometheus registry, served at /metrics). Features count
     * through the small `Metrics` interface it implements.
     */
    metrics: ServiceMetrics;
  }
}

/** Why a payment left PENDING (or PROCESSING) unpaid: a closed set, so a label never takes free text. */
export type CancelReason = 'expired' | 'transfer_not_found' | 'manual' | 'provider' | 'other';

/**
 * How the executors' cascade of a payment create went to the database (src/payments/cascade/create-batches.ts):
 * alone, nothing else queuing; together, in a statement of several; again, alone once more
 * after its batch could not take it without waiting, or failed.
 */
export type CreateSending = 'alone' | 'together' | 'again';

/** Why a Telegram message was given up: the chat blocked the bot (403), Telegram refused it (400), attempts ran out, or its person had no chat any more. */
export type TelegramFailure = 'blocked' | 'rejected' | 'attempts' | 'unlinked';

/** What became of one webhook delivery attempt. */
export type WebhookOutcome = 'delivered' | 'retrying' | 'failed';

/**
 * What features count, and nothing more: each call is an in-process increment (no I/O), made after
 * the work it counts has committed. Features take this interface from the AppContext; only the
 * service and the HTTP edge see the registry behind it.
 */
export interface Metrics {
  /** A payment was created (its insert committed). */
  paymentCreated(payment: { method: string; terminalId: string }): void;
  /** `creates` cascades of payment creates were sent to the database `how`; `together` once per statement. */
  createsSent(how: CreateSending, creates: number): void;
  /** `transfers` executors' reported transfers were sent to the database `how` (src/incoming/notification-batches.ts), as creates are. */
  completionsSent(how: CreateSending, transfers: number): void;
  /** A payment reached COMPLETED or COMPLETED_APPEAL: from PENDING/PROCESSING (`transfer`) or by a dispute's approval. */
  paymentCompleted(payment: { method: string; terminalId: string; via: 'transfer' | 'dispute'; ageSeconds: number }): void;
  /** A payment left PENDING or PROCESSING unpaid (CANCELLED). */
  paymentCancelled(payment: { method: string; terminalId: string; reason: CancelReason }): void;
  /** One webhook delivery attempt, recorded; `lagSeconds` (event written → delivered) for a delivered one. */
  webhookAttempt(outcome: WebhookOutcome, lagSeconds?: number): void;
  /** Delivered webhook attempts recorded, alone or together (several in one statement). */
  webhookDeliveriesRecorded(how: 'alone' | 'together', deliveries: number): void;
  /** One exchange asked for a rate feed's adverts: it gave a figure (`ok`) or not (`error`). */
  rateFetched(source: string, outcome: 'ok' | 'error'): void;
  /** A Telegram message was sent (recorded as sent). */
  telegramSent(): void;
  /** `count` Telegram messages were given up for `reason`. */
  telegramFailed(reason: TelegramFailure, count?: number): void;
}

/** The label of a request that matched no route: the raw URL never becomes a label (it may hold a token or a card number). */
export const UNMATCHED_ROUTE = 'unmatched';

/** How long a scrape waits for its one query before answering without the database's figures. */
const SCRAPE_QUERY_TIMEOUT_MS = 2_000;

/** Request latency, seconds: the API answers in milliseconds; provider routes may take up to the route budget (10 s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Creation → completion, seconds: payers take minutes (PAYMENT_TTL_SECONDS 900), verification up to CONFIRM_VERIFY_SECONDS, disputes days. */
const COMPLETION_BUCKETS = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 86400, 604800];
/** Event written → delivered, seconds: under a second normally; retries back off for up to KASSIR_WEBHOOK_RETRY_HOURS. */
const WEBHOOK_LAG_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400];

/**
 * The service's metrics: one Registry per service instance (never prom-client's global one), so
 * that several services in one process (the tests) keep their counts apart. Counters move in
 * process as things happen; what lives in the database (the job queue, the webhook backlog, the
 * last ledger check) and the pool's state are read when scraped, by one cheap query.
 */
export class ServiceMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route' | 'method'>;
  private readonly httpShed: { low: Counter.Internal; normal: Counter.Internal };
  private readonly created: Counter<'method' | 'terminal'>;
  private readonly createsSentTotal: Counter<'how'>;
  private readonly createBatches: Counter<string>;
  private readonly completionsSentTotal: Counter<'how'>;
  private readonly completed: Counter<'method' | 'terminal' | 'via'>;
  private readonly cancelled: Counter<'method' | 'terminal' | 'reason'>;
  private readonly completion: Histogram<'method'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly webhookRecorded: Counter<'how'>;
  private readonly rateFetches: Counter<'source' | 'outcome'>;
  private readonly telegramSentTotal: Counter<string>;
  private readonly telegramFailedTotal: Counter<'reason'>;
  private readonly rateAge: Gauge<'currency' | 'terminal'>;
  private readonly rateStale: Gauge<'currency' | 'terminal'>;
  private readonly rateFailures: Gauge<'currency' | 'terminal'>;
  private readonly rateHeld: Gauge<'currency' | 'terminal'>;
  private readonly endpointFailures: Gauge<'merchant'>;
  private readonly breakerOpen: Gauge<'provider'>;
  private readonly disputesOverdue: Gauge<string>;
  private readonly conversionRatio: Gauge<string>;
  private readonly executorsOff: Gauge<string>;
  private readonly webhookLag: Histogram<string>;
  private readonly pool: Gauge<'state'>;
  private readonly jobs: Gauge<'task' | 'state'>;
  private readonly jobsOldest: Gauge<string>;
  private readonly webhooksPending: Gauge<string>;
  private readonly webhooksOldest: Gauge<string>;
  private readonly ledgerLastRun: Gauge<string>;
  private readonly ledgerOk: Gauge<string>;
  private readonly ledgerProblems: Gauge<string>;
  private readonly ledgerDuration: Gauge<string>;
  private readonly databaseUp: Gauge<string>;
  private readonly workerRunning: Gauge<string>;
  private worker: { running(): boolean } | undefined;
  /** The unlabelled gauges shown only while their value is known (see present), by name. */
  private readonly optionalNames = new Map<Gauge<string>, string>();

  constructor(options: { runWorker: boolean }) {
    const registers = [this.registry];
    // Process and Node.js metrics under their usual names (process_*, nodejs_*), as dashboards expect them.
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'kassir_http_requests_total',
      help: 'HTTP requests answered, by route pattern (never the raw URL), method and status',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'kassir_http_request_duration_seconds',
      help: 'Time from a request arriving to its answer being sent, by route pattern and method',
      labelNames: ['route', 'method'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    const shed = new Counter({
      name: 'kassir_http_requests_shed_total',
      help: 'Requests refused for overload (503 UNAVAILABLE, Retry-After) before they were read, by priority (low: creates; normal: the rest but money on its way). Not counted in kassir_http_requests_total',
      labelNames: ['priority'],
      registers,
    });
    // Bound once: a refusal must cost as little as it can (no label lookup each time).
    this.httpShed = { low: shed.labels({ priority: 'low' }), normal: shed.labels({ priority: 'normal' }) };
    this.created = new Counter({
      name: 'kassir_payments_created_total',
      help: 'Payments created (requisites handed out), by method and terminal id',
      labelNames: ['method', 'terminal'],
      registers,
    });
    this.createsSentTotal = new Counter({
      name: 'kassir_payment_creates_sent_total',
      help: "Payment creates sent to the executors' cascade, by how (alone; together: in a batch of several; again: alone after their batch could not take them)",
      labelNames: ['how'],
      registers,
    });
    this.createBatches = new Counter({
      name: 'kassir_payment_create_batches_total',
      help: 'Statements that sent several payment creates together (their creates: kassir_payment_creates_sent_total{how="together"})',
      registers,
    });
    this.completionsSentTotal = new Counter({
      name: 'kassir_notification_completions_sent_total',
      help: "Executors' reported transfers sent to the database to complete their payments, by how (alone; together: in a statement of several; again: the whole way alone after their statement could not take them)",
      labelNames: ['how'],
      registers,
    });
    this.completed = new Counter({
      name: 'kassir_payments_completed_total',
      help: 'Payments completed (COMPLETED or COMPLETED_APPEAL), by method, terminal id and way (transfer: from PENDING/PROCESSING; dispute: an approved dispute)',
      labelNames: ['method', 'terminal', 'via'],
      registers,
    });
    this.cancelled = new Counter({
      name: 'kassir_payments_cancelled_total',
      help: 'Payments that left PENDING or PROCESSING unpaid, by method, terminal id and reason (expired, transfer_not_found, manual, provider)',
      labelNames: ['method', 'terminal', 'reason'],
      registers,
    });
    this.completion = new Histogram({
      name: 'kassir_payment_completion_seconds',
      help: 'Time from a payment being created to its completion by a transfer (disputes excluded), by method',
      labelNames: ['method'],
      buckets: COMPLETION_BUCKETS,
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'kassir_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered: 2xx; retrying: failed, retried later; failed: given up after KASSIR_WEBHOOK_RETRY_HOURS)',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookRecorded = new Counter({
      name: 'kassir_webhook_deliveries_recorded_total',
      help: 'Delivered webhook attempts recorded, by how (alone; together: in a statement of several)',
      labelNames: ['how'],
      registers,
    });
    this.webhookLag = new Histogram({
      name: 'kassir_webhook_delivery_lag_seconds',
      help: 'Time from a webhook event being written (its status change committing) to its successful delivery',
      buckets: WEBHOOK_LAG_BUCKETS,
      registers,
    });
    this.telegramSentTotal = new Counter({
      name: 'kassir_telegram_messages_sent_total',
      help: 'Telegram messages this instance sent (the outbox of migration 046)',
      registers,
    });
    this.telegramFailedTotal = new Counter({
      name: 'kassir_telegram_messages_failed_total',
      help: 'Telegram messages given up, by reason (blocked: the chat blocked the bot, 403, and was unlinked; rejected: Telegram refused the message; attempts: failed too often; unlinked: its person has no chat any more). Retries are not counted.',
      labelNames: ['reason'],
      registers,
    });
    this.rateFetches = new Counter({
      name: 'kassir_rate_fetches_total',
      help: "Rate feeds' requests to an exchange by this instance, by source and outcome (ok: it gave a figure; error: an error answer, no answer, or too few adverts)",
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.rateAge = new Gauge({
      name: 'kassir_rate_age_seconds',
      help: "Age of each feed-kept rate (since its feed last gave or confirmed it), by currency and terminal id ('' for the currency's own)",
      labelNames: ['currency', 'terminal'],
      registers,
    });
    this.rateStale = new Gauge({
      name: 'kassir_rate_stale',
      help: 'Whether a feed-kept rate is stale (1: creates and payouts that need it are refused), by currency and terminal id',
      labelNames: ['currency', 'terminal'],
      registers,
    });
    this.rateFailures = new Gauge({
      name: 'kassir_rate_feed_failures',
      help: "A rate feed's failed fetches in a row (0: its last fetch gave a figure), by currency and terminal id",
      labelNames: ['currency', 'terminal'],
      registers,
    });
    // The alert rules' figures (src/observability/alert-figures.ts; docs/alerts.rules.yml judges them).
    this.rateHeld = new Gauge({
      name: 'kassir_rate_held',
      help: 'Whether a feed-kept rate holds a jump for a person to accept or keep (1), by currency and terminal id',
      labelNames: ['currency', 'terminal'],
      registers,
    });
    this.endpointFailures = new Gauge({
      name: 'kassir_webhook_endpoint_failures',
      help: "A merchant's webhook endpoint failing now: the most failed attempts in a row of its endpoints, by merchant id (absent: none failing)",
      labelNames: ['merchant'],
      registers,
    });
    this.breakerOpen = new Gauge({
      name: 'kassir_provider_breaker_open',
      help: "Whether a provider's circuit breaker is open (1: taken out of rotation), by provider name; providers switched on",
      labelNames: ['provider'],
      registers,
    });
    this.disputesOverdue = this.optionalGauge('kassir_disputes_overdue', 'Open disputes past their deadline (the support queue’s, else the executor’s)');
    this.conversionRatio = this.optionalGauge(
      'kassir_conversion_ratio',
      'Completed ÷ ended live payments created in the alert window (conversion_window_minutes, GET /admin/v1/alerts); absent with fewer than conversion_min_payments ended',
    );
    this.executorsOff = this.optionalGauge('kassir_executors_off_by_rules', 'Executors a rule switched off (off_reason, e.g. dispute_ratio) and still off');
    this.pool = new Gauge({
      name: 'kassir_db_pool_connections',
      help: "This instance's PostgreSQL pool: total (open), idle, waiting (requests queued for a connection), max (KASSIR_DB_POOL_SIZE)",
      labelNames: ['state'],
      registers,
    });
    this.jobs = new Gauge({
      name: 'kassir_jobs',
      help: 'Jobs in the queue (graphile-worker) by task and state: ready (due, waiting for a worker), running, scheduled (due later), failed (out of attempts)',
      labelNames: ['task', 'state'],
      registers,
    });
    this.jobsOldest = this.optionalGauge('kassir_jobs_oldest_ready_age_seconds', 'How long the oldest ready job has been due (0 when none waits)');
    this.webhooksPending = this.optionalGauge('kassir_webhook_events_pending', 'Webhook events not yet delivered nor given up (the outbox)');
    this.webhooksOldest = this.optionalGauge('kassir_webhook_oldest_pending_age_seconds', 'Age of the oldest pending webhook event (0 when none)');
    this.ledgerLastRun = this.optionalGauge(
      'kassir_ledger_check_last_run_timestamp_seconds',
      'When the ledger check (GET /admin/v1/ledger/check, or the hourly job) last finished, Unix time; 0 if never',
    );
    this.ledgerOk = this.optionalGauge(
      'kassir_ledger_check_ok',
      'Whether the last ledger check found every invariant holding (1) or not (0); absent if it never ran',
    );
    this.ledgerProblems = this.optionalGauge('kassir_ledger_check_problems', 'Problems the last ledger check found');
    this.ledgerDuration = this.optionalGauge('kassir_ledger_check_duration_seconds', 'How long the last ledger check took');
    this.databaseUp = new Gauge({
      name: 'kassir_scrape_database_up',
      help: "Whether this scrape could read the database's figures (job queue, webhook backlog, ledger check): 1 or 0",
      registers,
    });
    this.workerRunning = new Gauge({
      name: 'kassir_worker_running',
      help: 'Whether this instance runs the job worker and it is running (1), stopped (0); absent with KASSIR_WORKER=false',
      registers,
    });
    if (!options.runWorker) this.registry.removeSingleMetric('kassir_worker_running');
  }

  /** The Content-Type of `render`'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Tells the metrics (and readiness) about this instance's job worker once it runs. */
  watchWorker(worker: { running(): boolean }): void {
    this.worker = worker;
  }

  /** Whether the job worker runs: undefined when this instance has none (yet, or by KASSIR_WORKER=false). */
  workerRunningNow(): boolean | undefined {
    return this.worker?.running();
  }

  paymentCreated(payment: { method: string; terminalId: string }): void {
    this.created.inc({ method: payment.method, terminal: payment.terminalId });
  }

  createsSent(how: CreateSending, creates: number): void {
    this.createsSentTotal.inc({ how }, creates);
    if (how === 'together') this.createBatches.inc();
  }

  completionsSent(how: CreateSending, transfers: number): void {
    this.completionsSentTotal.inc({ how }, transfers);
  }

  paymentCompleted(payment: { method: string; terminalId: string; via: 'transfer' | 'dispute'; ageSeconds: number }): void {
    this.completed.inc({ method: payment.method, terminal: payment.terminalId, via: payment.via });
    if (payment.via === 'transfer') this.completion.observe({ method: payment.method }, payment.ageSeconds);
  }

  paymentCancelled(payment: { method: string; terminalId: string; reason: CancelReason }): void {
    this.cancelled.inc({ method: payment.method, terminal: payment.terminalId, reason: payment.reason });
  }

  webhookAttempt(outcome: WebhookOutcome, lagSeconds?: number): void {
    this.webhookAttempts.inc({ outcome });
    if (outcome === 'delivered' && lagSeconds !== undefined) this.webhookLag.observe(Math.max(0, lagSeconds));
  }

  webhookDeliveriesRecorded(how: 'alone' | 'together', deliveries: number): void {
    this.webhookRecorded.inc({ how }, deliveries);
  }

  rateFetched(source: string, outcome: 'ok' | 'error'): void {
    this.rateFetches.inc({ source, outcome });
  }

  telegramSent(): void {
    this.telegramSentTotal.inc();
  }

  telegramFailed(reason: TelegramFailure, count = 1): void {
    if (count > 0) this.telegramFailedTotal.inc({ reason }, count);
  }

  /** One answered HTTP request; `route` is the route's pattern (UNMATCHED_ROUTE for none). */
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.httpRequests.inc({ route, method, status: String(status) });
    this.httpDuration.observe({ route, method }, seconds);
  }

  /** One request refused for overload (src/http/overload.ts), by its priority. */
  requestShed(priority: 'low' | 'normal'): void {
    this.httpShed[priority].inc();
  }

  /**
   * The exposition text: the pool's state and the database's figures are read now (one query,
   * bounded by SCRAPE_QUERY_TIMEOUT_MS). While the database cannot be read the rest is still
   * served, with kassir_scrape_database_up 0 and the database's gauges left out rather than stale.
   */
  async render(db: Db): Promise<string> {
    this.pool.set({ state: 'total' }, db.totalCount);
    this.pool.set({ state: 'idle' }, db.idleCount);
    this.pool.set({ state: 'waiting' }, db.waitingCount);
    this.pool.set({ state: 'max' }, db.options.max ?? 0);
    if (this.worker) this.workerRunning.set(this.worker.running() ? 1 : 0);
    let state: QueueState | undefined;
    let alerts: { figures: AlertFigures; settings: AlertSettings } | undefined;
    try {
      [state, alerts] = await withTimeout(Promise.all([readQueueState(db), readAlerts(db)]), SCRAPE_QUERY_TIMEOUT_MS);
    } catch {
      state = undefined;
      alerts = undefined;
    }
    this.showDatabaseFigures(state, alerts);
    return this.registry.metrics();
  }

  /**
   * Sets the database-derived gauges from what a scrape read (undefined: the database could not be
   * read, and they are left out). Public so that the alert rules' sync test can show figures of its own.
   */
  showDatabaseFigures(state: QueueState | undefined, alerts: { figures: AlertFigures; settings: AlertSettings } | undefined): void {
    this.setQueueState(state);
    this.setAlertFigures(alerts?.figures, alerts?.settings);
  }

  private setQueueState(state: QueueState | undefined): void {
    this.databaseUp.set(state ? 1 : 0);
    this.jobs.reset();
    for (const row of state?.jobs ?? []) {
      this.jobs.set({ task: row.task, state: 'ready' }, row.ready);
      this.jobs.set({ task: row.task, state: 'running' }, row.running);
      this.jobs.set({ task: row.task, state: 'scheduled' }, row.scheduled);
      this.jobs.set({ task: row.task, state: 'failed' }, row.failed);
    }
    this.present(this.jobsOldest, state && Math.max(0, ...state.jobs.map((row) => row.oldest_ready_seconds)));
    this.present(this.webhooksPending, state?.webhooks.pending);
    this.present(this.webhooksOldest, state?.webhooks.oldest_seconds);
    const ledger = state?.ledgerCheck;
    this.present(this.ledgerLastRun, state && (ledger ? ledger.at.getTime() / 1000 : 0));
    this.present(this.ledgerOk, ledger && (ledger.ok ? 1 : 0));
    this.present(this.ledgerProblems, ledger?.problems);
    this.present(this.ledgerDuration, ledger && ledger.ms / 1000);
    this.rateAge.reset();
    this.rateStale.reset();
    this.rateFailures.reset();
    for (const rate of state?.rates ?? []) {
      const labels = { currency: rate.currency, terminal: rate.terminal_id ?? '' };
      if (rate.age_seconds !== null) this.rateAge.set(labels, rate.age_seconds);
      this.rateStale.set(labels, rate.stale ? 1 : 0);
      this.rateFailures.set(labels, rate.failures);
    }
  }

  /**
   * The alert rules' gauges from their figures (left out while the database cannot be read): the
   * in-app rules judge the same figures, so /metrics and Telegram agree.
   */
  private setAlertFigures(figures: AlertFigures | undefined, settings: AlertSettings | undefined): void {
    this.rateHeld.reset();
    this.endpointFailures.reset();
    this.breakerOpen.reset();
    for (const rate of figures?.rates ?? []) this.rateHeld.set({ currency: rate.currency, terminal: rate.terminal_id ?? '' }, rate.held ? 1 : 0);
    for (const endpoint of figures?.webhooks ?? []) this.endpointFailures.set({ merchant: endpoint.merchant_id }, endpoint.failures);
    for (const provider of figures?.providers ?? []) this.breakerOpen.set({ provider: provider.name }, provider.open ? 1 : 0);
    this.present(this.disputesOverdue, figures?.disputesOverdue);
    const conversion = figures?.conversion;
    const judged = conversion && settings && conversion.ended > 0 && conversion.ended >= settings.conversion_min_payments;
    this.present(this.conversionRatio, judged ? conversion.completed / conversion.ended : undefined);
    this.present(this.executorsOff, figures?.executorsOff.length);
  }

  /** An unlabelled gauge that `present` shows or leaves out; created unregistered. */
  private optionalGauge(name: string, help: string): Gauge<string> {
    const gauge = new Gauge({ name, help, registers: [] });
    this.optionalNames.set(gauge, name);
    return gauge;
  }

  /**
   * Shows an unlabelled gauge with `value`, or leaves it out of the exposition when the value is
   * unknown (the database unreadable, the ledger never checked): a 0 there would read as "no
   * backlog" or "the ledger is broken". (prom-client always shows a registered unlabelled gauge.)
   */
  private present(gauge: Gauge<string>, value: number | undefined): void {
    const name = this.optionalNames.get(gauge)!;
    const shown = this.registry.getSingleMetric(name) !== undefined;
    if (value === undefined) {
      if (shown) this.registry.removeSingleMetric(name);
      return;
    }
    gauge.set(value);
    if (!shown) this.registry.registerMetric(gauge);
  }
}

async function readAlerts(db: Db): Promise<{ figures: AlertFigures; settings: AlertSettings }> {
  const settings = await readAlertSettings(db);
  return { figures: await readAlertFigures(db, settings), settings };
}

import { prepared, type Queryable, type Tx } from '../db/pool.js';

/** An outbox row as the operator's delivery log lists it. */
export interface WebhookEventRow {
  id: string;
  resource_type: 'payment' | 'payout';
  resource_id: string;
  event: string;
  url: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** One event with what it carries, for the delivery log's detail. */
export interface WebhookEventDetailRow extends WebhookEventRow {
  merchant_id: string;
  payload: unknown;
}

export interface WebhookAttemptRow {
  attempt: number;
  started_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  response_snippet: string | null;
}

/** An event leased for delivery, with the sealed Secret Key that signs it. */
export interface DueEventRow {
  id: string;
  merchant_id: string;
  resource_id: string;
  event: string;
  payload: unknown;
  url: string;
  notification_token: string | null;
  attempts: number;
  created_at: Date;
  /** The merchant's newest valid Secret Key, sealed; null when it has none. */
  secret_enc: string | null;
}

/** What `insertEvents` writes: one outbox row each. */
export interface NewWebhookEvent {
  merchantId: string;
  resourceType: 'payment' | 'payout';
  resourceId: string;
  event: string;
  payload: unknown;
  url: string;
  notificationToken: string | null;
}

/** Writes events into the outbox in the caller's transaction (migration 013 announces them at COMMIT). */
export async function insertEvents(tx: Tx, events: NewWebhookEvent[]): Promise<void> {
  await tx.query(
    prepared(
      `INSERT INTO webhook_events (merchant_id, resource_type, resource_id, event, payload, url, notification_token)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::jsonb[], $6::text[], $7::text[])`,
      [
        events.map((e) => e.merchantId),
        events.map((e) => e.resourceType),
        events.map((e) => e.resourceId),
        events.map((e) => e.event),
        events.map((e) => JSON.stringify(e.payload)),
        events.map((e) => e.url),
        events.map((e) => e.notificationToken),
      ],
    ),
  );
}

/** Adds a job to graphile-worker's queue under `key`, run at `runAt` (null: now). */
export async function addJob(db: Queryable, task: string, key: string, runAt: Date | null): Promise<void> {
  await db.query(`SELECT graphile_worker.add_job($1, '{}'::json, job_key => $2, run_at => coalesce($3, now()))`, [task, key, runAt]);
}

/**
 * Leases up to `limit` due events for `leaseSeconds`, each the oldest pending event of its
 * resource ("Deliveries of one resource go out in order"): pending, its next attempt due, and not
 * leased by a dispatch that is still within its time. SKIP LOCKED: an event another dispatch is
 * leasing right now is left to it. The earlier pending event of the resource is looked for as a
 * subquery run for each candidate, by webhook_events_resource (resource_id, seq): written as NOT
 * EXISTS, the planner made it an anti-join reading every pending event at every lease (hashed,
 * or compared with each candidate when its estimate was low: 9.8 ms for 32 events with 1,664
 * pending, 0.5 ms this way; docs/performance.md "Fewer statements per completion").
 */
export async function leaseDueEvents(db: Queryable, limit: number, leaseSeconds: number): Promise<DueEventRow[]> {
  const { rows } = await db.query<DueEventRow>(
    prepared(
      `WITH due AS MATERIALIZED (
         SELECT e.id FROM webhook_events e
          WHERE e.status = 'pending' AND e.next_attempt_at <= now()
            AND (e.leased_until IS NULL OR e.leased_until < now())
            AND (SELECT o.seq FROM webhook_events o WHERE o.resource_id = e.resource_id AND o.status = 'pending' AND o.seq < e.seq LIMIT 1) IS NULL
          ORDER BY e.next_attempt_at, e.seq
          LIMIT $1
          FOR UPDATE SKIP LOCKED
       ), leased AS (
         UPDATE webhook_events e SET leased_until = now() + make_interval(secs => $2)
           FROM due WHERE e.id = due.id
         RETURNING e.id, e.merchant_id, e.resource_id, e.event, e.payload, e.url, e.notification_token, e.attempts, e.created_at
       )
       SELECT l.*, s.secret_enc FROM leased l
         LEFT JOIN LATERAL (
           SELECT m.secret_enc FROM merchant_secrets m
            WHERE m.merchant_id = l.merchant_id AND (m.expires_at IS NULL OR m.expires_at > now())
            ORDER BY m.created_at DESC LIMIT 1) s ON true`,
      [limit, leaseSeconds],
    ),
  );
  return rows;
}

/** One delivery attempt's outcome, and what it makes of its event. */
export interface AttemptOutcome {
  eventId: string;
  attempt: number;
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseSnippet: string | null;
  delivered: boolean;
  givingUp: boolean;
  nextAttemptAt: Date;
}

/**
 * Records an attempt and ends its event's lease: delivered, failed for good (`givingUp`), or
 * pending until `nextAttemptAt`.
 */
export async function recordAttempt(db: Queryable, outcome: AttemptOutcome): Promise<void> {
  await db.query(
    prepared(
      `WITH attempt AS (
         INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms, error, response_snippet)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
       )
       UPDATE webhook_events SET attempts = $2, last_error = $6,
              status = CASE WHEN $8 THEN 'delivered' WHEN $9 THEN 'failed' ELSE 'pending' END,
              delivered_at = CASE WHEN $8 THEN now() ELSE NULL END,
              next_attempt_at = $10, leased_until = NULL
        WHERE id = $1`,
      [
        outcome.eventId,
        outcome.attempt,
        outcome.startedAt,
        outcome.statusCode,
        outcome.latencyMs,
        outcome.error,
        outcome.responseSnippet,
        outcome.delivered,
        outcome.givingUp,
        outcome.nextAttemptAt,
      ],
    ),
  );
}

/** A delivered attempt and the endpoint it reached, for `recordDeliveries`. */
export interface Delivery {
  outcome: AttemptOutcome;
  merchantId: string;
  url: string;
}

/**
 * Records delivered attempts, any number in one statement, one round trip for all: each
 * attempt's row, its event delivered (its lease ended, as `recordAttempt` ends it), and the end of
 * its endpoint's run of failures (nothing for an endpoint that was not failing). The endpoints
 * that were failing are locked in one order (merchant, url), so that two such statements at once
 * cannot deadlock over them.
 */
export async function recordDeliveries(db: Queryable, deliveries: Delivery[]): Promise<void> {
  const outcomes = deliveries.map((d) => d.outcome);
  await db.query(
    prepared(
      `WITH o AS MATERIALIZED (
         SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::timestamptz[])
           AS o(event_id, attempt, started_at, status_code, latency_ms, error, response_snippet, next_attempt_at)
       ), attempts AS (
         INSERT INTO webhook_attempts (event_id, attempt, started_at, status_code, latency_ms, error, response_snippet)
         SELECT event_id, attempt, started_at, status_code, latency_ms, error, response_snippet FROM o
       ), events AS (
         UPDATE webhook_events e SET attempts = o.attempt, last_error = o.error, status = 'delivered', delivered_at = now(),
                next_attempt_at = o.next_attempt_at, leased_until = NULL
           FROM o WHERE e.id = o.event_id
       ), failing AS (
         SELECT w.merchant_id, w.url FROM webhook_endpoints w
          WHERE (w.merchant_id, w.url) IN (SELECT * FROM unnest($9::uuid[], $10::text[])) AND w.failures > 0
          ORDER BY w.merchant_id, w.url
          FOR UPDATE
       )
       UPDATE webhook_endpoints w SET failures = 0, failing_since = NULL, last_attempt_at = now()
         FROM failing f WHERE w.merchant_id = f.merchant_id AND w.url = f.url`,
      [
        outcomes.map((o) => o.eventId),
        outcomes.map((o) => o.attempt),
        outcomes.map((o) => o.startedAt),
        outcomes.map((o) => o.statusCode),
        outcomes.map((o) => o.latencyMs),
        outcomes.map((o) => o.error),
        outcomes.map((o) => o.responseSnippet),
        outcomes.map((o) => o.nextAttemptAt),
        deliveries.map((d) => d.merchantId),
        deliveries.map((d) => d.url),
      ],
    ),
  );
}

/**
 * Counts a failed attempt at a merchant's endpoint (migration 051) and answers the failures in a
 * row now and when the run began; concurrent attempts at one endpoint each add one, so exactly one
 * of them sees any given count.
 */
export async function countEndpointFailure(db: Queryable, merchantId: string, url: string): Promise<{ failures: number; failing_since: Date }> {
  const { rows } = await db.query<{ failures: number; failing_since: Date }>(
    `INSERT INTO webhook_endpoints AS w (merchant_id, url, failures, failing_since, last_attempt_at) VALUES ($1, $2, 1, now(), now())
     ON CONFLICT (merchant_id, url) DO UPDATE
       SET failures = w.failures + 1, failing_since = coalesce(w.failing_since, now()), last_attempt_at = now()
     RETURNING w.failures, w.failing_since`,
    [merchantId, url],
  );
  return rows[0]!;
}

/** A pending event whose last attempt failed: it is retried, but the receiver is not answering 2xx. */
const FAILING = `(status = 'pending' AND attempts > 0 AND last_error IS NOT NULL)`;

/** The delivery log, newest first; with `merchantId`, that merchant's events only (the merchant cabinet). */
export async function listEvents(
  db: Queryable,
  filter: { resourceId?: string; status?: string; merchantId?: string; limit: number; offset: number },
): Promise<WebhookEventRow[]> {
  // `failing`: still pending, but its last attempt failed (retried for 24 h before it becomes
  // `failed`); `attention`: failing or failed, what a person should look at.
  const { rows } = await db.query<WebhookEventRow>(
    `SELECT id, resource_type, resource_id, event, url, status, attempts, next_attempt_at, last_error, created_at, delivered_at
       FROM webhook_events
      WHERE ($1::uuid IS NULL OR resource_id = $1) AND ($5::uuid IS NULL OR merchant_id = $5)
        AND CASE $2::text WHEN 'failing' THEN ${FAILING}
                          WHEN 'attention' THEN ${FAILING} OR status = 'failed'
                          ELSE $2::text IS NULL OR status = $2 END
      ORDER BY seq DESC LIMIT $3 OFFSET $4`,
    [filter.resourceId ?? null, filter.status ?? null, filter.limit, filter.offset, filter.merchantId ?? null],
  );
  return rows;
}

/** One event; with `merchantId`, only when it is that merchant's. */
export async function findEvent(db: Queryable, id: string, merchantId?: string): Promise<WebhookEventDetailRow | undefined> {
  const { rows } = await db.query<WebhookEventDetailRow>(
    `SELECT id, merchant_id, resource_type, resource_id, event, payload, url, status, attempts, next_attempt_at, last_error, created_at, delivered_at
       FROM webhook_events WHERE id = $1 AND ($2::uuid IS NULL OR merchant_id = $2)`,
    [id, merchantId ?? null],
  );
  return rows[0];
}

/** An event's attempts, first to last. */
export async function listAttempts(db: Queryable, eventId: string): Promise<WebhookAttemptRow[]> {
  const { rows } = await db.query<WebhookAttemptRow>(
    'SELECT attempt, started_at, status_code, latency_ms, error, response_snippet FROM webhook_attempts WHERE event_id = $1 ORDER BY attempt',
    [eventId],
  );
  return rows;
}

/** Makes an event pending and due now, locked; returns it with the status it had, or undefined when there is none. */
export async function markForResend(tx: Tx, id: string, merchantId?: string): Promise<{ id: string; resource_id: string; status: string } | undefined> {
  const { rows } = await tx.query<{ id: string; resource_id: string; status: string }>(
    `UPDATE webhook_events e SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
       FROM (SELECT id, status FROM webhook_events WHERE id = $1 AND ($2::uuid IS NULL OR merchant_id = $2) FOR UPDATE) old
      WHERE e.id = old.id RETURNING e.id, e.resource_id, old.status`,
    [id, merchantId ?? null],
  );
  return rows[0];
}

/** A resource's events (a payment's or a payout's), in the order they were written. */
export async function listResourceEvents(db: Queryable, resourceType: 'payment' | 'payout', resourceId: string): Promise<WebhookEventRow[]> {
  const { rows } = await db.query<WebhookEventRow>(
    `SELECT id, resource_type, resource_id, event, url, status, attempts, next_attempt_at, last_error, created_at, delivered_at
       FROM webhook_events WHERE resource_id = $1 AND resource_type = $2 ORDER BY seq`,
    [resourceId, resourceType],
  );
  return rows;
}

/** Every delivery attempt of a resource's events, by event (in the order written), first attempt to last. */
export async function listResourceAttempts(
  db: Queryable,
  resourceType: 'payment' | 'payout',
  resourceId: string,
): Promise<(WebhookAttemptRow & { event_id: string })[]> {
  const { rows } = await db.query<WebhookAttemptRow & { event_id: string }>(
    `SELECT a.event_id, a.attempt, a.started_at, a.status_code, a.latency_ms, a.error, a.response_snippet
       FROM webhook_events e JOIN webhook_attempts a ON a.event_id = e.id
      WHERE e.resource_id = $1 AND e.resource_type = $2 ORDER BY e.seq, a.attempt`,
    [resourceId, resourceType],
  );
  return rows;
}

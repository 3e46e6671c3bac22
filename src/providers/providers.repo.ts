import { prepared, type Queryable } from '../db/pool.js';

export interface ProviderRow {
  id: string;
  name: string;
  kind: 'kassir';
  base_url: string;
  api_key_enc: string;
  secret_key_enc: string;
  is_active: boolean;
  failures: number;
  open_until: Date | null;
  created_at: Date;
}

export interface RouteRow {
  position: number;
  provider_id: string | null;
  currencies: string[] | null;
  methods: string[] | null;
}

export async function insertProvider(
  db: Queryable,
  p: { name: string; kind: 'kassir'; baseUrl: string; apiKeyEnc: string; secretKeyEnc: string },
): Promise<ProviderRow> {
  const { rows } = await db.query<ProviderRow>(
    `INSERT INTO providers (name, kind, base_url, api_key_enc, secret_key_enc) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [p.name, p.kind, p.baseUrl, p.apiKeyEnc, p.secretKeyEnc],
  );
  return rows[0]!;
}

/** A provider by id; `lock` takes its row (the lock its update takes) for a change in the same transaction. */
export async function findProvider(db: Queryable, id: string, lock = false): Promise<ProviderRow | undefined> {
  const { rows } = await db.query<ProviderRow>(`SELECT * FROM providers WHERE id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`, [id]);
  return rows[0];
}

export async function listProviders(db: Queryable): Promise<ProviderRow[]> {
  const { rows } = await db.query<ProviderRow>('SELECT * FROM providers ORDER BY created_at');
  return rows;
}

export async function updateProvider(
  db: Queryable,
  id: string,
  patch: { name?: string; baseUrl?: string; apiKeyEnc?: string; secretKeyEnc?: string; isActive?: boolean },
): Promise<ProviderRow | undefined> {
  const { rows } = await db.query<ProviderRow>(
    `UPDATE providers SET name = coalesce($2, name), base_url = coalesce($3, base_url), api_key_enc = coalesce($4, api_key_enc),
            secret_key_enc = coalesce($5, secret_key_enc), is_active = coalesce($6, is_active),
            failures = CASE WHEN $6 THEN 0 ELSE failures END, open_until = CASE WHEN $6 THEN NULL ELSE open_until END,
            updated_at = now()
      WHERE id = $1 RETURNING *`,
    [id, patch.name ?? null, patch.baseUrl ?? null, patch.apiKeyEnc ?? null, patch.secretKeyEnc ?? null, patch.isActive ?? null],
  );
  return rows[0];
}

export type TerminalRoute = RouteRow & { provider: ProviderRow | null };

/** The terminal's routes in order, each with its provider when it is one. */
export async function terminalRoutes(db: Queryable, terminalId: string): Promise<TerminalRoute[]> {
  const { rows } = await db.query<RouteJson>(prepared(terminalRoutesSql('$1'), [terminalId]));
  return rows.map(toTerminalRoute);
}

/** terminalRoutes as SQL over a terminal id placeholder; its rows go through toTerminalRoute. */
export function terminalRoutesSql(terminalId: string): string {
  return `SELECT r.position, r.provider_id, r.currencies, r.methods, to_jsonb(p) AS provider
            FROM terminal_routes r LEFT JOIN providers p ON p.id = r.provider_id
           WHERE r.terminal_id = ${terminalId} ORDER BY r.position`;
}

/** A route row, whose provider came as JSON (timestamps as text). */
export type RouteJson = RouteRow & { provider: (Omit<ProviderRow, 'open_until' | 'created_at'> & { open_until: string | null; created_at: string }) | null };

export function toTerminalRoute(row: RouteJson): TerminalRoute {
  return {
    ...row,
    provider: row.provider
      ? { ...row.provider, open_until: row.provider.open_until ? new Date(row.provider.open_until) : null, created_at: new Date(row.provider.created_at) }
      : null,
  };
}

export async function replaceRoutes(db: Queryable, terminalId: string, routes: Omit<RouteRow, 'position'>[]): Promise<void> {
  await db.query('DELETE FROM terminal_routes WHERE terminal_id = $1', [terminalId]);
  for (const [position, route] of routes.entries()) {
    await db.query('INSERT INTO terminal_routes (terminal_id, position, provider_id, currencies, methods) VALUES ($1, $2, $3, $4, $5)', [
      terminalId,
      position,
      route.provider_id,
      route.currencies,
      route.methods,
    ]);
  }
}

/** Circuit breaker: a failure counts; `threshold` in a row takes the provider out for `cooldownSeconds`. */
export async function recordFailure(db: Queryable, id: string, threshold: number, cooldownSeconds: number): Promise<void> {
  await db.query(
    `UPDATE providers SET failures = failures + 1,
            open_until = CASE WHEN failures + 1 >= $2 THEN now() + make_interval(secs => $3) ELSE open_until END
      WHERE id = $1`,
    [id, threshold, cooldownSeconds],
  );
}

export async function recordSuccess(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE providers SET failures = 0, open_until = NULL WHERE id = $1 AND (failures <> 0 OR open_until IS NOT NULL)', [id]);
}

export type ProviderActionKind = 'open_dispute' | 'send_receipt' | 'cancel_dispute';

/** Queues an action at the provider for a payment it executes; carried out in order by a job. */
export async function insertProviderAction(
  tx: Queryable,
  a: { providerId: string; paymentId: string; action: ProviderActionKind; receiptId: string | null; params: Record<string, unknown> },
): Promise<void> {
  await tx.query(`INSERT INTO provider_actions (provider_id, payment_id, action, receipt_id, params) VALUES ($1, $2, $3, $4, $5)`, [
    a.providerId,
    a.paymentId,
    a.action,
    a.receiptId,
    JSON.stringify(a.params),
  ]);
}

/** Schedules the job `task` that carries out a payment's provider actions: one queue per payment, in order. */
export async function addProviderActionsJob(db: Queryable, task: string, paymentId: string): Promise<void> {
  await db.query(`SELECT graphile_worker.add_job($1, json_build_object('payment_id', $2::text), queue_name => $3, job_key => $3)`, [
    task,
    paymentId,
    `provider-actions:${paymentId}`,
  ]);
}

export interface ProviderActionRow {
  id: string;
  provider_id: string;
  action: ProviderActionKind;
  receipt_id: string | null;
  params: Record<string, unknown>;
  /** The provider's id for the payment the action is about. */
  provider_payment_id: string;
}

/** A payment's oldest pending provider action. */
export async function nextProviderAction(db: Queryable, paymentId: string): Promise<ProviderActionRow | undefined> {
  const { rows } = await db.query<ProviderActionRow>(
    `SELECT a.id, a.provider_id, a.action, a.receipt_id, a.params, p.provider_payment_id
       FROM provider_actions a JOIN payments p ON p.id = a.payment_id
      WHERE a.payment_id = $1 AND a.status = 'pending' ORDER BY a.seq LIMIT 1`,
    [paymentId],
  );
  return rows[0];
}

/** Counts a failed attempt; `final` when a retry cannot help (the action is then failed). */
export async function recordActionFailure(db: Queryable, id: string, message: string, final: boolean): Promise<void> {
  await db.query(`UPDATE provider_actions SET attempts = attempts + 1, last_error = $2, status = CASE WHEN $3 THEN 'failed' ELSE status END WHERE id = $1`, [
    id,
    message,
    final,
  ]);
}

export async function recordActionDone(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE provider_actions SET status = 'done', attempts = attempts + 1, done_at = now() WHERE id = $1`, [id]);
}

/**
 * Records a provider callback's event id: false when it was recorded before (a replay, to be
 * acknowledged without effect).
 */
export async function recordCallback(tx: Queryable, c: { providerId: string; eventId: string; resourceId: string; event: string }): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO provider_callbacks (provider_id, event_id, resource_id, event) VALUES ($1, $2, $3, $4)
     ON CONFLICT (provider_id, event_id) DO NOTHING RETURNING 1`,
    [c.providerId, c.eventId, c.resourceId, c.event],
  );
  return rowCount !== null && rowCount > 0;
}

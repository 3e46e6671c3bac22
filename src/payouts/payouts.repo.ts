import { PgCode, pgConstraint, pgErrorCode, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';

export interface PayoutRow {
  id: string;
  merchant_id: string;
  terminal_id: string;
  ext_id: string;
  amount: string;
  currency: string;
  method: 'card' | 'sbp';
  requisites: string;
  holder_name: string;
  bank: string;
  notify_url: string | null;
  status: PayoutStatus;
  rate: string;
  /** The rate refresh that gave `rate` (null before rates had refreshes). */
  rate_refresh_id: string | null;
  payout_rate: string;
  reserve: string;
  executor_id: string | null;
  proof_key: string | null;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  taken_at: Date | null;
  completed_at: Date | null;
  provider_id: string | null;
  provider_payout_id: string | null;
}

export const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/**
 * The payout state machine: pending → processing → completed | failed | cancelled. The operator
 * may also settle a payout straight from pending. Every change goes through `transitionPayout`.
 */
export const PAYOUT_TRANSITIONS = {
  take: { from: ['pending'], to: 'processing' },
  complete: { from: ['pending', 'processing'], to: 'completed' },
  fail: { from: ['pending', 'processing'], to: 'failed' },
  cancel: { from: ['pending', 'processing'], to: 'cancelled' },
} as const satisfies Record<string, { from: readonly PayoutStatus[]; to: PayoutStatus }>;
export type PayoutEvent = keyof typeof PAYOUT_TRANSITIONS;

/** Records a new payout; the merchant's ext_id taken already is PAY_003. */
export async function insertPayout(
  tx: Tx,
  p: Omit<
    PayoutRow,
    | 'id'
    | 'status'
    | 'executor_id'
    | 'proof_key'
    | 'failure_reason'
    | 'created_at'
    | 'updated_at'
    | 'taken_at'
    | 'completed_at'
    | 'currency'
    | 'provider_id'
    | 'provider_payout_id'
  >,
): Promise<PayoutRow> {
  try {
    const { rows } = await tx.query<PayoutRow>(
      `INSERT INTO payouts (merchant_id, terminal_id, ext_id, amount, method, requisites, holder_name, bank, notify_url, rate, rate_refresh_id, payout_rate, reserve)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
      [
        p.merchant_id,
        p.terminal_id,
        p.ext_id,
        p.amount,
        p.method,
        p.requisites,
        p.holder_name,
        p.bank,
        p.notify_url,
        p.rate,
        p.rate_refresh_id,
        p.payout_rate,
        p.reserve,
      ],
    );
    return rows[0]!;
  } catch (err) {
    if (pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'payouts_merchant_ext_id_key') {
      throw new DomainError('PAY_003', `A payout with ext_id ${p.ext_id} already exists`, { ext_id: p.ext_id });
    }
    throw err;
  }
}

export async function findMerchantPayout(db: Queryable, merchantId: string, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE merchant_id = $1 AND id = $2', [merchantId, id]);
  return rows[0];
}

export async function findMerchantPayoutByExtId(db: Queryable, merchantId: string, extId: string): Promise<PayoutRow | undefined> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE merchant_id = $1 AND ext_id = $2', [merchantId, extId]);
  return rows[0];
}

export async function findPayout(db: Queryable, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1', [id]);
  return rows[0];
}

export interface PayoutFilter {
  merchantId: string | null;
  status?: string;
  from?: Date;
  to?: Date;
  limit: number;
  offset: number;
}

export async function listPayouts(db: Queryable, f: PayoutFilter): Promise<{ rows: PayoutRow[]; total: number }> {
  // created_at has microseconds but the API shows (and takes) milliseconds: `to` equal to a
  // payout's created_at as shown must include it, so the end bound covers its whole millisecond.
  const where = `WHERE ($1::uuid IS NULL OR merchant_id = $1) AND ($2::text IS NULL OR status = $2)
                   AND ($3::timestamptz IS NULL OR created_at >= $3)
                   AND ($4::timestamptz IS NULL OR created_at < $4::timestamptz + interval '1 millisecond')`;
  const params = [f.merchantId, f.status ?? null, f.from ?? null, f.to ?? null];
  const [{ rows }, count] = await Promise.all([
    db.query<PayoutRow>(`SELECT * FROM payouts ${where} ORDER BY created_at DESC, id LIMIT $5 OFFSET $6`, [...params, f.limit, f.offset]),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM payouts ${where}`, params),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** Pending payouts an executor may take, oldest first. */
export async function listAvailablePayouts(db: Queryable, limit: number): Promise<PayoutRow[]> {
  const { rows } = await db.query<PayoutRow>(`SELECT * FROM payouts WHERE status = 'pending' AND provider_id IS NULL ORDER BY created_at LIMIT $1`, [limit]);
  return rows;
}

export async function listExecutorPayouts(db: Queryable, executorId: string): Promise<PayoutRow[]> {
  const { rows } = await db.query<PayoutRow>(`SELECT * FROM payouts WHERE executor_id = $1 AND status = 'processing' ORDER BY taken_at`, [executorId]);
  return rows;
}

/**
 * Applies a payout event, guarded in SQL on the current status (and, for an executor acting on
 * a payout it took, on the executor): two racing actors cannot both win.
 */
export async function transitionPayout(
  tx: Queryable,
  id: string,
  event: PayoutEvent,
  extra: { executorId?: string; requireExecutor?: string; proofKey?: string; reason?: string } = {},
): Promise<PayoutRow | undefined> {
  const rule = PAYOUT_TRANSITIONS[event];
  const { rows } = await tx.query<PayoutRow>(
    `UPDATE payouts SET status = $3, updated_at = now(),
            executor_id = coalesce($4, executor_id),
            taken_at = CASE WHEN $3 = 'processing' THEN now() ELSE taken_at END,
            completed_at = CASE WHEN $3 = 'completed' THEN now() ELSE completed_at END,
            proof_key = coalesce($6, proof_key),
            failure_reason = coalesce($7, failure_reason)
      WHERE id = $1 AND status = ANY($2::text[]) AND ($5::uuid IS NULL OR executor_id = $5)
        -- A payout sent to a provider is executed there, never taken by one of our executors.
        AND NOT ($4::uuid IS NOT NULL AND provider_id IS NOT NULL)
      RETURNING *`,
    [id, rule.from, rule.to, extra.executorId ?? null, extra.requireExecutor ?? null, extra.proofKey ?? null, extra.reason ?? null],
  );
  return rows[0];
}

/** Records the provider that took a payout, and its id there (the payout's status is the provider's to change, by callback). */
export async function recordProvider(db: Queryable, id: string, providerId: string, providerPayoutId: string): Promise<PayoutRow> {
  const { rows } = await db.query<PayoutRow>('UPDATE payouts SET provider_id = $2, provider_payout_id = $3, updated_at = now() WHERE id = $1 RETURNING *', [
    id,
    providerId,
    providerPayoutId,
  ]);
  return rows[0]!;
}

/** A provider-executed payout's id, by the provider's id for it, locked. */
export async function lockProviderPayout(tx: Tx, providerId: string, providerPayoutId: string): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>('SELECT id FROM payouts WHERE provider_id = $1 AND provider_payout_id = $2 FOR UPDATE', [
    providerId,
    providerPayoutId,
  ]);
  return rows[0]?.id;
}

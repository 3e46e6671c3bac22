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
  /** A test terminal's payout (migration 039): reserves nothing, taken by no executor, sent to no provider. */
  is_test: boolean;
}

/** A payout's statuses; the events that move it between them are lifecycle.ts's TRANSITIONS. */
export const PAYOUT_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

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
    | 'is_test'
  > & { is_test?: boolean },
): Promise<PayoutRow> {
  try {
    const { rows } = await tx.query<PayoutRow>(
      `INSERT INTO payouts (merchant_id, terminal_id, ext_id, amount, method, requisites, holder_name, bank, notify_url, rate, rate_refresh_id, payout_rate, reserve, is_test)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
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
        p.is_test ?? false,
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

/** Who paid a completed payout: the executor who took it, the provider that did, and the person whose completion the audit log names. */
export interface PayoutPayer {
  executor: string | null;
  provider: string | null;
  person: string | null;
}

/** Who paid each of these payouts that is completed (by id): read from the executors, the providers and the audit log's `payout.complete`. */
export async function payoutPayers(db: Queryable, ids: string[]): Promise<Map<string, PayoutPayer>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<PayoutPayer & { id: string }>(
    `SELECT p.id, e.name AS executor, pr.name AS provider,
            (SELECT a.actor FROM audit_log a
              WHERE a.object_type = 'payout' AND a.object_id = p.id::text AND a.action = 'payout.complete'
              ORDER BY a.id DESC LIMIT 1) AS person
       FROM payouts p
       LEFT JOIN executors e ON e.id = p.executor_id
       LEFT JOIN providers pr ON pr.id = p.provider_id
      WHERE p.id = ANY($1::uuid[]) AND p.status = 'completed'`,
    [ids],
  );
  return new Map(rows.map(({ id, ...payer }) => [id, payer]));
}

/** Pending payouts an executor may take, oldest first. */
export async function listAvailablePayouts(db: Queryable, limit: number): Promise<PayoutRow[]> {
  const { rows } = await db.query<PayoutRow>(
    `SELECT * FROM payouts WHERE status = 'pending' AND provider_id IS NULL AND NOT is_test ORDER BY created_at LIMIT $1`,
    [limit],
  );
  return rows;
}

export async function listExecutorPayouts(db: Queryable, executorId: string): Promise<PayoutRow[]> {
  const { rows } = await db.query<PayoutRow>(`SELECT * FROM payouts WHERE executor_id = $1 AND status = 'processing' ORDER BY taken_at`, [executorId]);
  return rows;
}

/** The payouts the executor paid (completed), newest first: its history in the cabinet. */
export async function listPaidPayouts(db: Queryable, executorId: string, limit: number): Promise<PayoutRow[]> {
  const { rows } = await db.query<PayoutRow>(
    `SELECT * FROM payouts WHERE executor_id = $1 AND status = 'completed' ORDER BY completed_at DESC NULLS LAST, id LIMIT $2`,
    [executorId, limit],
  );
  return rows;
}

/** One of the executor's own payouts (owner-scoped: another executor's is not found). */
export async function findExecutorPayout(db: Queryable, executorId: string, id: string): Promise<PayoutRow | undefined> {
  const { rows } = await db.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 AND executor_id = $2', [id, executorId]);
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

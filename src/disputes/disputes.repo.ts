import type { Queryable } from '../db/pool.js';

export interface DisputeRow {
  id: string;
  payment_id: string;
  merchant_id: string;
  amount: string | null;
  comment: string | null;
  receipt_id: string | null;
  status: 'open' | 'cancelled' | 'approved' | 'rejected';
  decided_amount: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  /** Why a person rejected it, in their words (migration 037). */
  decision_reason: string | null;
  created_at: Date;
}

const COLUMNS = 'id, payment_id, merchant_id, amount, comment, receipt_id, status, decided_amount, decided_by, decided_at, decision_reason, created_at';

export async function insertDispute(
  db: Queryable,
  d: { paymentId: string; merchantId: string; amount: string | null; comment: string | null; receiptId: string | null },
): Promise<DisputeRow> {
  const { rows } = await db.query<DisputeRow>(
    `INSERT INTO disputes (payment_id, merchant_id, amount, comment, receipt_id) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [d.paymentId, d.merchantId, d.amount, d.comment, d.receiptId],
  );
  return rows[0]!;
}

/**
 * Attaches a receipt to the payment's open dispute only when the dispute has none yet (spec: "an
 * earlier receipt is never overwritten").
 */
export async function attachReceiptIfNone(db: Queryable, paymentId: string, receiptId: string): Promise<boolean> {
  const { rowCount } = await db.query(`UPDATE disputes SET receipt_id = $2 WHERE payment_id = $1 AND status = 'open' AND receipt_id IS NULL`, [
    paymentId,
    receiptId,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Closes the payment's open dispute with the outcome. */
export async function closeDispute(
  db: Queryable,
  paymentId: string,
  outcome: { status: 'cancelled' | 'approved' | 'rejected'; decidedAmount?: string; decidedBy?: string; reason?: string },
): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(
    `UPDATE disputes SET status = $2, decided_amount = $3, decided_by = $4, decision_reason = $5, decided_at = now()
      WHERE payment_id = $1 AND status = 'open' RETURNING ${COLUMNS}`,
    [paymentId, outcome.status, outcome.decidedAmount ?? null, outcome.decidedBy ?? null, outcome.reason ?? null],
  );
  return rows[0];
}

export async function listDisputes(db: Queryable, filter: { status?: string; limit: number; offset: number }): Promise<DisputeRow[]> {
  const { rows } = await db.query<DisputeRow>(
    `SELECT ${COLUMNS} FROM disputes WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [filter.status ?? null, filter.limit, filter.offset],
  );
  return rows;
}

export async function findDispute(db: Queryable, id: string): Promise<DisputeRow | undefined> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE id = $1`, [id]);
  return rows[0];
}

/** A payment's disputes, oldest first (index disputes_payment, migration 030). */
export async function listPaymentDisputes(db: Queryable, paymentId: string): Promise<DisputeRow[]> {
  const { rows } = await db.query<DisputeRow>(`SELECT ${COLUMNS} FROM disputes WHERE payment_id = $1 ORDER BY created_at, id`, [paymentId]);
  return rows;
}

import type { Queryable } from '../db/pool.js';

/** A flag (or a refusal) as a person sees it: the rule, the figure, and who settled it. */
export interface RiskFlagRow {
  id: string;
  created_at: Date;
  rule: string;
  action: 'refused' | 'flagged';
  merchant_id: string | null;
  payment_id: string | null;
  payout_id: string | null;
  dispute_id: string | null;
  inputs: Record<string, unknown>;
  figure: string;
  settled_at: Date | null;
  settled_by: string | null;
  settle_comment: string | null;
}

const COLUMNS = 'id, created_at, rule, action, merchant_id, payment_id, payout_id, dispute_id, inputs, figure, settled_at, settled_by, settle_comment';

/**
 * The flags on the given payments, disputes or payouts, oldest first (risk_hits_payment,
 * risk_hits_dispute and risk_hits_payout, migration 045): a dispute's own flags and its payment's.
 */
export async function listFlags(db: Queryable, on: { paymentIds?: string[]; disputeIds?: string[]; payoutIds?: string[] }): Promise<RiskFlagRow[]> {
  const { rows } = await db.query<RiskFlagRow>(
    `SELECT ${COLUMNS} FROM risk_hits WHERE action = 'flagged' AND payment_id = ANY($1::uuid[])
     UNION
     SELECT ${COLUMNS} FROM risk_hits WHERE action = 'flagged' AND dispute_id = ANY($2::uuid[])
     UNION
     SELECT ${COLUMNS} FROM risk_hits WHERE action = 'flagged' AND payout_id = ANY($3::uuid[])
     ORDER BY created_at, id`,
    [on.paymentIds ?? [], on.disputeIds ?? [], on.payoutIds ?? []],
  );
  return rows;
}

export async function findHit(db: Queryable, id: string): Promise<RiskFlagRow | undefined> {
  const { rows } = await db.query<RiskFlagRow>(`SELECT ${COLUMNS} FROM risk_hits WHERE id = $1`, [id]);
  return rows[0];
}

/** Settles an open flag (guarded: settled once; a second settle changes nothing and returns undefined). */
export async function settleFlag(db: Queryable, id: string, by: string, comment: string | null): Promise<RiskFlagRow | undefined> {
  const { rows } = await db.query<RiskFlagRow>(
    `UPDATE risk_hits SET settled_at = now(), settled_by = $2, settle_comment = $3
      WHERE id = $1 AND action = 'flagged' AND settled_at IS NULL RETURNING ${COLUMNS}`,
    [id, by, comment],
  );
  return rows[0];
}

/**
 * SQL that is true when a dispute (`alias`, a row of disputes) or its payment has a flag no
 * person settled yet: the dispute queue's `flagged` filter (risk_hits_dispute, risk_hits_payment).
 */
export function openFlagExists(alias: string): string {
  return `EXISTS (SELECT 1 FROM risk_hits h WHERE h.action = 'flagged' AND h.settled_at IS NULL
                    AND (h.dispute_id = ${alias}.id OR h.payment_id = ${alias}.payment_id))`;
}

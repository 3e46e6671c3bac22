import type { Queryable } from '../db/pool.js';

/** The traffic classes of payers (migration 048). */
export const TRAFFIC_CLASSES = ['new', 'returning', 'trusted'] as const;
export type TrafficClass = (typeof TRAFFIC_CLASSES)[number];

/** The pool's risk rules, one row (risk_pool_rules, migration 048). */
export interface PoolRulesRow {
  returning_from: number;
  trusted_from: number;
  requisite_max_count: number | null;
  requisite_count_seconds: number | null;
  requisite_max_amount: string | null;
  requisite_amount_seconds: number | null;
  updated_at: Date;
}

const COLUMNS = `returning_from, trusted_from, requisite_max_count, requisite_count_seconds, requisite_max_amount,
  requisite_amount_seconds, updated_at`;

/** The rules; `lock` takes the one row for a change in the same transaction. */
export async function getPoolRules(db: Queryable, lock = false): Promise<PoolRulesRow> {
  const { rows } = await db.query<PoolRulesRow>(`SELECT ${COLUMNS} FROM risk_pool_rules${lock ? ' FOR UPDATE' : ''}`);
  return rows[0]!;
}

/** Sets the class thresholds. */
export async function setClassThresholds(db: Queryable, returningFrom: number, trustedFrom: number): Promise<PoolRulesRow> {
  const { rows } = await db.query<PoolRulesRow>(`UPDATE risk_pool_rules SET returning_from = $1, trusted_from = $2, updated_at = now() RETURNING ${COLUMNS}`, [
    returningFrom,
    trustedFrom,
  ]);
  return rows[0]!;
}

/** Sets the requisite velocity (null pairs: no limit of that kind). */
export async function setRequisiteVelocity(
  db: Queryable,
  v: { maxCount: number | null; countSeconds: number | null; maxAmount: string | null; amountSeconds: number | null },
): Promise<PoolRulesRow> {
  const { rows } = await db.query<PoolRulesRow>(
    `UPDATE risk_pool_rules SET requisite_max_count = $1, requisite_count_seconds = $2, requisite_max_amount = $3,
            requisite_amount_seconds = $4, updated_at = now()
     RETURNING ${COLUMNS}`,
    [v.maxCount, v.countSeconds, v.maxAmount, v.amountSeconds],
  );
  return rows[0]!;
}

/** A payer's class with a merchant now (payer_class, the function the cascade uses). */
export async function payerClass(db: Queryable, merchantId: string, clientId: string | null): Promise<TrafficClass> {
  const { rows } = await db.query<{ cls: TrafficClass }>('SELECT payer_class($1, $2) AS cls', [merchantId, clientId]);
  return rows[0]!.cls;
}

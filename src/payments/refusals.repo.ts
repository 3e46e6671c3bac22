import type { Queryable } from '../db/pool.js';

/** A payment create refused for want of capacity (PAY_004, PAY_005): one row of lost demand. */
export interface Refusal {
  at: Date;
  merchantId: string;
  terminalId: string;
  code: 'PAY_004' | 'PAY_005';
  method: string;
  /** The bank or mobile operator code the merchant asked for; null when it named none. */
  bank: string | null;
  currency: string;
  /** The order amount, as a decimal string. */
  amount: string;
  /** The risk rule that refused it (migration 045); absent for the pool's own refusals. */
  riskRule?: string;
}

/** Writes refusals in one statement, however many (one round trip for a batch). */
export async function insertRefusals(db: Queryable, refusals: readonly Refusal[]): Promise<void> {
  if (refusals.length === 0) return;
  await db.query(
    `INSERT INTO payment_refusals (created_at, merchant_id, terminal_id, code, method, bank, currency, amount, risk_rule)
     SELECT * FROM unnest($1::timestamptz[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::numeric[], $9::text[])`,
    [
      refusals.map((r) => r.at),
      refusals.map((r) => r.merchantId),
      refusals.map((r) => r.terminalId),
      refusals.map((r) => r.code),
      refusals.map((r) => r.method),
      refusals.map((r) => r.bank),
      refusals.map((r) => r.currency),
      refusals.map((r) => r.amount),
      refusals.map((r) => r.riskRule ?? null),
    ],
  );
}

import type { Queryable } from '../db/pool.js';
import type { RiskHit } from './hits.repo.js';

/**
 * Writes many hits in one statement: the refusals of creates, recorded in the background with the
 * lost demand they explain (payments/refusals.ts), one round trip for a burst of them.
 */
export async function insertRiskHits(db: Queryable, hits: readonly RiskHit[]): Promise<void> {
  if (hits.length === 0) return;
  await db.query(
    `INSERT INTO risk_hits (created_at, rule, action, merchant_id, terminal_id, payment_id, payout_id, dispute_id, inputs, figure)
     SELECT coalesce(at, now()), rule, action, merchant_id, terminal_id, payment_id, payout_id, dispute_id, inputs, figure
     FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::uuid[], $9::jsonb[], $10::text[])
       AS h(at, rule, action, merchant_id, terminal_id, payment_id, payout_id, dispute_id, inputs, figure)`,
    [
      hits.map((h) => h.at ?? null),
      hits.map((h) => h.rule),
      hits.map((h) => h.action),
      hits.map((h) => h.merchantId),
      hits.map((h) => h.terminalId ?? null),
      hits.map((h) => h.paymentId ?? null),
      hits.map((h) => h.payoutId ?? null),
      hits.map((h) => h.disputeId ?? null),
      hits.map((h) => JSON.stringify(h.inputs)),
      hits.map((h) => h.figure),
    ],
  );
}

import type { Queryable } from '../db/pool.js';

/** The rules that refuse or flag (migration 045). */
export type RiskRule = 'block' | 'velocity' | 'traffic_class' | 'receipt_reused' | 'reference_reused' | 'payer_name';

/**
 * One decision of a risk rule, explained: the rule, what it read and the figure it compared
 * ('velocity client_id 7 in 600 s > 5'). `inputs` never holds a card number or phone in clear.
 */
export interface RiskHit {
  rule: RiskRule;
  action: 'refused' | 'flagged';
  merchantId: string | null;
  terminalId?: string | null;
  paymentId?: string | null;
  payoutId?: string | null;
  disputeId?: string | null;
  inputs: Record<string, unknown>;
  figure: string;
  /** Defaults to now (a refusal written a moment after it was made passes its own time). */
  at?: Date;
}

/** Records one decision; in the transaction of the flag it explains, so neither exists without the other. */
export async function insertRiskHit(db: Queryable, hit: RiskHit): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO risk_hits (created_at, rule, action, merchant_id, terminal_id, payment_id, payout_id, dispute_id, inputs, figure)
     VALUES (coalesce($1::timestamptz, now()), $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10) RETURNING id`,
    [
      hit.at ?? null,
      hit.rule,
      hit.action,
      hit.merchantId,
      hit.terminalId ?? null,
      hit.paymentId ?? null,
      hit.payoutId ?? null,
      hit.disputeId ?? null,
      JSON.stringify(hit.inputs),
      hit.figure,
    ],
  );
  return rows[0]!.id;
}

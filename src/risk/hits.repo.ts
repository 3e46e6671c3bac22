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

/** "2026-11-27 10:02" (UTC): when, in a figure a person reads. */
export function minuteOf(at: Date): string {
  return at.toISOString().slice(0, 16).replace('T', ' ');
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

/** The rules a hit may name, in the order the console lists them. */
export const RISK_RULES: readonly RiskRule[] = ['block', 'velocity', 'traffic_class', 'receipt_reused', 'reference_reused', 'payer_name'];

/** A stored decision, with the names of its merchant and terminal for a person to read. */
export interface RiskHitRow {
  id: string;
  created_at: Date;
  rule: string;
  action: 'refused' | 'flagged';
  merchant_id: string | null;
  merchant_name: string | null;
  terminal_id: string | null;
  terminal_name: string | null;
  payment_id: string | null;
  payout_id: string | null;
  dispute_id: string | null;
  inputs: Record<string, unknown>;
  figure: string;
  settled_at: Date | null;
  settled_by: string | null;
}

/** Which hits a list or an export reads; every field narrows it. */
export interface RiskHitFilter {
  rule?: string;
  action?: 'refused' | 'flagged';
  merchantId?: string;
  paymentId?: string;
  disputeId?: string;
  from?: Date;
  to?: Date;
  /** Only the flags no person has settled yet. */
  unsettled?: boolean;
}

const HIT_COLUMNS = `h.id, h.created_at, h.rule, h.action, h.merchant_id, m.name AS merchant_name, h.terminal_id, t.name AS terminal_name,
       h.payment_id, h.payout_id, h.dispute_id, h.inputs, h.figure, h.settled_at, h.settled_by`;
const HIT_FROM = `risk_hits h
  LEFT JOIN merchants m ON m.id = h.merchant_id
  LEFT JOIN terminals t ON t.id = h.terminal_id`;

/** The filter as SQL conditions, their parameters numbered from $1. */
function hitConditions(filter: RiskHitFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [];
  const conditions: string[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(sql(`$${params.length}`));
  };
  if (filter.rule !== undefined) add((n) => `h.rule = ${n}`, filter.rule);
  if (filter.action !== undefined) add((n) => `h.action = ${n}`, filter.action);
  if (filter.merchantId !== undefined) add((n) => `h.merchant_id = ${n}`, filter.merchantId);
  if (filter.paymentId !== undefined) add((n) => `h.payment_id = ${n}`, filter.paymentId);
  if (filter.disputeId !== undefined) add((n) => `h.dispute_id = ${n}`, filter.disputeId);
  if (filter.from !== undefined) add((n) => `h.created_at >= ${n}`, filter.from);
  if (filter.to !== undefined) add((n) => `h.created_at < ${n}`, filter.to);
  // The partial index risk_hits_open_flags holds exactly these rows.
  if (filter.unsettled) conditions.push(`h.action = 'flagged' AND h.settled_at IS NULL`);
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}

/** One page of hits, newest first, and how many match in all. */
export async function listRiskHits(
  db: Queryable,
  filter: RiskHitFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: RiskHitRow[]; total: number }> {
  const { where, params } = hitConditions(filter);
  const { rows } = await db.query<RiskHitRow & { total: number }>(
    `SELECT ${HIT_COLUMNS}, count(*) OVER ()::int AS total
       FROM ${HIT_FROM}
      ${where}
      ORDER BY h.created_at DESC, h.id DESC
      LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, page.limit, page.offset],
  );
  // count(*) OVER () is on every row; a page past the end has none, and asks once more.
  let total = rows[0]?.total;
  if (total === undefined) {
    const counted = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM risk_hits h ${where}`, params);
    total = counted.rows[0]!.total;
  }
  return { rows: rows.map(({ total: _, ...row }) => row), total };
}

/**
 * Every hit the filter matches, newest first, read in batches by keyset (created_at, id): an
 * export of a year of hits holds one batch in memory at a time, and rows written meanwhile
 * neither shift a batch nor appear twice.
 */
export async function* eachRiskHit(db: Queryable, filter: RiskHitFilter, batch = 500): AsyncGenerator<RiskHitRow> {
  const { where, params } = hitConditions(filter);
  let after: { at: Date; id: string } | undefined;
  for (;;) {
    const keyset = after ? `${where ? `${where} AND` : 'WHERE'} (h.created_at, h.id) < ($${params.length + 2}, $${params.length + 3})` : where;
    const { rows } = await db.query<RiskHitRow>(
      `SELECT ${HIT_COLUMNS} FROM ${HIT_FROM} ${keyset} ORDER BY h.created_at DESC, h.id DESC LIMIT $${params.length + 1}`,
      after ? [...params, batch, after.at, after.id] : [...params, batch],
    );
    yield* rows;
    if (rows.length < batch) return;
    const last = rows.at(-1)!;
    after = { at: last.created_at, id: last.id };
  }
}

/** How many hits one rule had in one bucket (Unix seconds of its start). */
export interface RiskSummaryRow {
  at: number;
  rule: string;
  count: number;
}

/** Hits per bucket and rule in [from, to), buckets aligned on `from`; empty buckets are left out. */
export async function riskHitCounts(db: Queryable, from: Date, to: Date, bucketSeconds: number): Promise<RiskSummaryRow[]> {
  const { rows } = await db.query<RiskSummaryRow>(
    `SELECT extract(epoch FROM date_bin($3::interval, created_at, $1))::bigint::int AS at, rule, count(*)::int AS count
       FROM risk_hits
      WHERE created_at >= $1 AND created_at < $2
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [from, to, `${bucketSeconds} seconds`],
  );
  return rows;
}

/** A payment's hits, and those of its disputes, oldest first (its timeline). */
export async function listPaymentRiskHits(db: Queryable, paymentId: string): Promise<RiskHitRow[]> {
  const { rows } = await db.query<RiskHitRow>(
    `SELECT ${HIT_COLUMNS}
       FROM ${HIT_FROM}
      WHERE h.payment_id = $1
         OR h.dispute_id IN (SELECT d.id FROM disputes d WHERE d.payment_id = $1)
      ORDER BY h.created_at, h.id`,
    [paymentId],
  );
  return rows;
}

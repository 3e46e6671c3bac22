import type { Queryable } from '../db/pool.js';
import type { BlockKind } from './marks.js';

/** A row of risk_blocks (migration 047); the value only as its keyed hash and its shown form. */
export interface BlockRow {
  id: string;
  kind: BlockKind;
  value_hash: string;
  value_shown: string;
  merchant_id: string | null;
  reason: string;
  expires_at: Date | null;
  created_by: string;
  created_at: Date;
  removed_by: string | null;
  removed_at: Date | null;
}

const COLUMNS = 'id, kind, value_hash, value_shown, merchant_id, reason, expires_at, created_by, created_at, removed_by, removed_at';

/** The condition of a block that holds now. */
const ACTIVE = 'removed_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

export interface NewBlock {
  kind: BlockKind;
  valueHash: string;
  valueShown: string;
  merchantId: string | null;
  reason: string;
  expiresAt: Date | null;
  createdBy: string;
}

export async function insertBlock(db: Queryable, block: NewBlock): Promise<BlockRow> {
  const { rows } = await db.query<BlockRow>(
    `INSERT INTO risk_blocks (kind, value_hash, value_shown, merchant_id, reason, expires_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [block.kind, block.valueHash, block.valueShown, block.merchantId, block.reason, block.expiresAt, block.createdBy],
  );
  return rows[0]!;
}

/** Ends a block that has not been removed yet; undefined when there is none such. */
export async function removeBlock(db: Queryable, id: string, removedBy: string): Promise<{ before: BlockRow; after: BlockRow } | undefined> {
  const { rows } = await db.query<BlockRow>(`SELECT ${COLUMNS} FROM risk_blocks WHERE id = $1 AND removed_at IS NULL FOR UPDATE`, [id]);
  const before = rows[0];
  if (!before) return undefined;
  const updated = await db.query<BlockRow>(`UPDATE risk_blocks SET removed_by = $2, removed_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [id, removedBy]);
  return { before, after: updated.rows[0]! };
}

export interface BlockFilter {
  kind?: BlockKind;
  merchantId?: string;
  /** true: holding now; false: removed or expired; undefined: all. */
  active?: boolean;
  limit: number;
  offset: number;
}

/** Blocks, newest first, with the total that match. */
export async function listBlocks(db: Queryable, f: BlockFilter): Promise<{ rows: BlockRow[]; total: number }> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (f.kind) where.push(`kind = $${values.push(f.kind)}`);
  if (f.merchantId) where.push(`merchant_id = $${values.push(f.merchantId)}`);
  if (f.active === true) where.push(ACTIVE);
  if (f.active === false) where.push(`NOT (${ACTIVE})`);
  const condition = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const { rows } = await db.query<BlockRow & { total: string }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM risk_blocks ${condition}
     ORDER BY created_at DESC, id LIMIT $${values.push(f.limit)} OFFSET $${values.push(f.offset)}`,
    values,
  );
  if (rows.length === 0 && f.offset > 0) {
    const counted = await db.query<{ total: string }>(`SELECT count(*) AS total FROM risk_blocks ${condition}`, values.slice(0, -2));
    return { rows: [], total: Number(counted.rows[0]!.total) };
  }
  return { rows: rows.map(({ total: _, ...row }) => row), total: Number(rows[0]?.total ?? 0) };
}

/**
 * The first block that holds now for any of `hashes` of `kind`, for `merchantId` or every
 * merchant (null `merchantId`: only the blocks for every merchant).
 */
export async function findActiveBlock(db: Queryable, kind: BlockKind, hashes: readonly string[], merchantId: string | null): Promise<BlockRow | undefined> {
  const { rows } = await db.query<BlockRow>(
    `SELECT ${COLUMNS} FROM risk_blocks
     WHERE kind = $1 AND value_hash = ANY($2::text[]) AND (merchant_id IS NULL OR merchant_id = $3) AND ${ACTIVE}
     ORDER BY created_at LIMIT 1`,
    [kind, hashes, merchantId],
  );
  return rows[0];
}

export async function findBlock(db: Queryable, id: string): Promise<BlockRow | undefined> {
  const { rows } = await db.query<BlockRow>(`SELECT ${COLUMNS} FROM risk_blocks WHERE id = $1`, [id]);
  return rows[0];
}

/**
 * The blocks of `kind` that hold now, oldest first, at most `max`: more than that comes back as
 * undefined (too many to keep in memory; they are looked up one by one instead).
 */
export async function activeBlocksOf(db: Queryable, kind: BlockKind, max: number): Promise<BlockRow[] | undefined> {
  const { rows } = await db.query<BlockRow>(`SELECT ${COLUMNS} FROM risk_blocks WHERE kind = $1 AND ${ACTIVE} ORDER BY created_at LIMIT $2`, [kind, max + 1]);
  return rows.length > max ? undefined : rows;
}

/** The kinds of block that hold now somewhere: a check for a kind nobody blocks costs no statement. */
export async function activeBlockKinds(db: Queryable): Promise<BlockKind[]> {
  const { rows } = await db.query<{ kind: BlockKind }>(`SELECT DISTINCT kind FROM risk_blocks WHERE ${ACTIVE}`);
  return rows.map((row) => row.kind);
}

/** What a payment tells of its payer, for "block from a payment" (the page's IP and device, the merchant's client_id). */
export interface PayerMarks {
  merchant_id: string;
  client_id: string | null;
  payer_ip: string | null;
  payer_device: string | null;
}

/** The payer marks of a payment, or of the payment a dispute is on. */
export async function findPayerMarks(db: Queryable, ref: { paymentId?: string; disputeId?: string }): Promise<PayerMarks | undefined> {
  const { rows } = ref.paymentId
    ? await db.query<PayerMarks>('SELECT merchant_id, client_id, payer_ip, payer_device FROM payments WHERE id = $1', [ref.paymentId])
    : await db.query<PayerMarks>(
        'SELECT p.merchant_id, p.client_id, p.payer_ip, p.payer_device FROM disputes d JOIN payments p ON p.id = d.payment_id WHERE d.id = $1',
        [ref.disputeId],
      );
  return rows[0];
}

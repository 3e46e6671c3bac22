import type { Queryable } from '../db/pool.js';
import type { StoredFile } from './upload.js';

export interface ReceiptRow {
  id: string;
  merchant_id: string;
  payment_id: string;
  source: 'confirm' | 'receipt' | 'dispute' | 'page';
  storage_key: string | null;
  content_type: string | null;
  size_bytes: number | null;
  sha256: Buffer | null;
  url: string | null;
  created_at: Date;
}

const COLUMNS = 'id, merchant_id, payment_id, source, storage_key, content_type, size_bytes, sha256, url, created_at';

export async function insertReceipt(
  db: Queryable,
  r: { merchantId: string; paymentId: string; source: ReceiptRow['source']; file?: StoredFile; url?: string },
): Promise<ReceiptRow> {
  const { rows } = await db.query<ReceiptRow>(
    `INSERT INTO receipts (merchant_id, payment_id, source, storage_key, content_type, size_bytes, sha256, url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [r.merchantId, r.paymentId, r.source, r.file?.key ?? null, r.file?.contentType ?? null, r.file?.size ?? null, r.file?.sha256 ?? null, r.url ?? null],
  );
  return rows[0]!;
}

/** A merchant's receipt; another merchant's is not found. */
export async function findMerchantReceipt(db: Queryable, merchantId: string, id: string): Promise<ReceiptRow | undefined> {
  const { rows } = await db.query<ReceiptRow>(`SELECT ${COLUMNS} FROM receipts WHERE merchant_id = $1 AND id = $2`, [merchantId, id]);
  return rows[0];
}

export async function findReceipt(db: Queryable, id: string): Promise<ReceiptRow | undefined> {
  const { rows } = await db.query<ReceiptRow>(`SELECT ${COLUMNS} FROM receipts WHERE id = $1`, [id]);
  return rows[0];
}

export async function listPaymentReceipts(db: Queryable, paymentIds: string[]): Promise<ReceiptRow[]> {
  const { rows } = await db.query<ReceiptRow>(`SELECT ${COLUMNS} FROM receipts WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`, [paymentIds]);
  return rows;
}

export async function insertConfirmation(
  db: Queryable,
  c: { paymentId: string; merchantId: string; source: 'merchant' | 'page'; receiptId: string | null },
): Promise<void> {
  await db.query('INSERT INTO payment_confirmations (payment_id, merchant_id, source, receipt_id) VALUES ($1, $2, $3, $4)', [
    c.paymentId,
    c.merchantId,
    c.source,
    c.receiptId,
  ]);
}

export interface ConfirmationRow {
  payment_id: string;
  source: string;
  receipt_id: string | null;
  created_at: Date;
}

/** The confirm signals of the given payments, oldest first. */
export async function listPaymentConfirmations(db: Queryable, paymentIds: string[]): Promise<ConfirmationRow[]> {
  const { rows } = await db.query<ConfirmationRow>(
    'SELECT payment_id, source, receipt_id, created_at FROM payment_confirmations WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at',
    [paymentIds],
  );
  return rows;
}

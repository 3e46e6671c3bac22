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

/** An earlier use of a file (by its content hash) on a payment. */
export interface FileUse {
  payment_id: string;
  merchant_id: string;
  /** What the file was: a receipt's source (confirm, receipt, dispute, page) or `executor_file`. */
  source: string;
  created_at: Date;
}

/**
 * Holds the file hash for the rest of the transaction, so that two payments attaching one file at
 * the same moment are checked one after the other: the second sees the first's receipt (a plain
 * look-up would let both commit unseen by the other).
 */
export async function lockFileHash(tx: Queryable, sha256: Buffer): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7463))', [`file:${sha256.toString('hex')}`]);
}

/** The first receipt with this content on another payment than `paymentId`, any merchant's (receipts_sha256, migration 049). */
export async function firstReceiptWithFile(db: Queryable, sha256: Buffer, paymentId: string): Promise<FileUse | undefined> {
  const { rows } = await db.query<FileUse>(
    `SELECT payment_id, merchant_id, source, created_at FROM receipts
      WHERE sha256 = $1 AND payment_id <> $2 ORDER BY created_at, id LIMIT 1`,
    [sha256, paymentId],
  );
  return rows[0];
}

/**
 * The first executor's contest file with this content on another payment than `paymentId`
 * (disputes_executor_file_sha256, migration 049): the other place a file shown for a
 * payment is kept.
 */
export async function firstExecutorFileWith(db: Queryable, sha256: Buffer, paymentId: string): Promise<FileUse | undefined> {
  const { rows } = await db.query<FileUse>(
    `SELECT payment_id, merchant_id, 'executor_file' AS source, answered_at AS created_at FROM disputes
      WHERE executor_file_sha256 = $1 AND payment_id <> $2 ORDER BY answered_at, id LIMIT 1`,
    [sha256, paymentId],
  );
  return rows[0];
}

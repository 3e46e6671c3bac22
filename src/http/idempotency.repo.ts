import type { Queryable } from '../db/pool.js';

/** A key's claim: this attempt's, and the request the key stands for. */
export interface KeyClaim {
  claim: string;
  request_id: string;
}

/** What is stored for a key another attempt holds or has answered. */
export interface StoredKey {
  request_hash: Buffer;
  status_code: number | null;
  response_body: string | null;
  /** Whole seconds until the claim's lease ends (at least 1). */
  lease_left: number;
}

/**
 * Claims the key: a new one; one whose stored answer is older than `keepHours` (a new request: a
 * new request id); or an abandoned claim — no answer for `leaseSeconds` — of this same request
 * (the same request id). Undefined when another attempt holds it or its answer stands.
 */
export async function claimKey(
  db: Queryable,
  key: { merchantId: string; key: string; requestHash: Buffer },
  keepHours: number,
  leaseSeconds: number,
): Promise<KeyClaim | undefined> {
  const { rows } = await db.query<KeyClaim>(
    `INSERT INTO idempotency_keys (merchant_id, key, request_hash) VALUES ($1, $2, $3)
     ON CONFLICT (merchant_id, key) DO UPDATE
       SET request_id = CASE WHEN idempotency_keys.created_at < now() - make_interval(hours => $4)
                             THEN EXCLUDED.request_id ELSE idempotency_keys.request_id END,
           request_hash = EXCLUDED.request_hash, status_code = NULL, response_body = NULL,
           claim = EXCLUDED.claim, created_at = now()
       WHERE idempotency_keys.created_at < now() - make_interval(hours => $4)
          OR (idempotency_keys.status_code IS NULL AND idempotency_keys.request_hash = EXCLUDED.request_hash
              AND idempotency_keys.created_at < now() - make_interval(secs => $5))
     RETURNING claim, request_id`,
    [key.merchantId, key.key, key.requestHash, keepHours, leaseSeconds],
  );
  return rows[0];
}

export async function findStoredKey(db: Queryable, merchantId: string, key: string, leaseSeconds: number): Promise<StoredKey | undefined> {
  const { rows } = await db.query<StoredKey>(
    `SELECT request_hash, status_code, response_body,
            ceil(greatest(1, extract(epoch FROM created_at + make_interval(secs => $3) - now())))::int AS lease_left
       FROM idempotency_keys WHERE merchant_id = $1 AND key = $2`,
    [merchantId, key, leaseSeconds],
  );
  return rows[0];
}

/** Frees a key this claim holds, so that the request can be retried with it. */
export async function releaseKey(db: Queryable, merchantId: string, key: string, claim: string): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE merchant_id = $1 AND key = $2 AND claim = $3', [merchantId, key, claim]);
}

/** Stores the answer of the attempt holding this claim; it is replayed for the key from now on. */
export async function storeAnswer(db: Queryable, merchantId: string, key: string, claim: string, statusCode: number, body: string): Promise<void> {
  await db.query('UPDATE idempotency_keys SET status_code = $4, response_body = $5 WHERE merchant_id = $1 AND key = $2 AND claim = $3', [
    merchantId,
    key,
    claim,
    statusCode,
    body,
  ]);
}

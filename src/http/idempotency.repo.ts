import type { Queryable } from '../db/pool.js';

/**
 * Where a kind of caller's keys are kept, and the column naming whose they are: a merchant's
 * (the merchant API) or an operator-side caller's (`token`, or `user:<id>` for a person).
 */
export interface KeyStore {
  table: 'idempotency_keys' | 'operator_idempotency_keys';
  owner: 'merchant_id' | 'owner';
}
export const MERCHANT_KEYS: KeyStore = { table: 'idempotency_keys', owner: 'merchant_id' };
export const OPERATOR_KEYS: KeyStore = { table: 'operator_idempotency_keys', owner: 'owner' };

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
  store: KeyStore,
  key: { ownerId: string; key: string; requestHash: Buffer },
  keepHours: number,
  leaseSeconds: number,
): Promise<KeyClaim | undefined> {
  const { table, owner } = store;
  const { rows } = await db.query<KeyClaim>(
    `INSERT INTO ${table} (${owner}, key, request_hash) VALUES ($1, $2, $3)
     ON CONFLICT (${owner}, key) DO UPDATE
       SET request_id = CASE WHEN ${table}.created_at < now() - make_interval(hours => $4)
                             THEN EXCLUDED.request_id ELSE ${table}.request_id END,
           request_hash = EXCLUDED.request_hash, status_code = NULL, response_body = NULL,
           claim = EXCLUDED.claim, created_at = now()
       WHERE ${table}.created_at < now() - make_interval(hours => $4)
          OR (${table}.status_code IS NULL AND ${table}.request_hash = EXCLUDED.request_hash
              AND ${table}.created_at < now() - make_interval(secs => $5))
     RETURNING claim, request_id`,
    [key.ownerId, key.key, key.requestHash, keepHours, leaseSeconds],
  );
  return rows[0];
}

export async function findStoredKey(db: Queryable, store: KeyStore, ownerId: string, key: string, leaseSeconds: number): Promise<StoredKey | undefined> {
  const { rows } = await db.query<StoredKey>(
    `SELECT request_hash, status_code, response_body,
            ceil(greatest(1, extract(epoch FROM created_at + make_interval(secs => $3) - now())))::int AS lease_left
       FROM ${store.table} WHERE ${store.owner} = $1 AND key = $2`,
    [ownerId, key, leaseSeconds],
  );
  return rows[0];
}

/** Frees a key this claim holds, so that the request can be retried with it. */
export async function releaseKey(db: Queryable, store: KeyStore, ownerId: string, key: string, claim: string): Promise<void> {
  await db.query(`DELETE FROM ${store.table} WHERE ${store.owner} = $1 AND key = $2 AND claim = $3`, [ownerId, key, claim]);
}

/** Stores the answer of the attempt holding this claim; it is replayed for the key from now on. */
export async function storeAnswer(
  db: Queryable,
  store: KeyStore,
  ownerId: string,
  key: string,
  claim: string,
  statusCode: number,
  body: string,
): Promise<void> {
  await db.query(`UPDATE ${store.table} SET status_code = $4, response_body = $5 WHERE ${store.owner} = $1 AND key = $2 AND claim = $3`, [
    ownerId,
    key,
    claim,
    statusCode,
    body,
  ]);
}

import type { Queryable } from '../db/pool.js';

export interface MerchantRow {
  id: string;
  name: string;
  created_at: Date;
}

export async function insertMerchant(db: Queryable, name: string): Promise<MerchantRow> {
  const { rows } = await db.query<MerchantRow>('INSERT INTO merchants (name) VALUES ($1) RETURNING id, name, created_at', [name]);
  return rows[0]!;
}

export async function findMerchant(db: Queryable, id: string): Promise<MerchantRow | undefined> {
  const { rows } = await db.query<MerchantRow>('SELECT id, name, created_at FROM merchants WHERE id = $1', [id]);
  return rows[0];
}

export async function listMerchants(db: Queryable): Promise<(MerchantRow & { terminals: number })[]> {
  const { rows } = await db.query<MerchantRow & { terminals: number }>(
    `SELECT m.id, m.name, m.created_at, (SELECT count(*) FROM terminals t WHERE t.merchant_id = m.id) AS terminals
       FROM merchants m ORDER BY m.created_at`,
  );
  return rows;
}

export async function insertSecret(db: Queryable, merchantId: string, sealed: string): Promise<void> {
  await db.query('INSERT INTO merchant_secrets (merchant_id, secret_enc) VALUES ($1, $2)', [merchantId, sealed]);
}

/** Ends the validity of a merchant's current secrets after `graceSeconds` (0: at once). */
export async function expireSecrets(db: Queryable, merchantId: string, graceSeconds: number): Promise<Date> {
  const { rows } = await db.query<{ until: Date }>(
    `UPDATE merchant_secrets SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2))
      WHERE merchant_id = $1 AND (expires_at IS NULL OR expires_at > now())
      RETURNING expires_at AS until`,
    [merchantId, graceSeconds],
  );
  return rows[0]?.until ?? new Date();
}

import { prepared, type Queryable } from '../db/pool.js';
import { type RouteJson, terminalRoutesSql } from '../providers/providers.repo.js';
import { effectiveRatesSql, type RateQuoteRow } from '../rates/rates.repo.js';

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

/** An API key's terminal, its merchant's sealed secrets, and the terminal's rates and routes. */
export interface IdentityRow {
  merchant_id: string;
  terminal_id: string;
  terminal_name: string;
  terminal_notify_url: string | null;
  currency: string;
  is_active: boolean;
  is_test: boolean;
  payin_rate: string;
  secrets: string[];
  /** When the key or one of the secrets expires (null: never); the identity is not kept past it. */
  valid_until: Date | null;
  rates: RateQuoteRow[];
  routes: RouteJson[];
}

/**
 * One statement for everything a signed request may need of its caller: the key's terminal, the
 * merchant's currently valid secrets, and the terminal's rates (effectiveRatesSql) and routes
 * (terminalRoutesSql) as JSON — a payment create needs no second round trip.
 */
const IDENTITY_SQL = `SELECT i.*,
            (SELECT coalesce(json_agg(x), '[]') FROM (${effectiveRatesSql('i.terminal_id', null)}) x) AS rates,
            (SELECT coalesce(json_agg(y ORDER BY y.position), '[]') FROM (${terminalRoutesSql('i.terminal_id')}) y) AS routes
       FROM (SELECT k.merchant_id, k.terminal_id, t.name AS terminal_name, t.notify_url AS terminal_notify_url, t.currency, t.is_active, t.is_test, t.payin_rate,
                    ARRAY(SELECT s.secret_enc FROM merchant_secrets s
                           WHERE s.merchant_id = k.merchant_id AND (s.expires_at IS NULL OR s.expires_at > now())) AS secrets,
                    least(k.expires_at, (SELECT min(s.expires_at) FROM merchant_secrets s
                                          WHERE s.merchant_id = k.merchant_id AND s.expires_at > now())) AS valid_until
               FROM terminal_api_keys k JOIN terminals t ON t.id = k.terminal_id
              WHERE k.key_hash = $1 AND (k.expires_at IS NULL OR k.expires_at > now())) i`;

/** The identity of the API key whose SHA-256 is `keyHash`, unless the key is unknown or expired. */
export async function findIdentityRow(db: Queryable, keyHash: Buffer): Promise<IdentityRow | undefined> {
  const { rows } = await db.query<IdentityRow>(prepared(IDENTITY_SQL, [keyHash]));
  return rows[0];
}

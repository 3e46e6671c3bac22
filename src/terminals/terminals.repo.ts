import type { Queryable } from '../db/pool.js';

export interface TerminalRow {
  id: string;
  merchant_id: string;
  name: string;
  currency: string;
  payin_rate: string;
  payout_rate: string;
  withdrawal_fee: string;
  is_active: boolean;
  /** A test terminal (migration 039): its payments and payouts touch no executor and no money. */
  is_test: boolean;
  created_at: Date;
  balance: string;
  balance_frozen: string;
  return_url: string | null;
  /** Where the terminal's payments and payouts created without a notify_url of their own send their webhooks. */
  notify_url: string | null;
  /** Where the payment page sends a payer whose payment did not go through (expired, cancelled). */
  fail_url: string | null;
  /** What a dispute its executor did not answer in time comes to (migration 044). */
  dispute_timeout: 'escalate' | 'approve';
  /** The executor's answer window for this terminal's disputes, by day and at night; null: DISPUTE_ANSWER_SECONDS. */
  dispute_answer_seconds: number | null;
  dispute_night_answer_seconds: number | null;
}

// Balances come from the terminal's ledger accounts, never from a copy on the terminal row.
const SELECT = `
  SELECT t.id, t.merchant_id, t.name, t.currency, t.payin_rate, t.payout_rate, t.withdrawal_fee, t.is_active, t.is_test, t.created_at, t.return_url, t.notify_url, t.fail_url,
         t.dispute_timeout, t.dispute_answer_seconds, t.dispute_night_answer_seconds,
         coalesce((SELECT balance FROM ledger_accounts a WHERE a.terminal_id = t.id AND a.kind = 'terminal_available'), 0)::text AS balance,
         coalesce((SELECT balance FROM ledger_accounts a WHERE a.terminal_id = t.id AND a.kind = 'terminal_frozen'), 0)::text AS balance_frozen
    FROM terminals t`;

export async function insertTerminal(
  db: Queryable,
  t: { merchantId: string; name: string; currency: string; payinRate: string; payoutRate: string; withdrawalFee: string; isTest: boolean },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO terminals (merchant_id, name, currency, payin_rate, payout_rate, withdrawal_fee, is_test)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [t.merchantId, t.name, t.currency, t.payinRate, t.payoutRate, t.withdrawalFee, t.isTest],
  );
  return rows[0]!.id;
}

/** A terminal by id; `lock` takes its row (the lock its update takes) for a change in the same transaction. */
export async function findTerminal(db: Queryable, id: string, lock = false): Promise<TerminalRow | undefined> {
  const { rows } = await db.query<TerminalRow>(`${SELECT} WHERE t.id = $1${lock ? ' FOR NO KEY UPDATE OF t' : ''}`, [id]);
  return rows[0];
}

/** A merchant's terminal: another merchant's terminal is not found (DESIGN.md decision 1). */
export async function findMerchantTerminal(db: Queryable, merchantId: string, id: string): Promise<TerminalRow | undefined> {
  const { rows } = await db.query<TerminalRow>(`${SELECT} WHERE t.merchant_id = $1 AND t.id = $2`, [merchantId, id]);
  return rows[0];
}

export async function listMerchantTerminals(db: Queryable, merchantId: string): Promise<TerminalRow[]> {
  const { rows } = await db.query<TerminalRow>(`${SELECT} WHERE t.merchant_id = $1 ORDER BY t.created_at, t.id`, [merchantId]);
  return rows;
}

export async function updateTerminal(
  db: Queryable,
  id: string,
  patch: {
    name?: string;
    isActive?: boolean;
    payinRate?: string;
    payoutRate?: string;
    withdrawalFee?: string;
    returnUrl?: string | null;
    notifyUrl?: string | null;
    failUrl?: string | null;
    disputeTimeout?: 'escalate' | 'approve';
    disputeAnswerSeconds?: number | null;
    disputeNightAnswerSeconds?: number | null;
  },
): Promise<void> {
  // The URLs may be cleared (null), so "not given" is told apart from null by a flag each ($7, $9, $11).
  await db.query(
    `UPDATE terminals SET name = coalesce($2, name), is_active = coalesce($3, is_active), payin_rate = coalesce($4, payin_rate),
            payout_rate = coalesce($5, payout_rate), withdrawal_fee = coalesce($6, withdrawal_fee),
            return_url = CASE WHEN $7::boolean THEN $8 ELSE return_url END,
            notify_url = CASE WHEN $9::boolean THEN $10 ELSE notify_url END,
            fail_url = CASE WHEN $11::boolean THEN $12 ELSE fail_url END, dispute_timeout = coalesce($13, dispute_timeout),
            dispute_answer_seconds = CASE WHEN $14::boolean THEN $15::integer ELSE dispute_answer_seconds END,
            dispute_night_answer_seconds = CASE WHEN $16::boolean THEN $17::integer ELSE dispute_night_answer_seconds END,
            updated_at = now()
      WHERE id = $1`,
    [
      id,
      patch.name ?? null,
      patch.isActive ?? null,
      patch.payinRate ?? null,
      patch.payoutRate ?? null,
      patch.withdrawalFee ?? null,
      patch.returnUrl !== undefined,
      patch.returnUrl ?? null,
      patch.notifyUrl !== undefined,
      patch.notifyUrl ?? null,
      patch.failUrl !== undefined,
      patch.failUrl ?? null,
      patch.disputeTimeout ?? null,
      patch.disputeAnswerSeconds !== undefined,
      patch.disputeAnswerSeconds ?? null,
      patch.disputeNightAnswerSeconds !== undefined,
      patch.disputeNightAnswerSeconds ?? null,
    ],
  );
}

export async function insertApiKey(db: Queryable, terminalId: string, merchantId: string, keyHash: Buffer, prefix: string): Promise<void> {
  await db.query('INSERT INTO terminal_api_keys (terminal_id, merchant_id, key_hash, key_prefix) VALUES ($1, $2, $3, $4)', [
    terminalId,
    merchantId,
    keyHash,
    prefix,
  ]);
}

export async function expireApiKeys(db: Queryable, terminalId: string, graceSeconds: number): Promise<Date> {
  const { rows } = await db.query<{ until: Date }>(
    `UPDATE terminal_api_keys SET expires_at = least(coalesce(expires_at, 'infinity'), now() + make_interval(secs => $2))
      WHERE terminal_id = $1 AND (expires_at IS NULL OR expires_at > now())
      RETURNING expires_at AS until`,
    [terminalId, graceSeconds],
  );
  return rows[0]?.until ?? new Date();
}

import { prepared, type Queryable, type Tx } from '../db/pool.js';

export interface PaymentRow {
  id: string;
  merchant_id: string;
  terminal_id: string;
  terminal_name: string;
  ext_id: string;
  amount: string;
  currency: string;
  method: string;
  status: string;
  rate: string;
  payin_rate: string;
  requisite_id: string | null;
  req_type: string;
  req_value: string;
  req_bank_code: string | null;
  req_bank_name: string | null;
  req_holder: string;
  req_country: string;
  req_currency: string;
  payer_amount: string;
  cross_border: boolean;
  client_id: string | null;
  notify_url: string | null;
  notification_token: string | null;
  page_token: string;
  valid_until: Date;
  cancel_reason: string | null;
  provider_id: string | null;
  provider_payment_id: string | null;
  provider_token: string | null;
  completed_at: Date | null;
  received_amount: string | null;
  verify_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const SELECT = `
  SELECT p.*, t.name AS terminal_name, b.name AS req_bank_name
    FROM payments p
    JOIN terminals t ON t.id = p.terminal_id
    LEFT JOIN banks b ON b.code = p.req_bank_code`;

/** A merchant's payment by id; another merchant's payment is not found (DESIGN.md decision 1). */
export async function findMerchantPayment(db: Queryable, merchantId: string, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(`${SELECT} WHERE p.merchant_id = $1 AND p.id = $2`, [merchantId, id]);
  return rows[0];
}

export async function findMerchantPaymentByExtId(db: Queryable, merchantId: string, extId: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(`${SELECT} WHERE p.merchant_id = $1 AND p.ext_id = $2`, [merchantId, extId]);
  return rows[0];
}

/**
 * Locks a payment for a status-dependent action and returns its current state: a merchant's own
 * payment (`merchantId`), or any payment for the operator (`merchantId` null).
 */
export async function lockPayment(tx: Tx, merchantId: string | null, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<PaymentRow>(
    `SELECT p.*, t.name AS terminal_name, b.name AS req_bank_name
       FROM payments p JOIN terminals t ON t.id = p.terminal_id LEFT JOIN banks b ON b.code = p.req_bank_code
      WHERE p.id = $1 AND ($2::uuid IS NULL OR p.merchant_id = $2)
        FOR UPDATE OF p`,
    [id, merchantId],
  );
  return rows[0];
}

/** A provider-executed payment by the provider's id for it, locked. */
export async function lockProviderPayment(tx: Tx, providerId: string, providerPaymentId: string): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<PaymentRow>(
    `SELECT p.*, t.name AS terminal_name, b.name AS req_bank_name
       FROM payments p JOIN terminals t ON t.id = p.terminal_id LEFT JOIN banks b ON b.code = p.req_bank_code
      WHERE p.provider_id = $1 AND p.provider_payment_id = $2
        FOR UPDATE OF p`,
    [providerId, providerPaymentId],
  );
  return rows[0];
}

/** Operator and job paths only: no owner scope. */
export async function findPayment(db: Queryable, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(`${SELECT} WHERE p.id = $1`, [id]);
  return rows[0];
}

/** Several payments by id (jobs and the outbox); `withNotifyUrl` keeps those that have a webhook URL. */
export async function findPayments(db: Queryable, ids: string[], options: { withNotifyUrl?: boolean } = {}): Promise<PaymentRow[]> {
  const { rows } = await db.query<PaymentRow>(
    `${SELECT} WHERE p.id = ANY($1::uuid[]) ${options.withNotifyUrl ? 'AND p.notify_url IS NOT NULL' : ''} ORDER BY p.created_at`,
    [ids],
  );
  return rows;
}

export interface PaymentFilter {
  merchantId?: string;
  terminalId?: string;
  status?: string;
  limit: number;
  offset: number;
}

export async function listPayments(db: Queryable, f: PaymentFilter): Promise<{ rows: PaymentRow[]; total: number }> {
  const where = `WHERE ($1::uuid IS NULL OR p.merchant_id = $1) AND ($2::uuid IS NULL OR p.terminal_id = $2) AND ($3::text IS NULL OR p.status = $3)`;
  const params = [f.merchantId ?? null, f.terminalId ?? null, f.status ?? null];
  const [{ rows }, count] = await Promise.all([
    db.query<PaymentRow>(`${SELECT} ${where} ORDER BY p.created_at DESC, p.id LIMIT $4 OFFSET $5`, [...params, f.limit, f.offset]),
    db.query<{ n: number }>(`SELECT count(*) AS n FROM payments p ${where}`, params),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/**
 * Serialises creates of one terminal and one amount for the rest of the transaction, so that the
 * same-amount limit (PAY_005) is exact under concurrency, and reports what the limit and the
 * ext_id rule need to know. The lock is taken in its own statement: the next statement's snapshot
 * then sees every payment committed by earlier holders.
 */
export async function lockTerminalAmount(tx: Tx, terminalId: string, amount: string): Promise<void> {
  await tx.query(prepared('SELECT pg_advisory_xact_lock(hashtextextended($1, 7461))', [`${terminalId}:${amount}`]));
}

export async function creationFacts(
  tx: Tx,
  merchantId: string,
  terminalId: string,
  extId: string,
  amount: string,
  currency: string,
): Promise<{ same_amount: number; ext_id_taken: boolean }> {
  const { rows } = await tx.query<{ same_amount: number; ext_id_taken: boolean }>(prepared(
    `SELECT (SELECT count(*) FROM payments
              WHERE terminal_id = $2 AND status = 'PENDING' AND amount = $4 AND currency = $5) AS same_amount,
            EXISTS (SELECT 1 FROM payments WHERE merchant_id = $1 AND ext_id = $3) AS ext_id_taken`,
    [merchantId, terminalId, extId, amount, currency],
  ));
  return rows[0]!;
}

/** One place a payment may go: requisites of `currency` (in `country`) and what the payer pays there. */
export interface Candidate {
  currency: string;
  country: string;
  payerAmount: string;
}

export interface NewPayment {
  merchantId: string;
  terminalId: string;
  extId: string;
  amount: string;
  currency: string;
  method: string;
  rate: string;
  payinRate: string;
  crossBorder: boolean;
  clientId: string | null;
  notifyUrl: string | null;
  notificationToken: string | null;
  pageToken: string;
  ttlSeconds: number;
  /** Requisite types that serve the method. */
  types: string[];
  bank: string | null;
  candidates: Candidate[];
}

/**
 * The cascade (DESIGN.md; issue "The cascade"): picks the least recently used active requisite of
 * an active executor that serves the method with a fitting type, currency, country, bank and
 * min/max for the amount the payer would pay there, and that has no PENDING payment of that
 * amount; marks it used and inserts the payment, in one statement.
 *
 * `skipLocked` spreads concurrent creates over the pool: a requisite another create is holding is
 * passed over. When everything fitting is held, the caller retries with `skipLocked` false and
 * waits for the holder instead of answering "no requisites". Two creates that still end up with
 * one requisite and one amount are stopped by the unique index payments_pending_requisite_amount.
 */
export async function insertPaymentWithCascade(tx: Tx, p: NewPayment, skipLocked: boolean): Promise<PaymentRow | undefined> {
  // One candidate of one type (every domestic payment): plain equalities let PostgreSQL walk
  // requisites_pool (currency, type, last_used_at, id; migration 008) in LRU order and stop at the
  // first requisite that fits. Joined to the candidate list, it filters and sorts the whole pool
  // on every create (issue 4 benchmark: 10–50 ms of database CPU per create at 1,000 requisites).
  // The statement is prepared: currency, country and type, which choose the index range, are
  // literals (from closed lists, so a handful of statements), not parameters. A generic plan that
  // does not know them sorts the whole pool again (seen after ANALYZE with 10^6 payments).
  const single = p.candidates.length === 1;
  const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;
  const cand = single
    ? { currency: literal(p.candidates[0]!.currency), country: literal(p.candidates[0]!.country), amount: '($3::numeric[])[1]' }
    : { currency: 'c.currency', country: 'c.country', amount: 'c.payer_amount' };
  const { rows } = await tx.query<PaymentRow>(prepared(
    `WITH candidate AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::numeric[]) AS c(currency, country, payer_amount)
     ), pick AS (
       SELECT r.id, ${cand.amount} AS payer_amount
         FROM requisites r
         ${single ? '' : 'CROSS JOIN candidate c'}
         JOIN executors e ON e.id = r.executor_id AND e.is_active
        WHERE r.is_active
          AND r.currency = ${cand.currency} AND r.country = ${cand.country}
          AND r.type = ANY($4::text[]) ${single && p.types.length === 1 ? `AND r.type = ${literal(p.types[0]!)}` : ''}
          AND $5::text = ANY(r.methods)
          AND ($6::text IS NULL OR r.bank_code = $6)
          AND ${cand.amount} >= r.min_amount
          AND (r.max_amount IS NULL OR ${cand.amount} <= r.max_amount)
          AND NOT EXISTS (SELECT 1 FROM payments q
                           WHERE q.requisite_id = r.id AND q.status = 'PENDING' AND q.payer_amount = ${cand.amount})
        ORDER BY r.last_used_at NULLS FIRST, r.id
        LIMIT 1
        FOR UPDATE OF r ${skipLocked ? 'SKIP LOCKED' : ''}
     ), used AS (
       UPDATE requisites r SET last_used_at = clock_timestamp()
         FROM pick WHERE r.id = pick.id
       RETURNING r.*, pick.payer_amount
     ), inserted AS (
       INSERT INTO payments (merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                             requisite_id, req_type, req_value, req_bank_code, req_holder, req_country, req_currency,
                             payer_amount, cross_border, client_id, notify_url, notification_token, page_token, valid_until)
       SELECT $7, $8, $9, $10, $11, $5, 'PENDING', $12, $13,
              u.id, u.type, u.value, u.bank_code, u.holder, u.country, u.currency,
              u.payer_amount, $14, $15, $16, $17, $18, now() + make_interval(secs => $19)
         FROM used u
       RETURNING *
     )
     SELECT i.*, t.name AS terminal_name, b.name AS req_bank_name
       FROM inserted i JOIN terminals t ON t.id = i.terminal_id LEFT JOIN banks b ON b.code = i.req_bank_code`,
    [
      p.candidates.map((c) => c.currency),
      p.candidates.map((c) => c.country),
      p.candidates.map((c) => c.payerAmount),
      p.types,
      p.method,
      p.bank,
      p.merchantId,
      p.terminalId,
      p.extId,
      p.amount,
      p.currency,
      p.rate,
      p.payinRate,
      p.crossBorder,
      p.clientId,
      p.notifyUrl,
      p.notificationToken,
      p.pageToken,
      p.ttlSeconds,
    ],
  ));
  return rows[0];
}

import { PgCode, pgConstraint, pgErrorCode, prepared, type Queryable, type Tx } from '../db/pool.js';
import { DomainError } from '../errors.js';
import type { NewPayment } from './cascade/cascade.js';

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
  /** The executor whose requisite was handed out; null for a provider-executed payment. */
  executor_id: string | null;
  /** The USDT the hand-out froze on the executor (amount / rate); null for a provider-executed payment. */
  hold: string | null;
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
  /** What the payment page saw of its payer the first time it was opened (migration 047); null until then. */
  payer_ip: string | null;
  payer_device: string | null;
  /** The payer's class with the merchant when the payment was created (migration 048); null before classes, and for test and provider payments. */
  payer_class: 'new' | 'returning' | 'trusted' | null;
  notify_url: string | null;
  notification_token: string | null;
  page_token: string;
  valid_until: Date;
  cancel_reason: string | null;
  /** The words of the person who cancelled it or rejected its dispute (migration 037). */
  cancel_note: string | null;
  /** The rate refresh that gave `rate` (GET /admin/v1/rate-refreshes/{id}); null before rates had refreshes. */
  rate_refresh_id: number | null;
  provider_id: string | null;
  provider_payment_id: string | null;
  provider_token: string | null;
  completed_at: Date | null;
  received_amount: string | null;
  verify_until: Date | null;
  /** A test terminal's payment (migration 039): test requisites, no executor, no hold, no posting. */
  is_test: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The columns of a payment the merchant API shows (toPayment), besides terminal_name and req_bank_name. */
export const PAYMENT_VIEW_COLUMNS = [
  'id',
  'ext_id',
  'terminal_id',
  'amount',
  'currency',
  'method',
  'status',
  'rate',
  'payin_rate',
  'req_type',
  'req_value',
  'req_bank_code',
  'req_holder',
  'req_country',
  'req_currency',
  'payer_amount',
  'cross_border',
  'page_token',
  'valid_until',
  'received_amount',
  'created_at',
] as const satisfies readonly (keyof PaymentRow)[];

/** What the merchant API shows of a payment: a create reads no more than this. */
export type PaymentView = Pick<PaymentRow, (typeof PAYMENT_VIEW_COLUMNS)[number] | 'terminal_name' | 'req_bank_name'>;

/**
 * Every column of payments, named: a named (prepared) statement selecting `p.*` fails on every
 * connection it was prepared on once a column is added under a running instance ("cached plan
 * must not change result type"), one naming its columns is simply planned again.
 */
const PAYMENT_COLUMNS = [
  ...PAYMENT_VIEW_COLUMNS,
  'merchant_id',
  'requisite_id',
  'executor_id',
  'hold',
  'client_id',
  'payer_class',
  'notify_url',
  'notification_token',
  'cancel_reason',
  'cancel_note',
  'rate_refresh_id',
  'provider_id',
  'provider_payment_id',
  'provider_token',
  'completed_at',
  'verify_until',
  'is_test',
  'updated_at',
  'payer_ip',
  'payer_device',
] as const satisfies readonly (keyof PaymentRow)[];

// Compile-time check that PAYMENT_COLUMNS leaves out no column of PaymentRow.
type Unlisted = Exclude<keyof PaymentRow, (typeof PAYMENT_COLUMNS)[number] | 'terminal_name' | 'req_bank_name'>;
const everyColumnListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyColumnListed;

const PAYMENT_FROM = `
  SELECT ${PAYMENT_COLUMNS.map((c) => `p.${c}`).join(', ')}, t.name AS terminal_name, b.name AS req_bank_name
    FROM payments p
    JOIN terminals t ON t.id = p.terminal_id
    LEFT JOIN banks b ON b.code = p.req_bank_code`;

/** A merchant's payment by id; another merchant's payment is not found (DESIGN.md decision 1). */
export async function findMerchantPayment(db: Queryable, merchantId: string, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(prepared(`${PAYMENT_FROM} WHERE p.merchant_id = $1 AND p.id = $2`, [merchantId, id]));
  return rows[0];
}

export async function findMerchantPaymentByExtId(db: Queryable, merchantId: string, extId: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(prepared(`${PAYMENT_FROM} WHERE p.merchant_id = $1 AND p.ext_id = $2`, [merchantId, extId]));
  return rows[0];
}

/**
 * Locks a payment for a status-dependent action and returns its current state: a merchant's own
 * payment (`merchantId`), or any payment for the operator (`merchantId` null).
 */
export async function lockPayment(tx: Tx, merchantId: string | null, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<PaymentRow>(
    prepared(`${PAYMENT_FROM} WHERE p.id = $1 AND ($2::uuid IS NULL OR p.merchant_id = $2) FOR UPDATE OF p`, [id, merchantId]),
  );
  return rows[0];
}

/** A provider-executed payment by the provider's id for it, locked. */
export async function lockProviderPayment(tx: Tx, providerId: string, providerPaymentId: string): Promise<PaymentRow | undefined> {
  const { rows } = await tx.query<PaymentRow>(`${PAYMENT_FROM} WHERE p.provider_id = $1 AND p.provider_payment_id = $2 FOR UPDATE OF p`, [
    providerId,
    providerPaymentId,
  ]);
  return rows[0];
}

/** Operator and job paths only: no owner scope. */
export async function findPayment(db: Queryable, id: string): Promise<PaymentRow | undefined> {
  const { rows } = await db.query<PaymentRow>(prepared(`${PAYMENT_FROM} WHERE p.id = $1`, [id]));
  return rows[0];
}

/** Several payments by id (jobs and the outbox); `withNotifyUrl` keeps those that have a webhook URL. */
export async function findPayments(db: Queryable, ids: string[], options: { withNotifyUrl?: boolean } = {}): Promise<PaymentRow[]> {
  const notifyUrl = options.withNotifyUrl ? 'AND p.notify_url IS NOT NULL' : '';
  // One id (a status change of one payment, the common case) by equality: for `= ANY($1)` the
  // planner estimates a custom plan cheaper than the generic one and plans it on every call.
  const { rows } = await db.query<PaymentRow>(
    ids.length === 1
      ? prepared(`${PAYMENT_FROM} WHERE p.id = $1 ${notifyUrl}`, [ids[0]])
      : prepared(`${PAYMENT_FROM} WHERE p.id = ANY($1::uuid[]) ${notifyUrl} ORDER BY p.created_at`, [ids]),
  );
  return rows;
}

/** What the operator's payment list is narrowed by: every field given must hold. */
export interface PaymentFilter {
  merchantId?: string;
  terminalId?: string;
  executorId?: string;
  status?: string;
  method?: string;
  /** created_at at or after this instant. */
  from?: Date;
  /** created_at at or before this instant, to its millisecond (the API shows milliseconds). */
  to?: Date;
  /** The search box, read every way it can be: a payment matching any reading is kept. */
  search?: PaymentSearchTerms;
  limit: number;
  offset: number;
}

/** The readings of one search text; each is matched exactly. */
export interface PaymentSearchTerms {
  /** The payment's id. */
  id?: string;
  /** A merchant's ext_id or a client_id. */
  reference?: string;
  /** The order amount, a decimal string. */
  amount?: string;
  /** The last digits (4 or more) of the requisite value handed out. */
  digits?: string;
}

/**
 * The last 4 digits of a payment's requisite value, spelled exactly as the index
 * payments_requisite_tail_created (migration 056; payments_requisite_tail of migration 030 before
 * it) is, so that the planner uses it.
 */
const REQUISITE_TAIL = `right(regexp_replace(x.req_value, '\\D', '', 'g'), 4)`;

/**
 * The month of a payment's creation in UTC, spelled exactly as the index payments_month_amount
 * (migration 064) is, so that the planner uses it; `at` is a timestamptz expression.
 */
const utcMonth = (at: string): string => `date_trunc('month', ${at} AT TIME ZONE 'UTC')`;

/**
 * The payments matching any reading of the search text, one indexed look-up per reading (an OR
 * over the columns would scan the table): the id itself; ext_id through each merchant's
 * (merchant_id, ext_id) index, merchants being few; client_id and the requisite's last digits
 * through the indexes of migrations 057 and 056; the amount through payments_month_amount
 * (migration 064: the UTC month, then the amount, so that a create's entry lands in the current
 * month's part of it, not on a random leaf), one probe per month from the oldest payment's (or
 * `range.from`'s) to the newest's (or `range.to`'s) — the months only narrow the probes, the
 * caller still applies from and to. `columns` is what each yields: `x.id`, or `x.id, x.created_at`
 * (the requisite's digits then from payments_requisite_tail_created alone, which holds both, and
 * the value the longer digit strings are checked on). `range` holds placeholders already bound
 * to the from and to instants (to exclusive).
 */
function searchMatches(
  terms: PaymentSearchTerms,
  bind: (value: unknown) => string,
  columns: 'x.id' | 'x.id, x.created_at',
  range: { from?: string; to?: string } = {},
): string {
  const parts: string[] = [];
  if (terms.id !== undefined) parts.push(`SELECT ${columns} FROM payments x WHERE x.id = ${bind(terms.id)}::uuid`);
  if (terms.reference !== undefined) {
    const reference = bind(terms.reference);
    parts.push(`SELECT ${columns} FROM merchants m JOIN payments x ON x.merchant_id = m.id AND x.ext_id = ${reference}`);
    parts.push(`SELECT ${columns} FROM payments x WHERE x.client_id = ${reference}`);
  }
  if (terms.amount !== undefined) {
    // min and max from payments_created's two ends; an empty table gives no month at all.
    const first = `(SELECT min(created_at) FROM payments)`;
    const last = `(SELECT max(created_at) FROM payments)`;
    const from = range.from === undefined ? first : `greatest(${range.from}::timestamptz, ${first})`;
    const to = range.to === undefined ? last : `least(${range.to}::timestamptz, ${last})`;
    // A lateral subquery kept apart (OFFSET 0): one index descent per month, whatever the
    // planner guesses of the series' length (1000 rows on PostgreSQL 15, which made it read the
    // whole index for the amount instead).
    parts.push(
      `SELECT ${columns} FROM generate_series(${utcMonth(from)}, ${utcMonth(to)}, interval '1 month') months(month)
         CROSS JOIN LATERAL (SELECT x.id, x.created_at FROM payments x
                              WHERE ${utcMonth('x.created_at')} = months.month AND x.amount = ${bind(terms.amount)}::numeric OFFSET 0) x`,
    );
  }
  if (terms.digits !== undefined) {
    parts.push(
      `SELECT ${columns} FROM payments x WHERE ${REQUISITE_TAIL} = ${bind(terms.digits.slice(-4))}
          AND regexp_replace(x.req_value, '\\D', '', 'g') LIKE ${bind(`%${terms.digits}`)}`,
    );
  }
  return parts.length === 0 ? `SELECT ${columns} FROM payments x WHERE false` : parts.join(' UNION ALL ');
}

/** The filter as a WHERE clause over `p`, its values appended to `params`; only the conditions given, so each can use its index. */
function filterWhere(f: PaymentFilter, params: unknown[]): string {
  const bind = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  if (f.merchantId !== undefined) where.push(`p.merchant_id = ${bind(f.merchantId)}`);
  if (f.terminalId !== undefined) where.push(`p.terminal_id = ${bind(f.terminalId)}`);
  if (f.executorId !== undefined) where.push(`p.executor_id = ${bind(f.executorId)}`);
  if (f.status !== undefined) where.push(`p.status = ${bind(f.status)}`);
  if (f.method !== undefined) where.push(`p.method = ${bind(f.method)}`);
  // created_at has microseconds; the end bound covers the whole millisecond `to` names.
  const range = { from: f.from === undefined ? undefined : bind(f.from), to: f.to === undefined ? undefined : bind(new Date(f.to.getTime() + 1)) };
  if (range.from !== undefined) where.push(`p.created_at >= ${range.from}`);
  if (range.to !== undefined) where.push(`p.created_at < ${range.to}`);
  if (f.search !== undefined) where.push(`p.id IN (${searchMatches(f.search, bind, 'x.id', range)})`);
  return where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
}

/** The operator's payment list: a page of the payments matching `f`, newest first, and how many match in all. */
export async function listPayments(db: Queryable, f: PaymentFilter): Promise<{ rows: PaymentRow[]; total: number }> {
  if (f.search !== undefined && [f.merchantId, f.terminalId, f.executorId, f.status, f.method].every((x) => x === undefined)) {
    return listSearched(db, f, f.search);
  }
  const params: unknown[] = [];
  const where = filterWhere(f, params);
  const n = params.length;
  const [{ rows }, count] = await Promise.all([
    db.query<PaymentRow>(`${PAYMENT_FROM} ${where} ORDER BY p.created_at DESC, p.id DESC LIMIT $${n + 1} OFFSET $${n + 2}`, [...params, f.limit, f.offset]),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments p ${where}`, params),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/**
 * The operator's search box alone (from and to at most: filters on the payment's other columns go
 * through listPayments' own query): the matches are found, counted, ordered and cut to the page
 * from their ids and times as the indexes give them, and only the page's payments are read. A
 * card's last 4 digits match one payment in a thousand — 10 000 at 10^7 payments — which
 * listPayments' own query read from the table twice (for the page and for the count).
 */
async function listSearched(db: Queryable, f: PaymentFilter, terms: PaymentSearchTerms): Promise<{ rows: PaymentRow[]; total: number }> {
  const params: unknown[] = [];
  const bind = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  // created_at has microseconds; the end bound covers the whole millisecond `to` names.
  const bounds = { from: f.from === undefined ? undefined : bind(f.from), to: f.to === undefined ? undefined : bind(new Date(f.to.getTime() + 1)) };
  const range: string[] = [];
  if (bounds.from !== undefined) range.push(`m.created_at >= ${bounds.from}`);
  if (bounds.to !== undefined) range.push(`m.created_at < ${bounds.to}`);
  // One payment may match two readings (an amount that is also a card's digits): once each.
  const matches = `SELECT DISTINCT m.id, m.created_at FROM (${searchMatches(terms, bind, 'x.id, x.created_at', bounds)}) m
                   ${range.length === 0 ? '' : `WHERE ${range.join(' AND ')}`}`;
  const n = params.length;
  const [{ rows }, count] = await Promise.all([
    db.query<PaymentRow>(
      `${PAYMENT_FROM} WHERE p.id IN (SELECT s.id FROM (${matches}) s ORDER BY s.created_at DESC, s.id DESC LIMIT $${n + 1} OFFSET $${n + 2})
        ORDER BY p.created_at DESC, p.id DESC`,
      [...params, f.limit, f.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${matches}) s`, params),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** PAY_003: the merchant already has a payment with this ext_id. */
export function duplicateExtId(extId: string): DomainError {
  return new DomainError('PAY_003', `A payment with ext_id ${extId} already exists`, { ext_id: extId });
}

/** An insert's unique violation on the merchant's ext_id becomes PAY_003; anything else is passed on. */
export function translateInsertError(err: unknown, extId: string): unknown {
  if (pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'payments_merchant_ext_id_key') return duplicateExtId(extId);
  return err;
}

/**
 * Another create took the same requisite for the same amount between a cascade's look and its
 * insert (payments_pending_requisite_amount): the cascade may look again.
 */
export function isRequisiteAmountTaken(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation && pgConstraint(err) === 'payments_pending_requisite_amount';
}

/**
 * Another create took the last room under a requisite's limit between a cascade's look and its
 * count (requisite_usage_within_limit, migration 019): the cascade may look again.
 */
export function isRequisiteLimitReached(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.checkViolation && pgConstraint(err) === 'requisite_usage_within_limit';
}

/** A payment a provider took, with the requisites it gave. */
export interface NewProviderPayment extends Omit<NewPayment, 'candidates' | 'types' | 'bank' | 'terminalName' | 'hold'> {
  id: string;
  providerId: string;
  providerPaymentId: string;
  /** The token the provider's callbacks about this payment carry. */
  providerToken: string;
  requisites: { type: string; value: string; bankCode: string | null; holder: string; country: string; currency: string; payerAmount: string };
  /** The provider's own deadline: the payment ends at the earlier of it and our TTL. */
  providerValidUntil: Date | null;
}

/** Records a payment a provider executes (the provider route); a taken ext_id is PAY_003. */
export async function insertProviderPayment(tx: Tx, p: NewProviderPayment): Promise<void> {
  const r = p.requisites;
  try {
    await tx.query(
      `INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate,
                             provider_id, provider_payment_id, provider_token, req_type, req_value, req_bank_code, req_holder,
                             req_country, req_currency, payer_amount, cross_border, client_id, notify_url, notification_token,
                             page_token, valid_until, rate_refresh_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24,
               least(now() + make_interval(secs => $25), coalesce($26, 'infinity'::timestamptz)), $27)`,
      [
        p.id,
        p.merchantId,
        p.terminalId,
        p.extId,
        p.amount,
        p.currency,
        p.method,
        p.rate,
        p.payinRate,
        p.providerId,
        p.providerPaymentId,
        p.providerToken,
        r.type,
        r.value,
        r.bankCode,
        r.holder,
        r.country,
        r.currency,
        r.payerAmount,
        p.crossBorder,
        p.clientId,
        p.notifyUrl,
        p.notificationToken,
        p.pageToken,
        p.ttlSeconds,
        p.providerValidUntil,
        p.rateRefreshId,
      ],
    );
  } catch (err) {
    throw translateInsertError(err, p.extId);
  }
}

/** A test terminal's payment, with the test requisites made up for it. */
export interface NewTestPayment extends Omit<NewPayment, 'candidates' | 'types' | 'bank' | 'terminalName' | 'hold'> {
  id: string;
  requisites: { type: string; value: string; holder: string; country: string; currency: string; payerAmount: string };
}

/**
 * Records a test terminal's payment (migration 039): executed by no requisite and no provider,
 * holding nothing; a taken ext_id is PAY_003.
 */
export async function insertTestPayment(tx: Tx, p: NewTestPayment): Promise<void> {
  const r = p.requisites;
  try {
    await tx.query(
      `INSERT INTO payments (id, merchant_id, terminal_id, ext_id, amount, currency, method, status, rate, payin_rate, is_test,
                             req_type, req_value, req_holder, req_country, req_currency, payer_amount, cross_border,
                             client_id, notify_url, notification_token, page_token, valid_until, rate_refresh_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'PENDING', $8, $9, true, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
               now() + make_interval(secs => $21), $22)`,
      [
        p.id,
        p.merchantId,
        p.terminalId,
        p.extId,
        p.amount,
        p.currency,
        p.method,
        p.rate,
        p.payinRate,
        r.type,
        r.value,
        r.holder,
        r.country,
        r.currency,
        r.payerAmount,
        p.crossBorder,
        p.clientId,
        p.notifyUrl,
        p.notificationToken,
        p.pageToken,
        p.ttlSeconds,
        p.rateRefreshId,
      ],
    );
  } catch (err) {
    throw translateInsertError(err, p.extId);
  }
}

/** Up to 200 open provider-executed payments unchanged for `seconds`, oldest change first: the poll's work. */
export async function findStaleProviderPayments(db: Queryable, seconds: number): Promise<{ id: string; provider_id: string; provider_payment_id: string }[]> {
  const { rows } = await db.query<{ id: string; provider_id: string; provider_payment_id: string }>(
    `SELECT id, provider_id, provider_payment_id FROM payments
      WHERE provider_id IS NOT NULL AND status IN ('PENDING', 'PROCESSING', 'DISPUTE')
        AND updated_at < now() - make_interval(secs => $1)
      ORDER BY updated_at LIMIT 200`,
    [seconds],
  );
  return rows;
}

/** Marks a payment looked at (updated_at), its status unchanged. */
export async function touchPayment(tx: Tx, id: string): Promise<void> {
  await tx.query('UPDATE payments SET updated_at = now() WHERE id = $1', [id]);
}

/**
 * Starts a confirmed payment's verification: it ends `seconds` from the first confirm (later
 * confirms keep that deadline). Returns the deadline.
 */
export async function startVerification(tx: Tx, id: string, seconds: number): Promise<Date> {
  const { rows } = await tx.query<{ verify_until: Date }>(
    `UPDATE payments SET verify_until = coalesce(verify_until, now() + make_interval(secs => $2)), updated_at = now()
      WHERE id = $1 RETURNING verify_until`,
    [id, seconds],
  );
  return rows[0]!.verify_until;
}

/** Keeps the payer's name the merchant sent on create (migration 049), for the payer-name check. */
export async function insertPayerName(db: Queryable, p: { paymentId: string; merchantId: string; payerName: string }): Promise<void> {
  await db.query('INSERT INTO payment_payer_names (payment_id, merchant_id, payer_name) VALUES ($1, $2, $3) ON CONFLICT (payment_id) DO NOTHING', [
    p.paymentId,
    p.merchantId,
    p.payerName,
  ]);
}

/** The payer's name the merchant sent for a payment, if it sent one. */
export async function findPayerName(db: Queryable, paymentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ payer_name: string }>('SELECT payer_name FROM payment_payer_names WHERE payment_id = $1', [paymentId]);
  return rows[0]?.payer_name;
}

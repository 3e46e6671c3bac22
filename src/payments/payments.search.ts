import { DomainError } from '../errors.js';
import { csvDocument, csvField, csvText } from '../lib/csv.js';
import { METHODS } from '../lib/methods.js';
import { parseListQuery } from '../lib/pagination.js';
import { isUuid } from '../lib/validators.js';
import { PAYMENT_STATUSES } from './lifecycle.js';
import { CSV_MAX_ROWS, displayedRequisiteValue } from './payments.admin.schemas.js';
import type { PaymentFilter, PaymentRow, PaymentSearchTerms } from './payments.repo.js';

const PARAMS = ['q', 'status', 'merchant_id', 'terminal_id', 'executor_id', 'method', 'from', 'to', 'limit', 'offset', 'format'] as const;
const DAY_MS = 86_400_000;
/** The longest text q is read as: an ext_id's limit (payments_ext_id_check). */
const MAX_Q_LENGTH = 255;

/** A parsed `GET /admin/v1/payments` query: the filter and how to answer. */
export interface PaymentListRequest extends PaymentFilter {
  format: 'json' | 'csv';
}

function invalid(message: string, data: Record<string, unknown>): DomainError {
  return new DomainError('VALIDATION', message, data);
}

/**
 * Reads the payment list's query (PaymentListQuery describes each parameter); `accept` is the
 * request's Accept header, which may ask for CSV. An unknown parameter is refused rather than
 * ignored: a misspelt filter would otherwise answer every payment as if it had been applied.
 */
export function parsePaymentListQuery(query: Record<string, unknown>, accept: string | undefined): PaymentListRequest {
  for (const key of Object.keys(query)) {
    if (!(PARAMS as readonly string[]).includes(key)) {
      throw invalid(`unknown query parameter ${key}; the payment list takes ${PARAMS.join(', ')}`, { parameter: key });
    }
  }
  const text = (name: (typeof PARAMS)[number]): string | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw invalid(`${name} must be given once`, { [name]: value });
    return value;
  };
  const oneOf = (name: 'status' | 'method', allowed: readonly string[]): string | undefined => {
    const value = text(name);
    if (value !== undefined && !allowed.includes(value))
      throw invalid(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`, { [name]: value });
    return value;
  };
  const id = (name: 'merchant_id' | 'terminal_id' | 'executor_id'): string | undefined => {
    const value = text(name);
    if (value !== undefined && !isUuid(value))
      throw invalid(`${name} must be a uuid (the id the operator API returns); got ${JSON.stringify(value)}`, { [name]: value });
    return value?.toLowerCase();
  };

  const format = text('format');
  if (format !== undefined && format !== 'json' && format !== 'csv') throw invalid(`format must be json or csv; got ${JSON.stringify(format)}`, { format });
  const csv = format === 'csv' || (format === undefined && /(^|,)\s*text\/csv\b/i.test(accept ?? ''));

  const from = instant(text('from'), 'from');
  const to = instant(text('to'), 'to');
  if (from && to && to < from) {
    throw invalid(`to (${to.toISOString()}) is before from (${from.toISOString()}); give from ≤ to`, { from: from.toISOString(), to: to.toISOString() });
  }
  const q = text('q')?.trim();
  if (q !== undefined && q.length > MAX_Q_LENGTH) {
    throw invalid(`q must be at most ${MAX_Q_LENGTH} characters (a payment id, ext_id, client_id, amount or requisite digits)`, { q_length: q.length });
  }

  const { offset } = parseListQuery({ offset: query.offset }, 'VALIDATION');
  const limit = csv ? csvLimit(text('limit')) : parseListQuery({ limit: query.limit }, 'VALIDATION').limit;
  return {
    merchantId: id('merchant_id'),
    terminalId: id('terminal_id'),
    executorId: id('executor_id'),
    status: oneOf('status', PAYMENT_STATUSES),
    method: oneOf('method', METHODS),
    from,
    to,
    search: q ? searchTerms(q) : undefined,
    limit,
    offset,
    format: csv ? 'csv' : 'json',
  };
}

function csvLimit(value: string | undefined): number {
  if (value === undefined) return CSV_MAX_ROWS;
  const n = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= 1 && n <= CSV_MAX_ROWS))
    throw invalid(`limit of a CSV export must be between 1 and ${CSV_MAX_ROWS}; got ${JSON.stringify(value)}`, { limit: value });
  return n;
}

/**
 * ISO 8601 only, and a date-time with its zone: `Date` alone would also take "1" (the year 2001)
 * or "March 7, 2024", and read a date-time without a zone in the server's own.
 */
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

/** `from` or `to` as an instant; a bare date is that UTC day's first millisecond (`from`) or last (`to`). */
function instant(value: string | undefined, name: 'from' | 'to'): Date | undefined {
  if (value === undefined) return undefined;
  const m = ISO_INSTANT.exec(value);
  const date = m ? new Date(value) : new Date(Number.NaN);
  // A real calendar day: "2026-02-30" is refused, not read as March 2nd.
  const day = m && new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).toISOString().slice(0, 10) === value.slice(0, 10);
  if (Number.isNaN(date.getTime()) || !day) {
    throw invalid(
      `${name} must be an ISO 8601 date-time with its zone (2026-01-31T10:00:00Z, 2026-01-31T13:00:00+03:00) or a date (2026-01-31); got ${JSON.stringify(value)}`,
      {
        [name]: value,
      },
    );
  }
  return name === 'to' && value.length === 10 ? new Date(date.getTime() + DAY_MS - 1) : date;
}

/**
 * Every reading of the search text (PaymentSearchTerms): always an ext_id or client_id, which may
 * be anything; also a payment id when it is a uuid, an amount when it is one (no leading zero:
 * "0512" is a card's digits, not 512), and requisite digits when it is 4 or more digits written
 * as a card or phone number is.
 */
export function searchTerms(q: string): PaymentSearchTerms {
  const terms: PaymentSearchTerms = { reference: q };
  if (isUuid(q)) terms.id = q.toLowerCase();
  // numeric(20, 2): up to 18 digits before the point and 2 after; a decimal comma is taken too.
  const amount = q.replace(',', '.');
  if (/^(?:0|[1-9]\d{0,17})(?:\.\d{1,2})?$/.test(amount) && Number(amount) > 0) terms.amount = amount;
  if (/^\+?[\d\s()-]+$/.test(q)) {
    const digits = q.replace(/\D/g, '');
    if (digits.length >= 4) terms.digits = digits;
  }
  return terms;
}

const CSV_COLUMNS = [
  'id',
  'created_at',
  'status',
  'merchant_id',
  'terminal_id',
  'terminal_name',
  'executor_id',
  'requisite_id',
  'ext_id',
  'client_id',
  'method',
  'amount',
  'currency',
  'received_amount',
  'payer_amount',
  'payer_currency',
  'rate',
  'payin_rate',
  'requisite_type',
  'requisite_value',
  'bank_code',
  'cancel_reason',
  'completed_at',
  'valid_until',
] as const;

/**
 * The payments as CSV (RFC 4180, CRLF line ends): a header row, then one line per payment.
 * Amounts, rates and payin_rate are the stored decimals as text, never through a float; card
 * numbers are masked (an export leaves the system); text a merchant chose is kept from being
 * read as a formula (csvText).
 */
export function paymentsCsv(rows: readonly PaymentRow[], audience: 'operator' | 'merchant' = 'operator'): string {
  // A merchant's export leaves out who served each payment (the executor and its requisite's id).
  const columns = audience === 'operator' ? CSV_COLUMNS : CSV_COLUMNS.filter((c) => c !== 'executor_id' && c !== 'requisite_id');
  return csvDocument(
    columns,
    rows.map((p) => {
      const cells: Record<(typeof CSV_COLUMNS)[number], string> = {
        id: csvField(p.id),
        created_at: csvField(p.created_at.toISOString()),
        status: csvField(p.status),
        merchant_id: csvField(p.merchant_id),
        terminal_id: csvField(p.terminal_id),
        terminal_name: csvText(p.terminal_name),
        executor_id: csvField(p.executor_id),
        requisite_id: csvField(p.requisite_id),
        ext_id: csvText(p.ext_id),
        client_id: csvText(p.client_id),
        method: csvField(p.method),
        amount: csvField(p.amount),
        currency: csvField(p.currency),
        received_amount: csvField(p.received_amount),
        payer_amount: csvField(p.payer_amount),
        payer_currency: csvField(p.req_currency),
        rate: csvField(p.rate),
        payin_rate: csvField(p.payin_rate),
        requisite_type: csvField(p.req_type),
        requisite_value: csvField(displayedRequisiteValue(p.req_type, p.req_value)),
        bank_code: csvField(p.req_bank_code),
        cancel_reason: csvField(p.cancel_reason),
        completed_at: csvField(p.completed_at?.toISOString()),
        valid_until: csvField(p.valid_until.toISOString()),
      };
      return columns.map((column) => cells[column]);
    }),
  );
}

/** The CSV download's file name: payments-<UTC time of the export>.csv. */
export function paymentsCsvFileName(now = new Date()): string {
  return `payments-${now
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '')}.csv`;
}

import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { csvField } from '../lib/csv.js';
import { money, toNumber } from '../lib/money.js';
import { isUuid } from '../lib/validators.js';
import * as repo from './reports.repo.js';

/** The longest range one report covers, in days (both ends included). */
export const MAX_REPORT_DAYS = 366;
/** The range a report covers when `from` is not given: this many days up to `to`. */
export const DEFAULT_REPORT_DAYS = 30;

const PARAMS = ['from', 'to', 'merchant_id', 'executor_id', 'format'] as const;
const DAY_MS = 86_400_000;

export type ReportBy = 'merchant' | 'executor';

export interface ReportRequest extends repo.ReportQuery {
  format: 'json' | 'csv';
}

/** The figures of one row (or of the totals), USDT, as JSON numbers. */
export interface ReportFigures {
  payins: number;
  payin_turnover: number;
  payouts: number;
  payout_turnover: number;
  turnover: number;
  payin_rewards: number;
  payout_credits: number;
  rewards: number;
  revenue: number;
}

export interface Report {
  by: ReportBy;
  from: string;
  to: string;
  currency: 'USDT';
  rows: Array<{ day: string; merchant_id?: string | null; executor_id?: string | null } & ReportFigures>;
  totals: ReportFigures;
}

/** A calendar date `YYYY-MM-DD` as UTC midnight in ms, or undefined when it is not a real date. */
function parseDay(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(ms).toISOString().slice(0, 10) === value ? ms : undefined;
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function invalid(message: string, data: Record<string, unknown>): DomainError {
  return new DomainError('VALIDATION', message, data);
}

/**
 * Reads a report's query: `from` and `to` (UTC dates, both included; `to` defaults to today,
 * `from` to 29 days before `to`), `merchant_id`, `executor_id` (uuids), `format` (`json` or
 * `csv`; `accept` is the request's Accept header, which may ask for text/csv instead). Anything
 * else, or any of these malformed, is a VALIDATION error saying what to send.
 */
export function parseReportQuery(by: ReportBy, query: Record<string, unknown>, accept: string | undefined, now = new Date()): ReportRequest {
  for (const key of Object.keys(query)) {
    if (!(PARAMS as readonly string[]).includes(key)) {
      throw invalid(`unknown query parameter ${key}; a report takes ${PARAMS.join(', ')}`, { parameter: key });
    }
  }
  const text = (name: (typeof PARAMS)[number]): string | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw invalid(`${name} must be given once`, { [name]: value });
    return value;
  };
  const day = (name: 'from' | 'to'): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    const ms = parseDay(value);
    if (ms === undefined) throw invalid(`${name} must be a calendar date YYYY-MM-DD (UTC), e.g. 2026-01-31; got ${JSON.stringify(value)}`, { [name]: value });
    return ms;
  };
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const to = day('to') ?? today;
  const from = day('from') ?? to - (DEFAULT_REPORT_DAYS - 1) * DAY_MS;
  if (to < from) throw invalid(`to (${dayOf(to)}) is before from (${dayOf(from)}); give from ≤ to`, { from: dayOf(from), to: dayOf(to) });
  const days = Math.round((to - from) / DAY_MS) + 1;
  if (days > MAX_REPORT_DAYS) {
    throw invalid(`the range ${dayOf(from)}..${dayOf(to)} covers ${days} days; a report covers at most ${MAX_REPORT_DAYS}: split it`, {
      from: dayOf(from),
      to: dayOf(to),
      days,
    });
  }
  const id = (name: 'merchant_id' | 'executor_id'): string | null => {
    const value = text(name);
    if (value === undefined) return null;
    if (!isUuid(value)) throw invalid(`${name} must be a uuid (the id the operator API returns); got ${JSON.stringify(value)}`, { [name]: value });
    return value.toLowerCase();
  };
  const merchantId = id('merchant_id');
  const executorId = id('executor_id');
  const format = text('format');
  if (format !== undefined && format !== 'json' && format !== 'csv') {
    throw invalid(`format must be json or csv; got ${JSON.stringify(format)}`, { format });
  }
  const wantsCsv = format === 'csv' || (format === undefined && /(^|,)\s*text\/csv\b/i.test(accept ?? ''));
  return { by, from: dayOf(from), to: dayOf(to), merchantId, executorId, format: wantsCsv ? 'csv' : 'json' };
}

/**
 * The report for `q`, from the ledger alone: per UTC day (of the posting) and per merchant (the
 * posting's merchant) or per executor (the executor whose accounts the posting moves; null for
 * provider payments, payouts nobody took and withdrawals).
 */
export async function buildReport(ctx: AppContext, q: repo.ReportQuery): Promise<Report> {
  if (q.merchantId && !(await repo.merchantExists(ctx.db, q.merchantId))) {
    throw new DomainError('NOT_FOUND', `Merchant ${q.merchantId} not found; list merchants with GET /admin/v1/merchants`);
  }
  if (q.executorId && !(await repo.executorExists(ctx.db, q.executorId))) {
    throw new DomainError('NOT_FOUND', `Executor ${q.executorId} not found; list executors with GET /admin/v1/executors`);
  }
  const rows = await repo.reportRows(ctx.db, q);
  const sum = {
    payins: 0,
    payouts: 0,
    payin_turnover: money(0),
    payout_turnover: money(0),
    payin_rewards: money(0),
    payout_credits: money(0),
    revenue: money(0),
  };
  const out: Report['rows'] = rows.map((row) => {
    sum.payins += row.payins;
    sum.payouts += row.payouts;
    for (const key of ['payin_turnover', 'payout_turnover', 'payin_rewards', 'payout_credits', 'revenue'] as const) sum[key] = sum[key].plus(row[key]);
    const figures = toFigures({
      payins: row.payins,
      payouts: row.payouts,
      payin_turnover: money(row.payin_turnover),
      payout_turnover: money(row.payout_turnover),
      payin_rewards: money(row.payin_rewards),
      payout_credits: money(row.payout_credits),
      revenue: money(row.revenue),
    });
    return { day: row.day, [q.by === 'merchant' ? 'merchant_id' : 'executor_id']: row.owner_id, ...figures };
  });
  return { by: q.by, from: q.from, to: q.to, currency: 'USDT', rows: out, totals: toFigures(sum) };
}

function toFigures(f: {
  payins: number;
  payouts: number;
  payin_turnover: ReturnType<typeof money>;
  payout_turnover: ReturnType<typeof money>;
  payin_rewards: ReturnType<typeof money>;
  payout_credits: ReturnType<typeof money>;
  revenue: ReturnType<typeof money>;
}): ReportFigures {
  return {
    payins: f.payins,
    payin_turnover: toNumber(f.payin_turnover)!,
    payouts: f.payouts,
    payout_turnover: toNumber(f.payout_turnover)!,
    turnover: toNumber(f.payin_turnover.plus(f.payout_turnover))!,
    payin_rewards: toNumber(f.payin_rewards)!,
    payout_credits: toNumber(f.payout_credits)!,
    rewards: toNumber(f.payin_rewards.plus(f.payout_credits))!,
    revenue: toNumber(f.revenue)!,
  };
}

export const FIGURE_COLUMNS = [
  'payins',
  'payin_turnover',
  'payouts',
  'payout_turnover',
  'turnover',
  'payin_rewards',
  'payout_credits',
  'rewards',
  'revenue',
] as const;

/** The report as CSV (RFC 4180, CRLF line ends): a header row, then one line per row; amounts with USDT's 6 decimals. */
export function reportCsv(report: Report): string {
  const owner = report.by === 'merchant' ? 'merchant_id' : 'executor_id';
  const header = ['day', owner, ...FIGURE_COLUMNS];
  const lines = [header.map(csvField).join(',')];
  for (const row of report.rows) {
    const cells = [row.day, row[owner] ?? '', ...FIGURE_COLUMNS.map((c) => (c === 'payins' || c === 'payouts' ? String(row[c]) : money(row[c]).toFixed(6)))];
    lines.push(cells.map(csvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The CSV download's file name: kassir-report-<by>-<from>-<to>.csv. */
export function reportFileName(report: Report): string {
  return `kassir-report-${report.by}-${report.from}-${report.to}.csv`;
}

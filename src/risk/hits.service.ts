import type { Static } from 'typebox';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { csvDocument, csvField, csvText } from '../lib/csv.js';
import { parseListQuery } from '../lib/pagination.js';
import { isUuid } from '../lib/validators.js';
import * as repo from './hits.repo.js';
import type { RiskHit, RiskHitQuery, RiskSummary } from './hits.schemas.js';

type Query = Static<typeof RiskHitQuery>;

/** The list's filters from the query string; a malformed one is VALIDATION naming it. */
export function parseHitFilter(query: Query): repo.RiskHitFilter {
  const filter: repo.RiskHitFilter = {};
  if (query.rule !== undefined && query.rule !== '') {
    if (!(repo.RISK_RULES as readonly string[]).includes(query.rule)) {
      throw new DomainError('VALIDATION', `rule must be one of ${repo.RISK_RULES.join(', ')}`, { rule: query.rule });
    }
    filter.rule = query.rule;
  }
  if (query.action !== undefined && query.action !== '') {
    if (query.action !== 'refused' && query.action !== 'flagged')
      throw new DomainError('VALIDATION', 'action must be refused or flagged', { action: query.action });
    filter.action = query.action;
  }
  for (const [name, key] of [
    ['merchant_id', 'merchantId'],
    ['payment_id', 'paymentId'],
    ['dispute_id', 'disputeId'],
  ] as const) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    if (!isUuid(value)) throw new DomainError('VALIDATION', `${name} must be a UUID`, { [name]: value });
    filter[key] = value;
  }
  for (const name of ['from', 'to'] as const) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) throw new DomainError('VALIDATION', `${name} must be an ISO 8601 instant`, { [name]: value });
    filter[name] = at;
  }
  if (query.unsettled !== undefined && query.unsettled !== '') {
    if (query.unsettled !== 'true' && query.unsettled !== 'false')
      throw new DomainError('VALIDATION', 'unsettled must be true or false', { unsettled: query.unsettled });
    filter.unsettled = query.unsettled === 'true';
  }
  return filter;
}

/** A hit as the API answers it. */
export function toRiskHit(row: repo.RiskHitRow): Static<typeof RiskHit> {
  return {
    id: row.id,
    created_at: row.created_at.toISOString(),
    rule: row.rule,
    action: row.action,
    merchant_id: row.merchant_id,
    merchant_name: row.merchant_name,
    terminal_id: row.terminal_id,
    terminal_name: row.terminal_name,
    payment_id: row.payment_id,
    payout_id: row.payout_id,
    dispute_id: row.dispute_id,
    inputs: row.inputs,
    figure: row.figure,
    settled_at: row.settled_at?.toISOString() ?? null,
    settled_by: row.settled_by,
  };
}

/** One page of hits, newest first. */
export async function listHits(ctx: AppContext, query: Query) {
  const filter = parseHitFilter(query);
  const page = parseListQuery(query, 'VALIDATION');
  const { rows, total } = await repo.listRiskHits(ctx.db, filter, page);
  return { hits: rows.map(toRiskHit), total, limit: page.limit, offset: page.offset };
}

const EXPORT_HEADER = ['time', 'rule', 'action', 'merchant', 'terminal', 'payment', 'payout', 'dispute', 'figure', 'inputs', 'settled', 'settled_by'] as const;

/** The export's file name: the day it was taken. */
export function hitsCsvFileName(now = new Date()): string {
  return `risk-hits-${now.toISOString().slice(0, 10)}.csv`;
}

/**
 * Every hit the filters match as CSV, a line at a time as the rows are read (RISK_EXPORT_DESCRIPTION).
 * The filters are checked before the first line, so a bad one is a 400 and not a broken download.
 */
export function exportHits(ctx: AppContext, query: Query): AsyncGenerator<string> {
  const filter = parseHitFilter(query);
  return (async function* () {
    yield csvDocument(EXPORT_HEADER, []);
    for await (const row of repo.eachRiskHit(ctx.db, filter)) {
      const cells = [
        csvField(row.created_at.toISOString()),
        csvField(row.rule),
        csvField(row.action),
        // A merchant's and a terminal's names are the merchant's words.
        csvText(row.merchant_name ?? row.merchant_id),
        csvText(row.terminal_name ?? row.terminal_id),
        csvField(row.payment_id),
        csvField(row.payout_id),
        csvField(row.dispute_id),
        // A figure quotes inputs (a client_id the merchant chose), and so do the inputs.
        csvText(row.figure),
        csvText(JSON.stringify(row.inputs)),
        csvField(row.settled_at?.toISOString()),
        csvText(row.settled_by),
      ];
      yield `${cells.join(',')}\r\n`;
    }
  })();
}

const HOUR = 3_600;

/**
 * Hits per hour and rule over the last `hours` hours, ending with the current hour: every hour
 * and every rule present, zeros included, so a chart draws a line per rule without gaps. A rule
 * the code does not know yet (a later kind, migration 045) gets its line too.
 */
export async function hitsSummary(ctx: AppContext, hoursParam: string | undefined, now = new Date()): Promise<Static<typeof RiskSummary>> {
  const hours = hoursParam === undefined || hoursParam === '' ? 24 : Number(hoursParam);
  if (!Number.isInteger(hours) || hours < 1 || hours > 168)
    throw new DomainError('VALIDATION', 'hours must be an integer from 1 to 168', { hours: hoursParam });
  const bucketMs = HOUR * 1000;
  const to = new Date(Math.floor(now.getTime() / bucketMs) * bucketMs + bucketMs);
  const from = new Date(to.getTime() - hours * bucketMs);
  const rows = await repo.riskHitCounts(ctx.db, from, to, HOUR);
  const rules = [...repo.RISK_RULES, ...new Set(rows.map((r) => r.rule).filter((rule) => !(repo.RISK_RULES as readonly string[]).includes(rule)))];
  const zeros = () => Object.fromEntries(rules.map((rule) => [rule, 0])) as Record<string, number>;
  const totals = zeros();
  const series = Array.from({ length: hours }, (_, i) => ({ at: from.getTime() + i * bucketMs, total: 0, by_rule: zeros() }));
  for (const row of rows) {
    const bucket = series[Math.round((row.at * 1000 - from.getTime()) / bucketMs)];
    if (!bucket) continue;
    bucket.by_rule[row.rule] = row.count;
    bucket.total += row.count;
    totals[row.rule] = (totals[row.rule] ?? 0) + row.count;
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    bucket_seconds: HOUR,
    rules,
    series: series.map((s) => ({ at: new Date(s.at).toISOString(), total: s.total, by_rule: s.by_rule })),
    totals,
  };
}

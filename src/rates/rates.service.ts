import { isDeepStrictEqual } from 'node:util';
import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { type Db, transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { checkDecimal, FIAT_CURRENCIES, money, RATE_DECIMALS } from '../lib/money.js';
import { combine, DEFAULT_FIGURE_RULES, distancePercent, type FigureRules, type SourceResult, sourceFigure, withMarkup } from './figure.js';
import { isUsable, toQuote } from './quote.js';
import * as repo from './rates.repo.js';
import { sourceOf } from './sources/index.js';
import { type Advert, SOURCE_NAMES, type SourceName } from './sources/source.js';

/** Validates a rate: the price of 1 USDT in the currency, positive, at most 8 decimals. */
export function parseRate(value: unknown): string {
  const rate = checkDecimal(value, { field: 'rate', places: RATE_DECIMALS, min: 0, minExclusive: true, max: '1e11', maxExclusive: true });
  if (typeof rate === 'string') throw new DomainError('VALIDATION', rate);
  return rate.toFixed();
}

/** A currency that has a price in USDT: an order currency or a requisite country's (case-insensitive). */
export function parseCurrency(value: string): string {
  const currency = value.toUpperCase();
  if (!FIAT_CURRENCIES.includes(currency)) {
    throw new DomainError('VALIDATION', `currency ${JSON.stringify(value)} is not one Kassir prices; use one of ${FIAT_CURRENCIES.join(', ')}`, {
      currency: value,
    });
  }
  return currency;
}

/** What `PUT /admin/v1/rates/{currency}` (and a terminal's) takes: a typed rate, a feed, or (a terminal's) a markup on the currency's figure. */
export interface RateSettingBody {
  rate?: unknown;
  source?: string;
  markup_percent?: unknown;
  payout_markup_percent?: unknown;
  refresh_seconds?: number;
  max_age_seconds?: number;
  max_spread_percent?: unknown;
  max_jump_percent?: unknown;
  options?: Record<string, unknown>;
  cross_check?: { source: string; options?: Record<string, unknown> }[];
}

const FEED_FIELDS = ['source', 'refresh_seconds', 'max_age_seconds', 'max_spread_percent', 'max_jump_percent', 'options', 'cross_check'] as const;

export const DEFAULT_REFRESH_SECONDS = 30;
export const DEFAULT_MAX_AGE_SECONDS = 600;
const DEFAULT_MAX_SPREAD_PERCENT = '3';
/** How long one instance holds a feed it fetches before another may try it. */
const LEASE_SECONDS = 60;
/** How long one exchange may take to answer. */
const FETCH_TIMEOUT_MS = 10_000;
/** Feeds fetched by one look of the job. */
const FEEDS_PER_LOOK = 20;
/** Fetches that gave no new rate are kept this long (the console's chart shows the last day). */
export const REFRESH_HISTORY_HOURS = 48;

function invalid(message: string, data?: Record<string, unknown>): never {
  throw new DomainError('VALIDATION', message, data);
}

function percent(value: unknown, field: string, rule: { nullable?: boolean; positive?: boolean } = {}): string | null {
  if (value === null && rule.nullable) return null;
  const d = checkDecimal(value, { field, places: 4, min: rule.positive ? 0 : -100, minExclusive: true, max: 1000, maxExclusive: true });
  if (typeof d === 'string') invalid(d);
  return d.toFixed();
}

function seconds(value: number | undefined, field: string, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > 86_400) invalid(`${field} must be a whole number of seconds from ${min} to 86400`);
  return value;
}

/** A source's options as stored: the rules every source shares checked, the source's own kept as given. */
function parseOptions(source: SourceName, options: Record<string, unknown> | undefined, field: string): Record<string, unknown> {
  const o = { ...(options ?? {}) };
  if (o.base_url !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof o.base_url === 'string' ? new URL(o.base_url) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol))
      invalid(`${field}.base_url must be an absolute http(s) URL (the address of ${sourceOf(source).label} or a mirror)`);
  }
  if (o.pay_methods !== undefined && (!Array.isArray(o.pay_methods) || !o.pay_methods.every((m) => typeof m === 'string' && m.length > 0))) {
    invalid(`${field}.pay_methods must be a list of the exchange's pay method names or ids`);
  }
  if (o.amount !== undefined) {
    const amount = checkDecimal(o.amount, { field: `${field}.amount`, places: 2, min: 0, minExclusive: true });
    if (typeof amount === 'string') invalid(amount);
  }
  if (o.side !== undefined && o.side !== 'buy' && o.side !== 'sell') invalid(`${field}.side must be "buy" (adverts selling USDT) or "sell"`);
  if (o.ranks !== undefined) {
    const r = o.ranks;
    if (!Array.isArray(r) || r.length !== 2 || !r.every((n) => Number.isInteger(n)) || r[0] < 1 || r[1] < r[0] || r[1] > 100) {
      invalid(`${field}.ranks must be [from, to]: the advert ranks taken, 1-based, from ≤ to ≤ 100`);
    }
  }
  for (const [key, max] of [
    ['min_orders', 1_000_000],
    ['min_completion_percent', 100],
    ['min_adverts', 100],
  ] as const) {
    const v = o[key];
    if (v !== undefined && (typeof v !== 'number' || v < 0 || v > max)) invalid(`${field}.${key} must be a number from 0 to ${max}`);
  }
  if (o.outlier_percent !== undefined && (typeof o.outlier_percent !== 'number' || o.outlier_percent <= 0 || o.outlier_percent > 100)) {
    invalid(`${field}.outlier_percent must be a number above 0 and at most 100`);
  }
  return o;
}

function parseSource(value: unknown, currency: string, field: string): SourceName {
  if (typeof value !== 'string' || !(SOURCE_NAMES as readonly string[]).includes(value)) {
    invalid(`${field} must be one of ${SOURCE_NAMES.join(', ')}`, { [field]: value });
  }
  const source = value as SourceName;
  const { currencies, label } = sourceOf(source);
  if (!currencies.includes(currency)) {
    invalid(`${label} does not quote USDT in ${currency}; it quotes ${currencies.join(', ')}`, { [field]: source, currency });
  }
  return source;
}

/** The figure rules of a source's options (defaults where the operator set none). */
export function figureRules(options: Record<string, unknown>): FigureRules {
  const d = DEFAULT_FIGURE_RULES;
  return {
    payMethods: Array.isArray(options.pay_methods) ? (options.pay_methods as string[]) : d.payMethods,
    amount: options.amount === undefined ? d.amount : String(options.amount),
    minOrders: typeof options.min_orders === 'number' ? options.min_orders : d.minOrders,
    minCompletionPercent: typeof options.min_completion_percent === 'number' ? options.min_completion_percent : d.minCompletionPercent,
    ranks: Array.isArray(options.ranks) ? (options.ranks as [number, number]) : d.ranks,
    outlierPercent: typeof options.outlier_percent === 'number' ? options.outlier_percent : d.outlierPercent,
    minAdverts: typeof options.min_adverts === 'number' ? options.min_adverts : d.minAdverts,
  };
}

/** Who a setting belongs to: the currency's own (terminalId null) or a terminal's. */
export interface RateScope {
  terminalId: string | null;
  currency: string;
}

/** The setting a body asks for, checked; the rest of the row (its rate, for a feed) is decided by saveSetting. */
function parseBody(scope: RateScope, body: RateSettingBody): Omit<repo.SettingInput, 'fetched_at' | 'next_refresh_now'> {
  const given = (field: string) => (body as Record<string, unknown>)[field] !== undefined;
  const base = {
    rate: null,
    figure: null,
    source: null,
    options: {},
    cross_check: [],
    markup_percent: '0',
    payout_markup_percent: null,
    refresh_seconds: DEFAULT_REFRESH_SECONDS,
    max_age_seconds: DEFAULT_MAX_AGE_SECONDS,
    max_spread_percent: DEFAULT_MAX_SPREAD_PERCENT,
    max_jump_percent: null,
  };
  if (given('rate')) {
    const extra = [...FEED_FIELDS, 'markup_percent', 'payout_markup_percent'].filter(given);
    if (extra.length > 0) invalid(`A typed rate takes nothing else; drop ${extra.join(', ')} (or send a source instead of the rate)`);
    const rate = parseRate(body.rate);
    return { ...base, mode: 'manual', rate, figure: rate };
  }
  const markup = given('markup_percent') ? percent(body.markup_percent, 'markup_percent')! : '0';
  const payoutMarkup = given('payout_markup_percent') ? percent(body.payout_markup_percent, 'payout_markup_percent', { nullable: true }) : null;
  if (!given('source')) {
    const extra = FEED_FIELDS.filter(given);
    if (extra.length > 0) invalid(`${extra.join(', ')} belong to a feed: send source too`);
    if (scope.terminalId === null || !given('markup_percent')) {
      invalid(
        scope.terminalId === null
          ? 'Send {rate} (a typed rate) or {source, markup_percent?, refresh_seconds?, max_age_seconds?, options?} (an exchange feed)'
          : "Send {rate}, {source, …} (the terminal's own feed) or {markup_percent} (the currency's rate with this terminal's markup)",
      );
    }
    return { ...base, mode: 'markup', markup_percent: markup, payout_markup_percent: payoutMarkup };
  }
  const source = parseSource(body.source, scope.currency, 'source');
  const crossCheck = body.cross_check ?? [];
  if (!Array.isArray(crossCheck) || crossCheck.length > 4) invalid('cross_check must be a list of at most 4 {source, options?}');
  return {
    ...base,
    mode: 'feed',
    source,
    options: parseOptions(source, body.options, 'options'),
    cross_check: crossCheck.map((c, i) => {
      const other = parseSource(c?.source, scope.currency, `cross_check[${i}].source`);
      return { source: other, options: parseOptions(other, c.options, `cross_check[${i}].options`) };
    }),
    markup_percent: markup,
    payout_markup_percent: payoutMarkup,
    refresh_seconds: seconds(body.refresh_seconds, 'refresh_seconds', 5, DEFAULT_REFRESH_SECONDS),
    max_age_seconds: seconds(body.max_age_seconds, 'max_age_seconds', 10, DEFAULT_MAX_AGE_SECONDS),
    max_spread_percent: given('max_spread_percent') ? percent(body.max_spread_percent, 'max_spread_percent', { positive: true })! : DEFAULT_MAX_SPREAD_PERCENT,
    max_jump_percent: given('max_jump_percent') ? percent(body.max_jump_percent, 'max_jump_percent', { nullable: true, positive: true }) : null,
  };
}

/**
 * Sets a rate: typed, kept by a feed, or (a terminal's) the currency's figure with a markup. A feed
 * that stays the same feed (only its markup or timings changed) keeps its figure, priced anew;
 * another feed starts with no rate until its first fetch, which is asked for at once. The change,
 * its refresh and its audit row commit together.
 */
export async function saveSetting(
  ctx: AppContext,
  scope: RateScope,
  body: RateSettingBody,
  record: AuditRecorder,
  actor: string,
): Promise<repo.RateSettingView> {
  const wanted = parseBody(scope, body);
  const saved = await transaction(ctx.db, async (tx) => {
    const before = await repo.lockSetting(tx, scope.terminalId, scope.currency);
    const sameFeed =
      wanted.mode === 'feed' &&
      before?.mode === 'feed' &&
      before.source === wanted.source &&
      // jsonb keeps its own key order: compared as values, not as text.
      isDeepStrictEqual(before.options, wanted.options) &&
      isDeepStrictEqual(before.cross_check, wanted.cross_check);
    const keptFigure = sameFeed ? before.figure : null;
    const input: repo.SettingInput = {
      ...wanted,
      figure: wanted.mode === 'feed' ? keptFigure : wanted.figure,
      rate: wanted.mode === 'feed' ? (keptFigure ? withMarkup(keptFigure, wanted.markup_percent) : null) : wanted.rate,
      fetched_at: sameFeed ? before.fetched_at : null,
      next_refresh_now: wanted.mode === 'feed' && !sameFeed,
    };
    let row = await repo.saveSetting(tx, scope.terminalId, scope.currency, input);
    if (row.rate !== null) {
      const refresh = await repo.insertRefresh(tx, {
        setting: row,
        kind: wanted.mode === 'manual' ? 'manual' : 'settings',
        source: row.source,
        figure: row.figure,
        markup_percent: row.markup_percent,
        rate: row.rate,
        gave_rate: true,
        sample: null,
        error: null,
        actor,
      });
      row = await repo.applyRefresh(tx, row.id, refresh, row.fetched_at ?? 'now');
    }
    await record(
      tx,
      scope.terminalId ? 'terminal.set_rate' : 'rate.set',
      scope.terminalId ? 'terminal' : 'rate',
      scope.terminalId ?? scope.currency,
      before ? settingSummary(before) : null,
      settingSummary(row),
    );
    return row;
  });
  if (saved.mode === 'feed') await scheduleRefresh(ctx.db, new Date());
  return (await repo.findSetting(ctx.db, scope.terminalId, scope.currency))!;
}

/** A setting as the audit log keeps it. */
function settingSummary(row: repo.RateSettingRow): Record<string, unknown> {
  return {
    currency: row.currency,
    mode: row.mode,
    rate: row.rate,
    source: row.source,
    markup_percent: row.markup_percent,
    payout_markup_percent: row.payout_markup_percent,
    ...(row.mode === 'feed'
      ? {
          options: row.options,
          cross_check: row.cross_check,
          refresh_seconds: row.refresh_seconds,
          max_age_seconds: row.max_age_seconds,
          max_jump_percent: row.max_jump_percent,
        }
      : {}),
  };
}

/** Removes a terminal's own setting: the currency's rate applies again. */
export async function removeTerminalSetting(ctx: AppContext, terminalId: string, currency: string, record: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    const gone = await repo.deleteSetting(tx, terminalId, currency);
    if (!gone) throw new DomainError('NOT_FOUND', `Terminal ${terminalId} has no own ${currency} rate`);
    await record(tx, 'terminal.remove_rate', 'terminal', terminalId, settingSummary(gone), null);
  });
}

/**
 * A person decides a jump the feed held (max_jump_percent): `accept` makes the held figure the
 * rate; `keep` keeps the current rate and vouches for it (fresh again for max_age_seconds), and
 * the feed goes on comparing with it.
 */
export async function decideHeld(
  ctx: AppContext,
  scope: RateScope,
  decision: 'accept' | 'keep',
  record: AuditRecorder,
  actor: string,
): Promise<repo.RateSettingView> {
  await transaction(ctx.db, async (tx) => {
    const setting = await repo.lockSetting(tx, scope.terminalId, scope.currency);
    if (!setting) throw new DomainError('NOT_FOUND', `There is no ${scope.currency} rate${scope.terminalId ? ' of this terminal' : ''}`);
    if (!setting.held_refresh_id) {
      throw new DomainError('CONFLICT', `No jump of the ${scope.currency} rate waits for a decision (it may have been decided, or the feed came back)`);
    }
    const held = (await repo.findRefresh(tx, setting.held_refresh_id))!;
    const before = { rate: setting.rate, held_rate: held.rate };
    if (decision === 'accept') {
      const accepted = await repo.insertRefresh(tx, {
        setting,
        kind: 'accepted',
        source: held.source,
        figure: held.figure,
        markup_percent: setting.markup_percent,
        rate: withMarkup(held.figure!, setting.markup_percent),
        gave_rate: true,
        sample: { held_refresh_id: held.id },
        error: null,
        actor,
      });
      await repo.applyRefresh(tx, setting.id, accepted, held.at);
    } else {
      if (setting.rate === null) throw new DomainError('CONFLICT', `The ${scope.currency} feed has no rate yet to keep; accept the held one or type a rate`);
      await repo.insertRefresh(tx, {
        setting,
        kind: 'kept',
        source: setting.source,
        figure: setting.figure,
        markup_percent: setting.markup_percent,
        rate: setting.rate,
        gave_rate: false,
        sample: { held_refresh_id: held.id },
        error: null,
        actor,
      });
      await repo.keepRate(tx, setting.id);
    }
    const after = await repo.lockSetting(tx, scope.terminalId, scope.currency);
    await record(tx, `rate.${decision}_jump`, scope.terminalId ? 'terminal' : 'rate', scope.terminalId ?? scope.currency, before, { rate: after!.rate });
  });
  return (await repo.findSetting(ctx.db, scope.terminalId, scope.currency))!;
}

/** Asks for a feed's fetch now (the console's "refresh now"); who asked is in the audit log. */
export async function refreshNow(ctx: AppContext, scope: RateScope, record: AuditRecorder): Promise<void> {
  await transaction(ctx.db, async (tx) => {
    const setting = await repo.lockSetting(tx, scope.terminalId, scope.currency);
    if (setting?.mode !== 'feed') {
      throw new DomainError('NOT_FOUND', `The ${scope.currency} rate${scope.terminalId ? ' of this terminal' : ''} is not kept by a feed`);
    }
    await repo.dueNow(tx, setting.id);
    await record(tx, 'rate.refresh_now', scope.terminalId ? 'terminal' : 'rate', scope.terminalId ?? scope.currency, null, { currency: scope.currency });
  });
  await scheduleRefresh(ctx.db, new Date());
}

export const REFRESH_TASK = 'rates_refresh';

/** Runs the refresh job at `at` (sooner when it is already scheduled later). */
export async function scheduleRefresh(db: Db, at: Date): Promise<void> {
  await repo.addRefreshJob(db, REFRESH_TASK, at);
}

/** What one source gave in a fetch, as the refresh's sample keeps it. */
interface SourceSample {
  source: string;
  figure?: string;
  left_out?: boolean;
  error?: string;
  used?: string[];
  adverts?: (Advert & { left_out?: string })[];
}

/** Counts a fetch of one source for /metrics. */
export type FeedCounter = (source: string, outcome: 'ok' | 'error') => void;

/**
 * One look of the refresh job: fetches every feed that is due (leased, so that one instance
 * fetches each) and records what each gave. Returns how many feeds were fetched.
 */
export async function refreshDueFeeds(ctx: AppContext, count: FeedCounter): Promise<number> {
  const due = await repo.leaseDueFeeds(ctx.db, FEEDS_PER_LOOK, LEASE_SECONDS);
  await Promise.all(
    due.map((setting) =>
      refreshFeed(ctx, setting, count).catch((err: unknown) =>
        ctx.log.error({ err, currency: setting.currency, terminal_id: setting.terminal_id }, 'rate refresh failed'),
      ),
    ),
  );
  return due.length;
}

/** The seconds between fetches of a setting: never so far apart that the rate ages out between two. */
function intervalOf(setting: repo.RateSettingRow): number {
  return Math.max(5, Math.min(setting.refresh_seconds, Math.floor(setting.max_age_seconds / 2)));
}

async function fetchSource(source: SourceName, options: Record<string, unknown>, currency: string, signal: AbortSignal): Promise<SourceSample> {
  try {
    const side = options.side === 'sell' ? 'sell' : 'buy';
    const adverts = await sourceOf(source).fetchAdverts({ currency, side, options, signal });
    const made = sourceFigure(adverts, side, figureRules(options));
    return { source, figure: made.figure, used: made.used, adverts: made.adverts };
  } catch (err) {
    return { source, error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Fetches one feed's sources at once, makes the figure (rates/figure.ts), and records the
 * refresh: a new rate, the same rate confirmed, a jump held for a person (max_jump_percent), or a
 * failure (retried sooner, backing off to the refresh interval). A result whose setting changed
 * meanwhile is dropped.
 */
async function refreshFeed(ctx: AppContext, setting: repo.RateSettingRow, count: FeedCounter): Promise<void> {
  const signal = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const wanted = [
    { source: setting.source as SourceName, options: setting.options },
    ...setting.cross_check.map((c) => ({ ...c, source: c.source as SourceName })),
  ];
  const samples = await Promise.all(wanted.map((w) => fetchSource(w.source, w.options, setting.currency, signal)));
  for (const s of samples) count(s.source, s.error ? 'error' : 'ok');
  const answered = samples.filter((s): s is SourceSample & { figure: string } => s.figure !== undefined);
  const interval = intervalOf(setting);
  await transaction(ctx.db, async (tx) => {
    const locked = await repo.lockSettingAt(tx, setting.id, setting.version);
    if (!locked) return;
    const base = { setting: locked, source: locked.source, markup_percent: locked.markup_percent, actor: null };
    if (answered.length === 0) {
      const error = samples.map((s) => s.error).join('; ');
      await repo.insertRefresh(tx, { ...base, kind: 'failed', figure: null, rate: null, gave_rate: false, sample: { sources: samples }, error });
      const retry = Math.min(interval, 5 * 2 ** Math.min(locked.failures, 10));
      await repo.finishFetch(tx, locked, { ok: false, error, retryInSeconds: retry }, interval);
      ctx.log.warn({ currency: locked.currency, terminal_id: locked.terminal_id, error, failures: locked.failures + 1 }, 'rate feed gave no figure');
      return;
    }
    const combined = combine(
      answered.map((s): SourceResult => ({ source: s.source, figure: s.figure })),
      Number(locked.max_spread_percent),
    );
    const sample = {
      sources: samples.map((s) => ({ ...s, left_out: combined.results.find((r) => r.source === s.source && r.figure === s.figure)?.left_out })),
    };
    const outliers = combined.results.filter((r) => r.left_out).map((r) => r.source);
    if (outliers.length > 0) {
      ctx.log.warn(
        { currency: locked.currency, terminal_id: locked.terminal_id, left_out: outliers, figures: combined.results },
        'a rate source disagreed with the others and was left out',
      );
    }
    const rate = withMarkup(combined.figure, locked.markup_percent);
    const jump =
      locked.max_jump_percent !== null && locked.figure !== null && distancePercent(money(combined.figure), money(locked.figure)).gt(locked.max_jump_percent);
    if (jump) {
      const held = await repo.insertRefresh(tx, { ...base, kind: 'held', figure: combined.figure, rate, gave_rate: false, sample, error: null });
      await repo.finishFetch(tx, locked, { ok: true, heldRefreshId: held.id }, interval);
      ctx.log.warn(
        { currency: locked.currency, terminal_id: locked.terminal_id, from: locked.figure, to: combined.figure, max_jump_percent: locked.max_jump_percent },
        'rate jump held for a person (accept or keep it on the Rates screen)',
      );
      return;
    }
    const same =
      locked.rate !== null && locked.figure !== null && money(locked.rate).eq(rate) && money(locked.figure).eq(combined.figure) && locked.refresh_id !== null;
    const refresh = await repo.insertRefresh(tx, { ...base, kind: 'fetched', figure: combined.figure, rate, gave_rate: !same, sample, error: null });
    if (same) await repo.confirmRate(tx, locked.id);
    else await repo.applyRefresh(tx, locked.id, refresh, 'now');
    await repo.finishFetch(tx, locked, { ok: true, heldRefreshId: null }, interval);
  });
}

/** A setting's refreshes of the last `hours` (the chart) and the last sample's adverts. */
export async function history(ctx: AppContext, scope: RateScope, hours: number) {
  const setting = await repo.findSetting(ctx.db, scope.terminalId, scope.currency);
  if (!setting) throw new DomainError('NOT_FOUND', `There is no ${scope.currency} rate${scope.terminalId ? ' of this terminal' : ''}`);
  const since = new Date(Date.now() - hours * 3_600_000);
  const [refreshes, last] = await Promise.all([repo.listRefreshes(ctx.db, setting.id, since), repo.lastSample(ctx.db, setting.id)]);
  return { setting, refreshes, last };
}

export async function getRefresh(ctx: AppContext, id: string): Promise<repo.RefreshRow> {
  const refresh = /^\d{1,18}$/.test(id) ? await repo.findRefresh(ctx.db, id) : undefined;
  if (!refresh) throw new DomainError('NOT_FOUND', `There is no rate refresh ${id}`);
  return refresh;
}

export const listSettings = (ctx: AppContext, terminalId: string | null) => repo.listSettings(ctx.db, terminalId);

/** The state of a setting in a word: what the console shows and what the operator must do. */
export function stateOf(s: repo.RateSettingView): 'manual' | 'markup' | 'fresh' | 'stale' | 'waiting' | 'held' {
  if (s.mode === 'manual') return 'manual';
  if (s.mode === 'markup') return 'markup';
  if (s.held_refresh_id) return 'held';
  if (s.rate === null) return s.failures > 0 ? 'stale' : 'waiting';
  return isStale(s) ? 'stale' : 'fresh';
}

/** A feed's rate older than its max age (or none yet): creates that need it are refused. */
export function isStale(s: repo.RateSettingView): boolean {
  return s.mode === 'feed' && (s.rate === null || s.age_seconds === null || s.age_seconds >= s.max_age_seconds);
}

/** A setting as the operator API shows it (DESIGN.md: `{currency, rate, source, markup_percent, updated_at, stale}` and more). */
export function toRate(s: repo.RateSettingView) {
  const num = (v: string | null) => (v === null ? null : Number(v));
  return {
    currency: s.currency,
    rate: num(s.rate),
    source: s.source,
    markup_percent: Number(s.markup_percent),
    updated_at: s.fetched_at && s.mode === 'feed' ? s.fetched_at : s.updated_at,
    stale: isStale(s) || (s.mode === 'feed' && s.rate === null),
    mode: s.mode,
    state: stateOf(s),
    figure: num(s.figure),
    payout_markup_percent: num(s.payout_markup_percent),
    refresh_seconds: s.mode === 'feed' ? s.refresh_seconds : null,
    max_age_seconds: s.mode === 'feed' ? s.max_age_seconds : null,
    max_spread_percent: s.mode === 'feed' ? Number(s.max_spread_percent) : null,
    max_jump_percent: num(s.max_jump_percent),
    options: s.options,
    cross_check: s.cross_check,
    fetched_at: s.fetched_at,
    age_seconds: s.age_seconds === null ? null : Math.max(0, Math.floor(s.age_seconds)),
    refresh_id: s.refresh_id === null ? null : String(s.refresh_id),
    failures: s.failures,
    last_error: s.last_error,
    held: s.held_refresh_id ? { refresh_id: String(s.held_refresh_id), rate: num(s.held_rate), figure: num(s.held_figure), at: s.held_at } : null,
  };
}

/** A rate a terminal prices with, as the operator API shows it. */
export function toEffective(row: repo.RateQuoteRow) {
  return {
    currency: row.currency,
    rate: row.rate === null ? null : Number(row.rate),
    payout_rate: row.payout_rate === null ? null : Number(row.payout_rate),
    source: row.source,
    stale: !isUsable(toQuote(row), Date.now()),
    refresh_id: row.refresh_id,
  };
}

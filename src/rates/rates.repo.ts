import { prepared, type Queryable, type Tx } from '../db/pool.js';

/** A rate setting (migration 038): the currency's own (terminal_id null) or a terminal's. */
export interface RateSettingRow {
  id: string;
  terminal_id: string | null;
  currency: string;
  mode: 'manual' | 'feed' | 'markup';
  rate: string | null;
  figure: string | null;
  source: string | null;
  options: Record<string, unknown>;
  cross_check: { source: string; options: Record<string, unknown> }[];
  markup_percent: string;
  payout_markup_percent: string | null;
  refresh_seconds: number;
  max_age_seconds: number;
  max_spread_percent: string;
  max_jump_percent: string | null;
  fetched_at: Date | null;
  /** bigint, read as a number (db/pool.ts). */
  refresh_id: number | null;
  held_refresh_id: number | null;
  next_refresh_at: Date | null;
  failures: number;
  last_error: string | null;
  version: number;
  updated_at: Date;
}

/** A rate setting with what the console shows beside it: the jump held for a person, and the age now. */
export interface RateSettingView extends RateSettingRow {
  /** Seconds since `fetched_at` (null: never fetched, or manual). */
  age_seconds: number | null;
  held_rate: string | null;
  held_figure: string | null;
  held_at: Date | null;
}

const VIEW_COLUMNS = `r.*, extract(epoch FROM now() - r.fetched_at)::float8 AS age_seconds,
  h.rate AS held_rate, h.figure AS held_figure, h.at AS held_at`;
const VIEW_FROM = 'rates r LEFT JOIN rate_refreshes h ON h.id = r.held_refresh_id';

/** The currency's own settings (terminalId null) or a terminal's, by currency. */
export async function listSettings(db: Queryable, terminalId: string | null): Promise<RateSettingView[]> {
  const { rows } = await db.query<RateSettingView>(`SELECT ${VIEW_COLUMNS} FROM ${VIEW_FROM} WHERE r.terminal_id IS NOT DISTINCT FROM $1 ORDER BY r.currency`, [
    terminalId,
  ]);
  return rows;
}

export async function findSetting(db: Queryable, terminalId: string | null, currency: string): Promise<RateSettingView | undefined> {
  const { rows } = await db.query<RateSettingView>(`SELECT ${VIEW_COLUMNS} FROM ${VIEW_FROM} WHERE r.terminal_id IS NOT DISTINCT FROM $1 AND r.currency = $2`, [
    terminalId,
    currency,
  ]);
  return rows[0];
}

/** The setting locked for a change in `tx`. */
export async function lockSetting(tx: Tx, terminalId: string | null, currency: string): Promise<RateSettingRow | undefined> {
  const { rows } = await tx.query<RateSettingRow>('SELECT * FROM rates WHERE terminal_id IS NOT DISTINCT FROM $1 AND currency = $2 FOR UPDATE', [
    terminalId,
    currency,
  ]);
  return rows[0];
}

/** What a setting is to become; the rest of its row is the refresh job's. */
export interface SettingInput
  extends Pick<
    RateSettingRow,
    | 'mode'
    | 'rate'
    | 'figure'
    | 'source'
    | 'options'
    | 'cross_check'
    | 'markup_percent'
    | 'payout_markup_percent'
    | 'refresh_seconds'
    | 'max_age_seconds'
    | 'max_spread_percent'
    | 'max_jump_percent'
    | 'fetched_at'
  > {
  /** Fetch it at the job's next look (a new feed); otherwise a feed keeps its schedule. */
  next_refresh_now: boolean;
}

/** Creates or replaces a setting (its version bumped: a fetch begun before is not recorded). */
export async function saveSetting(tx: Tx, terminalId: string | null, currency: string, s: SettingInput): Promise<RateSettingRow> {
  const values = [
    terminalId,
    currency,
    s.mode,
    s.rate,
    s.figure,
    s.source,
    JSON.stringify(s.options),
    JSON.stringify(s.cross_check),
    s.markup_percent,
    s.payout_markup_percent,
    s.refresh_seconds,
    s.max_age_seconds,
    s.max_spread_percent,
    s.max_jump_percent,
    s.fetched_at,
    s.next_refresh_now,
  ];
  const set = `mode = $3, rate = $4, figure = $5, source = $6, options = $7, cross_check = $8, markup_percent = $9,
     payout_markup_percent = $10, refresh_seconds = $11, max_age_seconds = $12, max_spread_percent = $13,
     max_jump_percent = $14, fetched_at = $15,
     next_refresh_at = CASE WHEN $3 <> 'feed' THEN NULL WHEN $16 THEN now() ELSE coalesce(next_refresh_at, now()) END,
     failures = 0, last_error = NULL, held_refresh_id = NULL, refresh_id = NULL, updated_at = now()`;
  const updated = await tx.query<RateSettingRow>(
    `UPDATE rates SET ${set}, version = version + 1 WHERE terminal_id IS NOT DISTINCT FROM $1 AND currency = $2 RETURNING *`,
    values,
  );
  if (updated.rows[0]) return updated.rows[0];
  const { rows } = await tx.query<RateSettingRow>(
    `INSERT INTO rates (terminal_id, currency, mode, rate, figure, source, options, cross_check, markup_percent, payout_markup_percent,
                        refresh_seconds, max_age_seconds, max_spread_percent, max_jump_percent, fetched_at, next_refresh_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, CASE WHEN $3 = 'feed' THEN now() END)
     RETURNING *`,
    values.slice(0, 15),
  );
  return rows[0]!;
}

export async function deleteSetting(tx: Tx, terminalId: string, currency: string): Promise<RateSettingRow | undefined> {
  const { rows } = await tx.query<RateSettingRow>('DELETE FROM rates WHERE terminal_id = $1 AND currency = $2 RETURNING *', [terminalId, currency]);
  return rows[0];
}

export type RefreshKind = 'manual' | 'settings' | 'fetched' | 'held' | 'failed' | 'accepted' | 'kept';

export interface NewRefresh {
  setting: Pick<RateSettingRow, 'id' | 'terminal_id' | 'currency'>;
  kind: RefreshKind;
  source: string | null;
  figure: string | null;
  markup_percent: string | null;
  rate: string | null;
  gave_rate: boolean;
  sample: unknown;
  error: string | null;
  actor: string | null;
}

export async function insertRefresh(db: Queryable, r: NewRefresh): Promise<RefreshRow> {
  const { rows } = await db.query<RefreshRow>(
    `INSERT INTO rate_refreshes (rate_id, terminal_id, currency, kind, source, figure, markup_percent, rate, gave_rate, sample, error, actor)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING *`,
    [
      r.setting.id,
      r.setting.terminal_id,
      r.setting.currency,
      r.kind,
      r.source,
      r.figure,
      r.markup_percent,
      r.rate,
      r.gave_rate,
      r.sample === null ? null : JSON.stringify(r.sample),
      r.error,
      r.actor,
    ],
  );
  return rows[0]!;
}

export interface RefreshRow {
  id: number;
  rate_id: string | null;
  terminal_id: string | null;
  currency: string;
  at: Date;
  kind: RefreshKind;
  source: string | null;
  figure: string | null;
  markup_percent: string | null;
  rate: string | null;
  gave_rate: boolean;
  sample: unknown;
  error: string | null;
  actor: string | null;
}

/** The setting's rate becomes `refresh`'s (figure, rate; fetched now or at the refresh). */
export async function applyRefresh(tx: Tx, settingId: string, refresh: RefreshRow, fetchedAt: Date | 'now'): Promise<RateSettingRow> {
  const { rows } = await tx.query<RateSettingRow>(
    `UPDATE rates SET rate = $2, figure = $3, refresh_id = $4, fetched_at = ${fetchedAt === 'now' ? 'now()' : '$5'},
            held_refresh_id = NULL, updated_at = now()
      WHERE id = $1 RETURNING *`,
    fetchedAt === 'now' ? [settingId, refresh.rate, refresh.figure, refresh.id] : [settingId, refresh.rate, refresh.figure, refresh.id, fetchedAt],
  );
  return rows[0]!;
}

/** The feed gave the same rate again: it is fresh from now, and a jump it held is forgotten. */
export async function confirmRate(tx: Tx, settingId: string): Promise<void> {
  await tx.query('UPDATE rates SET fetched_at = now(), held_refresh_id = NULL WHERE id = $1', [settingId]);
}

/** The feed is fetched at the refresh job's next look. */
export async function dueNow(db: Queryable, settingId: string): Promise<void> {
  await db.query("UPDATE rates SET next_refresh_at = now() WHERE id = $1 AND mode = 'feed'", [settingId]);
}

/** Runs the refresh job (one job, keyed) at `at`, or sooner where it is already due sooner. */
export async function addRefreshJob(db: Queryable, task: string, at: Date): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job($1, '{}'::json, job_key => $1, run_at => least($2::timestamptz,
       coalesce((SELECT j.run_at FROM graphile_worker.jobs j WHERE j.key = $1 AND j.locked_at IS NULL), $2::timestamptz)))`,
    [task, at],
  );
}

/** A person vouches for the setting's current rate (a held jump kept): it is fresh again from now. */
export async function keepRate(tx: Tx, settingId: string): Promise<RateSettingRow> {
  const { rows } = await tx.query<RateSettingRow>('UPDATE rates SET fetched_at = now(), held_refresh_id = NULL, updated_at = now() WHERE id = $1 RETURNING *', [
    settingId,
  ]);
  return rows[0]!;
}

/**
 * Feed settings whose fetch is due, leased for `leaseSeconds` (their next_refresh_at moved on):
 * one instance fetches each, the others skip it. SKIP LOCKED: a setting being changed is left for
 * the next look.
 */
export async function leaseDueFeeds(db: Queryable, limit: number, leaseSeconds: number): Promise<RateSettingRow[]> {
  const { rows } = await db.query<RateSettingRow>(
    // MATERIALIZED: chosen once, never rescanned by the plan (see expireDuePayments).
    `WITH due AS MATERIALIZED (
       SELECT id FROM rates WHERE mode = 'feed' AND next_refresh_at <= now()
        ORDER BY next_refresh_at LIMIT $1 FOR UPDATE SKIP LOCKED)
     UPDATE rates r SET next_refresh_at = now() + make_interval(secs => $2)
       FROM due
      WHERE r.id = due.id
     RETURNING r.*`,
    [limit, leaseSeconds],
  );
  return rows;
}

/** Seconds until the next feed is due (null: no feed). */
export async function secondsToNextFeed(db: Queryable): Promise<number | null> {
  const { rows } = await db.query<{ seconds: number | null }>(
    "SELECT extract(epoch FROM min(next_refresh_at) - now())::float8 AS seconds FROM rates WHERE mode = 'feed'",
  );
  return rows[0]?.seconds ?? null;
}

/**
 * The fetch of `setting` (as leased, at `version`) is recorded: the setting's bookkeeping after
 * it. False when the setting changed or went meanwhile (the fetch is then forgotten).
 */
export async function finishFetch(
  tx: Tx,
  setting: Pick<RateSettingRow, 'id' | 'version'>,
  outcome: { ok: true; heldRefreshId: number | null } | { ok: false; error: string; retryInSeconds: number },
  refreshSeconds: number,
): Promise<boolean> {
  const { rowCount } = outcome.ok
    ? await tx.query(
        `UPDATE rates SET failures = 0, last_error = NULL, next_refresh_at = now() + make_interval(secs => $3),
                held_refresh_id = coalesce($4, held_refresh_id)
          WHERE id = $1 AND version = $2`,
        [setting.id, setting.version, refreshSeconds, outcome.heldRefreshId],
      )
    : await tx.query(
        `UPDATE rates SET failures = failures + 1, last_error = $3, next_refresh_at = now() + make_interval(secs => $4)
          WHERE id = $1 AND version = $2`,
        [setting.id, setting.version, outcome.error, outcome.retryInSeconds],
      );
  return (rowCount ?? 0) > 0;
}

/** The setting locked at `version` (undefined when it changed since): a fetch's result goes in under this lock. */
export async function lockSettingAt(tx: Tx, id: string, version: number): Promise<RateSettingRow | undefined> {
  const { rows } = await tx.query<RateSettingRow>('SELECT * FROM rates WHERE id = $1 AND version = $2 FOR UPDATE', [id, version]);
  return rows[0];
}

/** A setting's refreshes since `since`, oldest first, without their samples (the chart). */
export async function listRefreshes(db: Queryable, settingId: string, since: Date): Promise<Omit<RefreshRow, 'sample'>[]> {
  const { rows } = await db.query<Omit<RefreshRow, 'sample'>>(
    `SELECT id, rate_id, terminal_id, currency, at, kind, source, figure, markup_percent, rate, gave_rate, error, actor
       FROM rate_refreshes WHERE rate_id = $1 AND at >= $2 ORDER BY at, id`,
    [settingId, since],
  );
  return rows;
}

export async function findRefresh(db: Queryable, id: number | string): Promise<RefreshRow | undefined> {
  const { rows } = await db.query<RefreshRow>('SELECT * FROM rate_refreshes WHERE id = $1', [id]);
  return rows[0];
}

/** The last fetch of a setting that saw adverts (its sample), if any. */
export async function lastSample(db: Queryable, settingId: string): Promise<RefreshRow | undefined> {
  const { rows } = await db.query<RefreshRow>(
    "SELECT * FROM rate_refreshes WHERE rate_id = $1 AND kind IN ('fetched', 'held') ORDER BY at DESC, id DESC LIMIT 1",
    [settingId],
  );
  return rows[0];
}

/** Refreshes that never gave a rate, older than `hours`, go (a payment can name only one that gave its rate). */
export async function purgeRefreshes(db: Queryable, hours: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM rate_refreshes f WHERE NOT f.gave_rate AND f.at < now() - make_interval(hours => $1)
        AND NOT EXISTS (SELECT 1 FROM rates r WHERE r.held_refresh_id = f.id)`,
    [hours],
  );
  return rowCount ?? 0;
}

/**
 * What a terminal prices with in each currency, as rows of (currency, rate, payout_rate as text,
 * fresh_until in epoch seconds or null for a rate that does not age, refresh_id, source), over the
 * given placeholders: a terminal id, and a text[] of currencies or null for every currency.
 * The terminal's own setting where it has one — its manual rate, its own feed, or the currency's
 * figure with its own markup — otherwise the currency's. A rate a feed has not given yet is a row
 * with a null rate (answered as stale, not as missing).
 */
export function effectiveRatesSql(terminalId: string, currencies: string | null): string {
  const only = (alias: string) => (currencies ? `AND ${alias}.currency = ANY(${currencies}::text[])` : '');
  const fresh = (x: string) => `CASE WHEN ${x}.mode = 'feed' THEN coalesce(extract(epoch FROM ${x}.fetched_at) + ${x}.max_age_seconds, 0) END::float8`;
  const priced = (figure: string, markup: string) => `round(${figure} * (1 + ${markup} / 100), 8)::text`;
  const payout = (x: string) => `coalesce(${x}.payout_markup_percent, ${x}.markup_percent)`;
  // Three kinds of row, one statement each: the terminal's own rate (manual or its feed), the
  // currency's figure with the terminal's markup, and the currency's rate where the terminal has
  // no setting. Each part reads one index (the terminal's, the currency's).
  return `SELECT t.currency, t.rate::text AS rate, ${priced('t.figure', payout('t'))} AS payout_rate, ${fresh('t')} AS fresh_until,
                 t.refresh_id::text AS refresh_id, t.source
            FROM rates t WHERE t.terminal_id = ${terminalId} AND t.mode <> 'markup' ${only('t')}
          UNION ALL
          SELECT t.currency, ${priced('g.figure', 't.markup_percent')}, ${priced('g.figure', payout('t'))}, ${fresh('g')},
                 g.refresh_id::text, g.source
            FROM rates t JOIN rates g ON g.terminal_id IS NULL AND g.currency = t.currency
           WHERE t.terminal_id = ${terminalId} AND t.mode = 'markup' ${only('t')}
          UNION ALL
          SELECT g.currency, g.rate::text, ${priced('g.figure', payout('g'))}, ${fresh('g')}, g.refresh_id::text, g.source
            FROM rates g
           WHERE g.terminal_id IS NULL ${only('g')}
             AND NOT EXISTS (SELECT 1 FROM rates t WHERE t.terminal_id = ${terminalId} AND t.currency = g.currency)`;
}

/** A terminal's rate in one currency as effectiveRatesSql gives it. */
export interface RateQuoteRow {
  currency: string;
  rate: string | null;
  payout_rate: string | null;
  fresh_until: number | null;
  refresh_id: string | null;
  source: string | null;
}

/** effectiveRatesSql for one terminal; `currencies` null: every currency. */
export async function effectiveRates(db: Queryable, terminalId: string, currencies: string[] | null): Promise<RateQuoteRow[]> {
  const { rows } = await db.query<RateQuoteRow>(
    prepared(effectiveRatesSql('$1', currencies ? '$2' : null), currencies ? [terminalId, currencies] : [terminalId]),
  );
  return rows;
}

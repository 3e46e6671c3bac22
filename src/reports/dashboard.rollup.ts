import type { Db, Queryable } from '../db/pool.js';
import { transaction } from '../db/pool.js';
import { SETTLED_INSTANT_SQL } from '../ledger/system-totals.js';

/**
 * The dashboard's roll-up (migration 063): the payments created before `upto` summed per minute of
 * creation and per hour, per terminal, per executor and currency, with the completed ones' times to
 * complete kept whole; the dashboard reads these for its window before `upto`, the completions
 * made since (by their pay-in postings) and the payments created since (dashboard.repo.ts).
 *
 * A row counts a payment as completed when it completed before `upto` (completed_at is its
 * completing transaction's start). A run moves `upto` on to the settled instant (the oldest open
 * transaction's start: no payment can be created or completed behind it later) and sums again
 * every minute that gained a payment or a completion in between, then those minutes' hours, and
 * the hours that closed meanwhile. Creates and completions write nothing for it.
 */

/** How far back the roll-up reaches: the day window (24 hours to the end of the current quarter) and a margin. */
export const ROLLUP_HOURS = 25;

/** pg_try_advisory_xact_lock's key: one roll-up at a time (the job of every instance, the dashboards). */
const LOCK_KEY = 0x0da5_6063;

/** Minutes and hours as date_bin bins them: UTC, whatever the session's time zone. */
const ORIGIN = `timestamptz '2000-01-01 00:00:00+00'`;

export interface RollupState {
  /** Both as PostgreSQL's text, to the microsecond. */
  covered_from: string;
  upto: string;
  /** covered_from in Unix milliseconds (a whole hour). */
  covered_from_ms: number;
}

/** The roll-up's extent, in the caller's snapshot; undefined before its first run. */
export async function rollupState(db: Queryable): Promise<RollupState | undefined> {
  const { rows } = await db.query<RollupState>(
    `SELECT covered_from::text, upto::text, (extract(epoch FROM covered_from) * 1000)::float8 AS covered_from_ms FROM dashboard_rollup_state`,
  );
  return rows[0];
}

/**
 * Brings the roll-up up to the settled instant. With `wait` false (the dashboard's own call) it
 * returns false at once when another run holds the lock: the dashboard then reads the payments
 * since the last run itself. Returns whether it ran.
 */
export async function refreshDashboardRollup(db: Db, options: { wait?: boolean } = {}): Promise<boolean> {
  // In a statement of its own, before the transaction's: see SETTLED_INSTANT_SQL.
  const until = (await db.query<{ at: string }>(`SELECT s.at::text AS at FROM (${SETTLED_INSTANT_SQL}) s`)).rows[0]!.at;
  return transaction(db, async (tx) => {
    if (options.wait) await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    else if (!(await tx.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [LOCK_KEY])).rows[0]!.ok) return false;
    const coveredFrom = (
      await tx.query<{ at: string }>(`SELECT date_bin('1 hour', $1::timestamptz - make_interval(hours => $2), ${ORIGIN})::text AS at`, [until, ROLLUP_HOURS])
    ).rows[0]!.at;
    const state = await rollupState(tx);
    let minutes: string[];
    let hours: string[];
    const full = !state || (await tx.query<{ gap: boolean }>('SELECT $1::timestamptz < $2::timestamptz AS gap', [state.upto, coveredFrom])).rows[0]!.gap;
    if (full) {
      // First run, or none for longer than the roll-up reaches: every minute and closed hour of it.
      await tx.query('DELETE FROM dashboard_rollup');
      ({ minutes, hours } = (
        await tx.query<{ minutes: string[]; hours: string[] }>(
          `SELECT array(SELECT m::text FROM generate_series($1::timestamptz, $2::timestamptz, interval '1 minute') m WHERE m < $2) AS minutes,
                  array(SELECT h::text FROM generate_series($1::timestamptz, $2::timestamptz, interval '1 hour') h WHERE h + interval '1 hour' <= $2) AS hours`,
          [coveredFrom, until],
        )
      ).rows[0]!);
    } else {
      if ((await tx.query<{ later: boolean }>('SELECT $1::timestamptz <= $2::timestamptz AS later', [until, state.upto])).rows[0]!.later) return true;
      // The minutes of the payments created since the last run (payments_created), and of those
      // created before it and completed since (their pay-ins: ledger_transactions_created); then
      // the closed hours of these minutes, and the hours that closed since.
      ({ minutes, hours } = (
        await tx.query<{ minutes: string[]; hours: string[] }>(
          `WITH m AS (
             SELECT DISTINCT date_bin('1 minute', p.created_at, ${ORIGIN}) AS at
               FROM payments p WHERE p.created_at >= $1 AND p.created_at < $2
             UNION
             SELECT date_bin('1 minute', p.created_at, ${ORIGIN})
               FROM ledger_transactions x JOIN payments p ON p.id = x.ref_id
              WHERE x.kind = 'payin' AND x.created_at >= $1 AND x.created_at < $2 AND p.created_at >= $3 AND p.created_at < $1
           ), h AS (
             SELECT date_bin('1 hour', m.at, ${ORIGIN}) AS at FROM m
             UNION
             SELECT h FROM generate_series(date_bin('1 hour', $1::timestamptz, ${ORIGIN}), $2::timestamptz, interval '1 hour') h
              WHERE h + interval '1 hour' > $1
           )
           SELECT array(SELECT at::text FROM m ORDER BY at) AS minutes,
                  array(SELECT at::text FROM h WHERE at >= $3 AND at + interval '1 hour' <= $2 ORDER BY at) AS hours`,
          [state.upto, until, coveredFrom],
        )
      ).rows[0]!);
      await tx.query(`DELETE FROM dashboard_rollup WHERE level IN ('minute', 'hour') AND at < $1`, [coveredFrom]);
    }
    if (minutes.length > 0) await sumMinutes(tx, minutes, until);
    if (hours.length > 0) await sumHours(tx, hours);
    await tx.query(
      `INSERT INTO dashboard_rollup_state (covered_from, upto) VALUES ($1, $2)
       ON CONFLICT (one) DO UPDATE SET covered_from = excluded.covered_from, upto = excluded.upto`,
      [coveredFrom, until],
    );
    return true;
  });
}

/**
 * The minutes' rows from their payments created before `until` (test terminals' and test payments
 * left out, as the dashboard leaves them), each minute read through payments_created.
 */
async function sumMinutes(tx: Queryable, minutes: string[], until: string): Promise<void> {
  await tx.query(
    `WITH p AS MATERIALIZED (
       SELECT m.at, p.terminal_id, p.executor_id, p.currency, p.status = 'COMPLETED' AND p.completed_at < $2 AS done, p.received_amount,
              extract(epoch FROM p.completed_at - p.created_at)::float8 AS seconds
         FROM unnest($1::timestamptz[]) AS m(at)
        CROSS JOIN LATERAL (
              SELECT p.terminal_id, p.executor_id, p.currency, p.status, p.created_at, p.completed_at, p.received_amount
                FROM payments p
               WHERE p.created_at >= m.at AND p.created_at < least(m.at + interval '1 minute', $2) AND NOT p.is_test
              OFFSET 0) p
        JOIN terminals t ON t.id = p.terminal_id
       WHERE NOT t.is_test
     ), gone AS (
       DELETE FROM dashboard_rollup r WHERE r.level = 'minute' AND r.at = ANY($1::timestamptz[])
     )
     INSERT INTO dashboard_rollup (level, at, kind, key, currency, created, completed, received, seconds)
     SELECT 'minute', p.at, 's', NULL, '', count(*), count(*) FILTER (WHERE p.done), NULL, '{}' FROM p GROUP BY p.at
     UNION ALL
     SELECT 'minute', p.at, 't', p.terminal_id, p.currency, count(*), count(*) FILTER (WHERE p.done),
            sum(p.received_amount) FILTER (WHERE p.done), coalesce(array_agg(p.seconds) FILTER (WHERE p.done), '{}')
       FROM p GROUP BY p.at, p.terminal_id, p.currency
     UNION ALL
     SELECT 'minute', p.at, 'e', p.executor_id, p.currency, count(*), count(*) FILTER (WHERE p.done),
            sum(p.received_amount) FILTER (WHERE p.done), coalesce(array_agg(p.seconds) FILTER (WHERE p.done), '{}')
       FROM p WHERE p.executor_id IS NOT NULL GROUP BY p.at, p.executor_id, p.currency`,
    [minutes, until],
  );
}

/** The hours' terminal and executor rows from their minutes' (the series reads minutes only). */
async function sumHours(tx: Queryable, hours: string[]): Promise<void> {
  await tx.query(
    `WITH gone AS (
       DELETE FROM dashboard_rollup r WHERE r.level = 'hour' AND r.at = ANY($1::timestamptz[])
     )
     INSERT INTO dashboard_rollup (level, at, kind, key, currency, created, completed, received, seconds)
     SELECT 'hour', h.at, r.kind, r.key, r.currency, sum(r.created), sum(r.completed), sum(r.received), dashboard_seconds_cat(r.seconds)
       FROM unnest($1::timestamptz[]) AS h(at)
       JOIN dashboard_rollup r ON r.level = 'minute' AND r.kind IN ('t', 'e') AND r.at >= h.at AND r.at < h.at + interval '1 hour'
      GROUP BY h.at, r.kind, r.key, r.currency`,
    [hours],
  );
}

/**
 * Forgets the roll-up, so that its next run sums its whole reach again: for payments written with
 * a creation time behind `upto` (bench/history.ts's history, written behind the service's back).
 */
export async function resetDashboardRollup(db: Db): Promise<void> {
  await transaction(db, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.query('DELETE FROM dashboard_rollup');
    await tx.query('DELETE FROM dashboard_rollup_state');
  });
}

import type { Queryable } from '../db/pool.js';
import { LEDGER_CHECK_SETTING } from '../ledger/ledger.service.js';
import type { AlertSettings } from '../settings.js';

/**
 * The figures the alert rules judge (issue 37 item 3), read in one round trip: the same figures
 * feed the in-app rules (src/reports/alerts.ts, every minute) and the gauges of /metrics that
 * docs/alerts.rules.yml judges for those who run Alertmanager, so that the two cannot disagree on
 * what they read — test/alert-rules-sync.test.ts holds them to the same verdicts.
 */
export interface AlertFigures {
  /** Every feed-kept rate: stale (past its max_age_seconds) or holding a jump for a person. */
  rates: { currency: string; terminal_id: string | null; stale: boolean; held: boolean }[];
  /** The last ledger check; undefined when none ever ran. */
  ledger: { ok: boolean; problems: number } | undefined;
  /** Merchants with an endpoint failing now: the most failed attempts in a row of their endpoints. */
  webhooks: { merchant_id: string; merchant_name: string; failures: number }[];
  /** Providers switched on, and whether their circuit breaker is open. */
  providers: { id: string; name: string; open: boolean }[];
  /** Open disputes past their deadline (the support's, else the executor's). */
  disputesOverdue: number;
  /** Live payments created in the conversion window that have ended, and those of them completed. */
  conversion: { ended: number; completed: number };
  /** Executors a rule switched off (off_reason), still off. */
  executorsOff: { id: string; name: string; reason: string }[];
}

/** Reads the figures; `settings` gives the conversion window. */
export async function readAlertFigures(db: Queryable, settings: Pick<AlertSettings, 'conversion_window_minutes'>): Promise<AlertFigures> {
  const { rows } = await db.query<{
    rates: AlertFigures['rates'];
    ledger: string | null;
    webhooks: AlertFigures['webhooks'];
    providers: AlertFigures['providers'];
    disputes_overdue: number;
    conversion: AlertFigures['conversion'];
    executors_off: AlertFigures['executorsOff'];
  }>(
    `SELECT
       (SELECT coalesce(json_agg(json_build_object(
                 'currency', currency, 'terminal_id', terminal_id,
                 'stale', fetched_at IS NULL OR fetched_at < now() - make_interval(secs => max_age_seconds),
                 'held', held_refresh_id IS NOT NULL) ORDER BY currency, terminal_id NULLS FIRST), '[]'::json)
          FROM rates WHERE mode = 'feed') AS rates,
       (SELECT value FROM settings WHERE key = $1) AS ledger,
       (SELECT coalesce(json_agg(json_build_object('merchant_id', w.merchant_id, 'merchant_name', m.name, 'failures', w.failures)
                                 ORDER BY w.merchant_id), '[]'::json)
          FROM (SELECT merchant_id, max(failures) AS failures FROM webhook_endpoints WHERE failures > 0 GROUP BY merchant_id) w
          JOIN merchants m ON m.id = w.merchant_id) AS webhooks,
       (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'open', coalesce(open_until > now(), false)) ORDER BY name), '[]'::json)
          FROM providers WHERE is_active) AS providers,
       (SELECT count(*)::int FROM disputes WHERE status = 'open' AND coalesce(support_due_at, answer_due_at) <= now()) AS disputes_overdue,
       (SELECT json_build_object('ended', count(*)::int,
                                 'completed', count(*) FILTER (WHERE status IN ('COMPLETED', 'COMPLETED_APPEAL'))::int)
          FROM payments
         WHERE created_at > now() - make_interval(mins => $2::int) AND NOT is_test
           AND status NOT IN ('PENDING', 'PROCESSING')) AS conversion,
       (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'reason', off_reason) ORDER BY name), '[]'::json)
          FROM executors WHERE NOT is_active AND off_reason IS NOT NULL) AS executors_off`,
    [LEDGER_CHECK_SETTING, Math.max(1, Math.round(settings.conversion_window_minutes))],
  );
  const row = rows[0]!;
  return {
    rates: row.rates,
    ledger: parseLedger(row.ledger),
    webhooks: row.webhooks,
    providers: row.providers,
    disputesOverdue: row.disputes_overdue,
    conversion: row.conversion,
    executorsOff: row.executors_off,
  };
}

function parseLedger(value: string | null): AlertFigures['ledger'] {
  if (value === null) return undefined;
  try {
    const record = JSON.parse(value) as { ok?: unknown; problems?: unknown };
    return { ok: record.ok === true, problems: Number(record.problems) || 0 };
  } catch {
    return undefined;
  }
}

import type { AuditRecorder } from '../admin/audit.service.js';
import type { AppContext } from '../context.js';
import { transaction } from '../db/pool.js';
import { DomainError } from '../errors.js';
import { enqueuePersonMessage, type StaffRole } from '../notify/outbox.repo.js';
import { type AlertFigures, readAlertFigures } from '../observability/alert-figures.js';
import { ALERT_DEFAULTS, ALERT_SETTINGS_KEY, type AlertSettings, parseAlertSettings, readAlertSettings } from '../settings.js';
import { claimMoment, getSetting, putSetting } from '../settings.repo.js';

/**
 * Staff alert rules (issue 37 item 3): every minute the figures of src/observability/alert-figures.ts
 * are judged, and each rule that holds is told to the staff of its roles by Telegram. The same rules
 * are written for Prometheus in docs/alerts.rules.yml; test/alert-rules-sync.test.ts holds the two
 * to the same verdicts on the same figures.
 */

/** Each rule: the message kind (a person's switch), who is told, and what it says in a line for the operator. */
export const ALERT_RULES = {
  alert_rate_stale: { roles: ['admin', 'support'], about: 'a feed-kept rate is stale, or holds a jump for a person' },
  alert_ledger: { roles: ['admin', 'finance'], about: 'the last ledger check found a problem' },
  alert_webhooks: { roles: ['support'], about: "a merchant's webhook endpoint failed webhook_failures times in a row" },
  alert_provider: { roles: ['admin', 'support'], about: "a provider's circuit breaker is open" },
  alert_disputes_overdue: { roles: ['support'], about: 'open disputes are past their deadline' },
  alert_conversion: {
    roles: ['admin', 'support'],
    about: 'conversion below conversion_min_percent over conversion_window_minutes (with conversion_min_payments ended)',
  },
  alert_executor_off: { roles: ['support'], about: 'a rule switched an executor off' },
} as const satisfies Record<string, { roles: readonly StaffRole[]; about: string }>;

export type AlertKind = keyof typeof ALERT_RULES;

/** One rule holding for one subject (a currency's rate, a merchant, a provider, an executor, or the whole service). */
export interface Firing {
  kind: AlertKind;
  subject: string;
  data: Record<string, unknown>;
}

/** Judges the figures by the rules: what holds now. Pure, so that the sync test can judge figures of its own. */
export function evaluateAlerts(figures: AlertFigures, settings: AlertSettings): Firing[] {
  const fired: Firing[] = [];
  for (const rate of figures.rates) {
    if (!rate.stale && !rate.held) continue;
    fired.push({
      kind: 'alert_rate_stale',
      subject: `${rate.currency}:${rate.terminal_id ?? 'own'}`,
      data: { currency: rate.currency, terminal_id: rate.terminal_id, stale: rate.stale, held: rate.held },
    });
  }
  if (figures.ledger && !figures.ledger.ok) fired.push({ kind: 'alert_ledger', subject: 'check', data: { problems: figures.ledger.problems } });
  for (const endpoint of figures.webhooks) {
    if (endpoint.failures < settings.webhook_failures) continue;
    fired.push({
      kind: 'alert_webhooks',
      subject: endpoint.merchant_id,
      data: { merchant_id: endpoint.merchant_id, merchant: endpoint.merchant_name, failures: endpoint.failures },
    });
  }
  for (const provider of figures.providers) {
    if (provider.open) fired.push({ kind: 'alert_provider', subject: provider.id, data: { provider_id: provider.id, provider: provider.name } });
  }
  if (figures.disputesOverdue > 0) fired.push({ kind: 'alert_disputes_overdue', subject: 'all', data: { count: figures.disputesOverdue } });
  const { ended, completed } = figures.conversion;
  if (ended > 0 && ended >= settings.conversion_min_payments && (completed / ended) * 100 < settings.conversion_min_percent) {
    fired.push({
      kind: 'alert_conversion',
      subject: 'all',
      data: {
        percent: Math.round((completed / ended) * 1000) / 10,
        completed,
        ended,
        min_percent: settings.conversion_min_percent,
        window_minutes: settings.conversion_window_minutes,
      },
    });
  }
  for (const executor of figures.executorsOff) {
    fired.push({ kind: 'alert_executor_off', subject: executor.id, data: { executor_id: executor.id, executor: executor.name, reason: executor.reason } });
  }
  return fired;
}

/**
 * The minute's run: judges the figures and writes each firing to the outbox for the staff of its
 * roles, in one transaction. A rule that still holds tells nobody again until its cooldown has
 * passed since it last told them: each (rule, subject) keeps when it last fired, and a firing is
 * written only when it takes that claim (claimMoment, one row's conditional upsert), so two
 * instances running the job at once write each message once. (The cooldown was once the period
 * number in the event key: a run in a period's last minute and the next run, a minute later, both
 * fired.) Returns the firings judged, whether or not their cooldown let them be told.
 */
export async function runAlerts(ctx: Pick<AppContext, 'db'>, now = new Date()): Promise<Firing[]> {
  const settings = await readAlertSettings(ctx.db);
  const fired = evaluateAlerts(await readAlertFigures(ctx.db, settings), settings);
  if (fired.length === 0) return fired;
  await transaction(ctx.db, async (tx) => {
    for (const firing of fired) {
      // Told at most once a cooldown; the time is the job's, so that a run can be judged at any moment.
      if (!(await claimMoment(tx, `${ALERT_FIRED_PREFIX}${firing.kind}:${firing.subject}`, now, settings.cooldown_minutes))) continue;
      await enqueuePersonMessage(
        tx,
        { roles: ALERT_RULES[firing.kind].roles },
        { kind: firing.kind, eventKey: `alert:${firing.kind.slice('alert_'.length)}:${firing.subject}:${now.getTime()}`, data: firing.data },
      );
    }
  });
  return fired;
}

/** The settings row of when a rule last fired for a subject: `alert_fired:<kind>:<subject>`. */
const ALERT_FIRED_PREFIX = 'alert_fired:';

/** The alert settings and the rules they steer (GET /admin/v1/alerts). */
export async function getAlerts(ctx: AppContext) {
  return toAlerts(await readAlertSettings(ctx.db));
}

function toAlerts(settings: AlertSettings) {
  return {
    settings,
    rules: Object.entries(ALERT_RULES).map(([kind, rule]) => ({ kind, roles: [...rule.roles], about: rule.about })),
  };
}

/** Each setting's bounds: whole numbers, so that a cooldown or a window is never a fraction of a minute. */
const BOUNDS: Record<keyof AlertSettings, { min: number; max: number }> = {
  cooldown_minutes: { min: 1, max: 10_080 },
  webhook_failures: { min: 1, max: 1000 },
  conversion_min_percent: { min: 0, max: 100 },
  conversion_window_minutes: { min: 5, max: 10_080 },
  conversion_min_payments: { min: 1, max: 1_000_000 },
};

/**
 * Changes the alert settings (PUT /admin/v1/alerts): the fields given replace the stored ones,
 * under the setting's lock, audited with before and after in the same transaction.
 */
export async function putAlerts(ctx: AppContext, patch: Partial<AlertSettings>, record: AuditRecorder) {
  for (const [key, value] of Object.entries(patch) as [keyof AlertSettings, number][]) {
    const bounds = BOUNDS[key];
    if (!bounds) continue;
    if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      throw new DomainError('VALIDATION', `${key} must be a whole number from ${bounds.min} to ${bounds.max}`, { [key]: value });
    }
  }
  return transaction(ctx.db, async (tx) => {
    const before = parseAlertSettings(await getSetting(tx, ALERT_SETTINGS_KEY, true));
    const after: AlertSettings = { ...before };
    for (const key of Object.keys(ALERT_DEFAULTS) as (keyof AlertSettings)[]) {
      if (patch[key] !== undefined) after[key] = patch[key];
    }
    await putSetting(tx, ALERT_SETTINGS_KEY, JSON.stringify(after));
    await record(tx, 'settings.alerts', 'settings', ALERT_SETTINGS_KEY, before, after);
    return toAlerts(after);
  });
}

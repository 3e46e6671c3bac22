/*
 * The staff alert rules twice (issue 37 item 4): the service's own (src/reports/alerts.ts, told by
 * Telegram) and docs/alerts.rules.yml for Prometheus. Both judge the same figures here — the
 * service's rules directly, the file's over the /metrics exposition the service renders from those
 * figures — and must fire the same set of rules, scenario by scenario, including figures on each
 * side of every threshold. The file is kept to a subset of YAML and of PromQL read here:
 * `- alert:` items with `expr: <metric> <op> <number>` and a `kassir_rule:` label.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AlertFigures } from '../src/observability/alert-figures.js';
import { ServiceMetrics } from '../src/observability/metrics.js';
import type { QueueState } from '../src/observability/observability.repo.js';
import { ALERT_RULES, evaluateAlerts } from '../src/reports/alerts.js';
import { ALERT_DEFAULTS } from '../src/settings.js';

interface PromRule {
  alert: string;
  metric: string;
  op: string;
  threshold: number;
  kind: string;
}

/** Reads the rules file's subset: each `- alert:` with its `expr:` and `kassir_rule:`. */
function readRules(): PromRule[] {
  const text = readFileSync(new URL('../docs/alerts.rules.yml', import.meta.url), 'utf8');
  const rules: PromRule[] = [];
  let current: Partial<PromRule> | undefined;
  for (const line of text.split('\n')) {
    if (line.trimStart().startsWith('#')) continue;
    const alert = line.match(/^\s*- alert:\s*(\S+)\s*$/);
    if (alert) {
      if (current) rules.push(current as PromRule);
      current = { alert: alert[1]! };
      continue;
    }
    const expr = line.match(/^\s*expr:\s*(.+?)\s*$/);
    if (expr && current) {
      const parts = expr[1]!.match(/^([a-z_:][a-z0-9_:]*)\s*(>=|<=|==|!=|>|<)\s*(-?[0-9.]+)$/);
      if (!parts) throw new Error(`${current.alert}: the expression "${expr[1]}" is outside the subset this test reads (metric op number)`);
      current.metric = parts[1]!;
      current.op = parts[2]!;
      current.threshold = Number(parts[3]);
      continue;
    }
    const kind = line.match(/^\s*kassir_rule:\s*(\S+)\s*$/);
    if (kind && current) current.kind = kind[1]!;
  }
  if (current) rules.push(current as PromRule);
  return rules;
}

/** The samples of the exposition text, by metric name (labels dropped: each rule fires if any series holds). */
function samples(exposition: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of exposition.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})?\s+(\S+)$/);
    if (!match) continue;
    const list = out.get(match[1]!) ?? [];
    list.push(Number(match[2]));
    out.set(match[1]!, list);
  }
  return out;
}

function holds(value: number, op: string, threshold: number): boolean {
  switch (op) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
    case '==':
      return value === threshold;
    default:
      return value !== threshold;
  }
}

function exposition(metrics: ServiceMetrics): Promise<string> {
  return metrics.registry.metrics();
}

/** What Prometheus would fire on the exposition the service renders from `figures`. */
async function prometheusVerdict(rules: PromRule[], figures: AlertFigures): Promise<Set<string>> {
  const metrics = new ServiceMetrics({ runWorker: false });
  // What the scrape's queue query gives for the same rates and ledger check.
  const state: QueueState = {
    jobs: [],
    webhooks: { pending: 0, oldest_seconds: 0 },
    ledgerCheck: figures.ledger && { at: new Date(), ok: figures.ledger.ok, problems: figures.ledger.problems, ms: 10 },
    rates: figures.rates.map((rate) => ({ currency: rate.currency, terminal_id: rate.terminal_id, age_seconds: 5, stale: rate.stale, failures: 0 })),
  };
  metrics.showDatabaseFigures(state, { figures, settings: { ...ALERT_DEFAULTS } });
  const series = samples(await exposition(metrics));
  const fired = new Set<string>();
  for (const rule of rules) {
    if ((series.get(rule.metric) ?? []).some((value) => holds(value, rule.op, rule.threshold))) fired.add(rule.kind);
  }
  return fired;
}

function appVerdict(figures: AlertFigures): Set<string> {
  return new Set(evaluateAlerts(figures, { ...ALERT_DEFAULTS }).map((firing) => firing.kind));
}

const CALM: AlertFigures = {
  rates: [
    { currency: 'RUB', terminal_id: null, stale: false, held: false },
    { currency: 'KZT', terminal_id: null, stale: false, held: false },
  ],
  ledger: { ok: true, problems: 0 },
  webhooks: [],
  providers: [{ id: 'p1', name: 'Alpha', open: false }],
  disputesOverdue: 0,
  conversion: { ended: 40, completed: 30 },
  executorsOff: [],
};

const STORM: AlertFigures = {
  rates: [
    { currency: 'RUB', terminal_id: null, stale: true, held: false },
    { currency: 'KZT', terminal_id: 't1', stale: false, held: true },
  ],
  ledger: { ok: false, problems: 2 },
  webhooks: [{ merchant_id: 'm1', merchant_name: 'Shop', failures: 7 }],
  providers: [{ id: 'p1', name: 'Alpha', open: true }],
  disputesOverdue: 4,
  conversion: { ended: 50, completed: 5 },
  executorsOff: [{ id: 'e1', name: 'Ivan', reason: 'dispute_ratio' }],
};

/** Deterministic figures around every threshold (a small LCG: the same scenarios on every run). */
function* scenarios(count: number): Generator<AlertFigures> {
  let seed = 37;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]!;
  for (let i = 0; i < count; i++) {
    const ended = pick([0, 1, 9, 10, 11, 50, 200]);
    const ratio = pick([0, 0.1, 0.19, 0.2, 0.21, 0.5, 1]);
    yield {
      rates: Array.from({ length: pick([0, 1, 2, 3]) }, (_, n) => ({
        currency: ['RUB', 'KZT', 'AZN'][n]!,
        terminal_id: pick([null, 't1']),
        stale: next() < 0.3,
        held: next() < 0.3,
      })),
      ledger: pick([undefined, { ok: true, problems: 0 }, { ok: false, problems: 1 }]),
      webhooks: Array.from({ length: pick([0, 1, 2]) }, (_, n) => ({ merchant_id: `m${n}`, merchant_name: `Shop ${n}`, failures: pick([1, 2, 3, 4, 10]) })),
      providers: Array.from({ length: pick([0, 1, 2]) }, (_, n) => ({ id: `p${n}`, name: `Provider ${n}`, open: next() < 0.4 })),
      disputesOverdue: pick([0, 0, 1, 5]),
      conversion: { ended, completed: Math.round(ended * ratio) },
      executorsOff: next() < 0.3 ? [{ id: 'e1', name: 'Ivan', reason: 'dispute_ratio' }] : [],
    };
  }
}

describe('docs/alerts.rules.yml and the service’s alert rules', () => {
  const rules = readRules();

  it('the file names every rule of the service, and only those', () => {
    expect(rules.length).toBeGreaterThanOrEqual(Object.keys(ALERT_RULES).length);
    expect(new Set(rules.map((rule) => rule.kind))).toEqual(new Set(Object.keys(ALERT_RULES)));
    // Each expression reads a series the service exposes.
    const metrics = new ServiceMetrics({ runWorker: false });
    metrics.showDatabaseFigures(
      {
        jobs: [],
        webhooks: { pending: 0, oldest_seconds: 0 },
        ledgerCheck: { at: new Date(), ok: true, problems: 0, ms: 1 },
        rates: [{ currency: 'RUB', terminal_id: null, age_seconds: 1, stale: false, failures: 0 }],
      },
      { figures: { ...STORM }, settings: { ...ALERT_DEFAULTS } },
    );
    return exposition(metrics).then((text) => {
      const names = samples(text);
      for (const rule of rules) expect(names.has(rule.metric), `${rule.alert} reads ${rule.metric}`).toBe(true);
    });
  });

  it('the file is written with the default thresholds the service starts with', () => {
    const byKind = (kind: string) => rules.find((rule) => rule.kind === kind)!;
    expect(byKind('alert_webhooks').threshold).toBe(ALERT_DEFAULTS.webhook_failures);
    expect(byKind('alert_conversion').threshold).toBe(ALERT_DEFAULTS.conversion_min_percent / 100);
  });

  it('calm figures: neither fires anything', async () => {
    expect(appVerdict(CALM)).toEqual(new Set());
    expect(await prometheusVerdict(rules, CALM)).toEqual(new Set());
  });

  it('a storm: both fire every rule', async () => {
    const every = new Set(Object.keys(ALERT_RULES));
    expect(appVerdict(STORM)).toEqual(every);
    expect(await prometheusVerdict(rules, STORM)).toEqual(every);
  });

  it('200 scenarios around every threshold: the same verdicts', async () => {
    let firing = 0;
    for (const figures of scenarios(200)) {
      const app = appVerdict(figures);
      expect(await prometheusVerdict(rules, figures), JSON.stringify(figures)).toEqual(app);
      firing += app.size;
    }
    // The scenarios are not all calm: the comparison had something to compare.
    expect(firing).toBeGreaterThan(100);
  });

  it('the comparison can fail: a rule file with another threshold disagrees somewhere', async () => {
    const shifted = rules.map((rule) => (rule.kind === 'alert_webhooks' ? { ...rule, threshold: 5 } : rule));
    let disagreements = 0;
    for (const figures of scenarios(200)) {
      const app = appVerdict(figures);
      const prom = await prometheusVerdict(shifted, figures);
      if ([...app].sort().join() !== [...prom].sort().join()) disagreements++;
    }
    expect(disagreements).toBeGreaterThan(0);
  });
});

/**
 * The risk rules' decisions for the operator (issue 36 item 5): GET /admin/v1/risk/hits (filters,
 * pages, newest first), its CSV export (every row, streamed), the hourly summary for the Risk
 * screen's chart, a payment's timeline carrying its hits (and the merchant's not), the roles that
 * may read them, and the dashboard's lost demand counted by rule. Hits are seeded by SQL as the
 * rules write them (risk_hits, migration 045): the rules themselves are tested where they live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dashboard } from '../src/reports/dashboard.schemas.js';
import { merchantPaymentTimeline, paymentTimeline } from '../src/reports/payments.timeline.js';
import { insertRiskHit } from '../src/risk/hits.repo.js';
import {
  admin,
  adminOk,
  asPerson,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  staffSession,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let shopA: MerchantCredentials;
let shopB: MerchantCredentials;
let paymentId: string;

interface Hit {
  id: string;
  created_at: string;
  rule: string;
  action: string;
  merchant_id: string | null;
  merchant_name: string | null;
  payment_id: string | null;
  inputs: Record<string, unknown>;
  figure: string;
  settled_at: string | null;
}
interface HitList {
  hits: Hit[];
  total: number;
  limit: number;
  offset: number;
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

/** RFC 4180 rows (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && c === '"') quoted = false;
    else if (quoted) field += c;
    else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  shopA = await createMerchant(service.app, { name: 'Alpha' });
  shopB = await createMerchant(service.app, { name: 'Beta' });
  const ivan = await createExecutor(service.app, 'Ivan', { deposit: 1000 });
  await createRequisite(service.app, ivan.id);
  const created = await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount: 1500, method: 'CARD' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  paymentId = created.body.id;

  const db = service.ctx.db;
  // Oldest first: a refused create of Beta two hours ago, a block of Alpha's client an hour ago,
  // then two flags on Alpha's payment (one already settled) and a velocity refusal now.
  await insertRiskHit(db, {
    rule: 'traffic_class',
    action: 'refused',
    merchantId: shopB.merchantId,
    terminalId: shopB.terminalId,
    inputs: { class: 'new', requisite_classes: ['trusted'] },
    figure: 'traffic_class new not in trusted',
    at: minutesAgo(125),
  });
  await insertRiskHit(db, {
    rule: 'block',
    action: 'refused',
    merchantId: shopA.merchantId,
    terminalId: shopA.terminalId,
    inputs: { kind: 'client_id', client_id: '=cmd|calc' },
    figure: 'block client_id =cmd|calc',
    at: minutesAgo(65),
  });
  await insertRiskHit(db, {
    rule: 'receipt_reused',
    action: 'flagged',
    merchantId: shopA.merchantId,
    terminalId: shopA.terminalId,
    paymentId,
    inputs: { sha256: 'ab12', other_payment_id: '00000000-0000-4000-8000-000000000001' },
    figure: 'receipt_reused sha256 ab12 also on 1 other payment',
    at: minutesAgo(3),
  });
  const settled = await insertRiskHit(db, {
    rule: 'payer_name',
    action: 'flagged',
    merchantId: shopA.merchantId,
    paymentId,
    inputs: { sent: 'IVAN P', bank: 'PETR S' },
    figure: 'payer_name "PETR S" ≠ "IVAN P"',
    at: minutesAgo(2),
  });
  await db.query(`UPDATE risk_hits SET settled_at = now(), settled_by = 'ops@kassir.test' WHERE id = $1`, [settled]);
  await insertRiskHit(db, {
    rule: 'velocity',
    action: 'refused',
    merchantId: shopA.merchantId,
    terminalId: shopA.terminalId,
    inputs: { scope: 'client_id', count: 7, window_seconds: 600, max_payments: 5 },
    figure: 'velocity client_id 7 in 600 s > 5',
    at: minutesAgo(1),
  });
});
afterAll(async () => service?.close());

describe('GET /admin/v1/risk/hits', () => {
  it('lists every hit newest first, with its rule, figure, inputs and the merchant’s name', async () => {
    const list = await adminOk<HitList>(service.app, 'GET', '/risk/hits');
    expect(list.total).toBe(5);
    expect(list.hits.map((h) => h.rule)).toEqual(['velocity', 'payer_name', 'receipt_reused', 'block', 'traffic_class']);
    expect(list.hits[0]).toMatchObject({
      action: 'refused',
      merchant_id: shopA.merchantId,
      merchant_name: expect.stringMatching(/^Shop /),
      payment_id: null,
      figure: 'velocity client_id 7 in 600 s > 5',
      inputs: { scope: 'client_id', count: 7, window_seconds: 600, max_payments: 5 },
      settled_at: null,
    });
  });

  it('filters by rule, action, merchant, payment, time and unsettled flags, and pages', async () => {
    const ids = async (query: string) => (await adminOk<HitList>(service.app, 'GET', `/risk/hits?${query}`)).hits.map((h) => h.rule);
    expect(await ids('rule=block')).toEqual(['block']);
    expect(await ids('action=flagged')).toEqual(['payer_name', 'receipt_reused']);
    expect(await ids(`merchant_id=${shopB.merchantId}`)).toEqual(['traffic_class']);
    expect(await ids(`payment_id=${paymentId}`)).toEqual(['payer_name', 'receipt_reused']);
    expect(await ids('unsettled=true')).toEqual(['receipt_reused']);
    expect(await ids(`from=${minutesAgo(70).toISOString()}&to=${minutesAgo(2.5).toISOString()}`)).toEqual(['receipt_reused', 'block']);
    const page = await adminOk<HitList>(service.app, 'GET', '/risk/hits?limit=2&offset=2');
    expect([page.total, page.limit, page.offset, page.hits.map((h) => h.rule)]).toEqual([5, 2, 2, ['receipt_reused', 'block']]);
    const past = await adminOk<HitList>(service.app, 'GET', '/risk/hits?limit=2&offset=10');
    expect([past.total, past.hits]).toEqual([5, []]);
  });

  it('refuses a malformed filter, naming it', async () => {
    for (const [query, name] of [
      ['rule=nonsense', 'rule'],
      ['action=maybe', 'action'],
      ['merchant_id=42', 'merchant_id'],
      ['from=yesterday', 'from'],
      ['unsettled=yes', 'unsettled'],
      ['limit=5000', 'limit'],
    ]) {
      const res = await admin(service.app, 'GET', `/risk/hits?${query}`);
      expect([res.statusCode, res.json().error], query).toEqual([400, 'VALIDATION']);
      expect(res.json().message).toContain(name);
    }
  });
});

describe('GET /admin/v1/risk/hits/export', () => {
  it('answers every matching hit as CSV, newest first, formula-looking text defused', async () => {
    const res = await admin(service.app, 'GET', `/risk/hits/export?merchant_id=${shopA.merchantId}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="risk-hits-\d{4}-\d{2}-\d{2}\.csv"$/);
    const [header, ...rows] = parseCsv(res.body);
    expect(header).toEqual(['time', 'rule', 'action', 'merchant', 'terminal', 'payment', 'payout', 'dispute', 'figure', 'inputs', 'settled', 'settled_by']);
    expect(rows.map((r) => r[1])).toEqual(['velocity', 'payer_name', 'receipt_reused', 'block']);
    const col = (name: string) => header!.indexOf(name);
    const receipt = rows[2]!;
    expect(receipt[col('payment')]).toBe(paymentId);
    expect(receipt[col('terminal')]).toBe('Alpha');
    expect(JSON.parse(receipt[col('inputs')]!)).toEqual({ sha256: 'ab12', other_payment_id: '00000000-0000-4000-8000-000000000001' });
    expect(rows[1]![col('settled')]).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(rows[1]![col('settled_by')]).toBe('ops@kassir.test');
    expect(receipt[col('settled')]).toBe('');
    // A client_id the merchant chose, quoted in the figure, cannot run as a spreadsheet formula.
    expect(rows[3]![col('figure')]).toBe('block client_id =cmd|calc');
    expect(new Date(rows[0]![col('time')]!).getTime()).toBeGreaterThan(new Date(rows[1]![col('time')]!).getTime());
  });

  it('reads past one batch: more hits than a batch holds all come out, once each', async () => {
    await service.ctx.db.query(
      `INSERT INTO risk_hits (created_at, rule, action, merchant_id, inputs, figure)
       SELECT now() - make_interval(secs => 7200 + g), 'velocity', 'refused', $1, jsonb_build_object('n', g), 'velocity bulk ' || g
         FROM generate_series(1, 1203) g`,
      [shopB.merchantId],
    );
    try {
      const res = await admin(service.app, 'GET', `/risk/hits/export?merchant_id=${shopB.merchantId}&rule=velocity`);
      const [, ...rows] = parseCsv(res.body);
      expect(rows).toHaveLength(1203);
      expect(new Set(rows.map((r) => r[8])).size).toBe(1203);
      expect(rows[0]![8]).toBe('velocity bulk 1');
      expect(rows.at(-1)![8]).toBe('velocity bulk 1203');
    } finally {
      await service.ctx.db.query(`DELETE FROM risk_hits WHERE figure LIKE 'velocity bulk %'`);
    }
  });

  it('refuses a malformed filter before the first line', async () => {
    const res = await admin(service.app, 'GET', '/risk/hits/export?payment_id=nope');
    expect([res.statusCode, res.json().error]).toEqual([400, 'VALIDATION']);
  });
});

describe('GET /admin/v1/risk/summary', () => {
  it('counts hits per hour and rule over the window, every hour and rule present', async () => {
    const s = await adminOk<{
      from: string;
      to: string;
      bucket_seconds: number;
      rules: string[];
      series: { at: string; total: number; by_rule: Record<string, number> }[];
      totals: Record<string, number>;
    }>(service.app, 'GET', '/risk/summary?hours=24');
    expect(s.bucket_seconds).toBe(3600);
    expect(s.series).toHaveLength(24);
    expect(new Date(s.to).getTime() % 3_600_000).toBe(0);
    expect(s.rules).toEqual(['block', 'velocity', 'traffic_class', 'receipt_reused', 'reference_reused', 'payer_name']);
    expect(s.totals).toEqual({ block: 1, velocity: 1, traffic_class: 1, receipt_reused: 1, reference_reused: 0, payer_name: 1 });
    expect(s.series.reduce((sum, b) => sum + b.total, 0)).toBe(5);
    for (const bucket of s.series) expect(Object.keys(bucket.by_rule)).toEqual(s.rules);
    // Each hit is in the hour that holds its instant.
    const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000).toISOString();
    const bucketAt = (at: Date) => s.series.find((b) => b.at === hourOf(at))!;
    expect(bucketAt(minutesAgo(125)).by_rule.traffic_class).toBe(1);
    expect(bucketAt(minutesAgo(65)).by_rule.block).toBe(1);

    const one = await adminOk<{ series: unknown[]; totals: Record<string, number> }>(service.app, 'GET', '/risk/summary?hours=1');
    expect(one.series).toHaveLength(1);
    expect(one.totals.traffic_class).toBe(0);
    for (const hours of ['0', '169', 'x']) expect((await admin(service.app, 'GET', `/risk/summary?hours=${hours}`)).statusCode).toBe(400);
  });
});

describe('the payment timeline', () => {
  it('shows the payment’s hits to the operator, and none to the merchant', async () => {
    const full = await adminOk<{ timeline: Record<string, unknown>[] }>(service.app, 'GET', `/payments/${paymentId}/timeline`);
    const hits = full.timeline.filter((item) => item.kind === 'risk_hit');
    expect(hits.map((h) => [h.rule, h.action, h.figure])).toEqual([
      ['receipt_reused', 'flagged', 'receipt_reused sha256 ab12 also on 1 other payment'],
      ['payer_name', 'flagged', 'payer_name "PETR S" ≠ "IVAN P"'],
    ]);
    expect(hits[1]).toMatchObject({ settled_by: 'ops@kassir.test', settled_at: expect.any(String) });
    // The timeline's items stay in time order with the hits among them.
    const times = full.timeline.map((item) => new Date(item.at as string).getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect((await paymentTimeline(service.ctx, paymentId)).timeline.some((item) => item.kind === 'risk_hit')).toBe(true);
    const merchant = await merchantPaymentTimeline(service.ctx, paymentId, shopA.merchantId);
    expect(merchant.timeline.some((item) => item.kind === 'risk_hit')).toBe(false);
    expect(JSON.stringify(merchant)).not.toContain('receipt_reused');
  });
});

describe('who may read hits', () => {
  it('support, finance and admin read the list, the export and the summary', async () => {
    for (const role of ['support', 'finance', 'admin'] as const) {
      const session = await staffSession(service, `${role}-risk@kassir.test`, role);
      for (const url of ['/admin/v1/risk/hits', '/admin/v1/risk/hits/export', '/admin/v1/risk/summary']) {
        const res = await asPerson(service.app, session, 'GET', url);
        expect(res.statusCode, `${role} ${url}`).toBe(200);
      }
    }
  });

  it('no one signed in, and a wrong token, are refused', async () => {
    const anonymous = await service.app.inject({ method: 'GET', url: '/admin/v1/risk/hits' });
    expect(anonymous.statusCode).toBe(401);
    const bearer = await service.app.inject({ method: 'GET', url: '/admin/v1/risk/summary', headers: { authorization: 'Bearer wrong' } });
    expect(bearer.statusCode).toBe(401);
  });
});

describe('the dashboard’s lost demand by rule', () => {
  it('counts refusals by the rule that made them, the pool’s own as null', async () => {
    const rows: [string, string | null, number][] = [
      ['PAY_004', 'block', 2],
      ['PAY_004', 'velocity', 3],
      ['PAY_004', 'traffic_class', 1],
      ['PAY_004', null, 4],
      ['PAY_005', null, 1],
    ];
    for (const [code, rule, count] of rows) {
      await service.ctx.db.query(
        `INSERT INTO payment_refusals (created_at, merchant_id, terminal_id, code, method, bank, currency, amount, risk_rule)
         SELECT now() - interval '1 minute', $1, $2, $3, 'CARD', NULL, 'RUB', 500, $4 FROM generate_series(1, $5)`,
        [shopA.merchantId, shopA.terminalId, code, rule, count],
      );
    }
    const d = await adminOk<Dashboard>(service.app, 'GET', '/dashboard');
    expect(d.lost_demand.total).toBe(11);
    expect(d.lost_demand.by_rule).toEqual([
      { rule: null, count: 5 },
      { rule: 'velocity', count: 3 },
      { rule: 'block', count: 2 },
      { rule: 'traffic_class', count: 1 },
    ]);
    expect(d.lost_demand.rows).toContainEqual({
      code: 'PAY_004',
      method: 'CARD',
      bank: null,
      currency: 'RUB',
      risk_rule: 'velocity',
      count: 3,
      amount: '1500.00',
    });
    expect(d.lost_demand.rows).toContainEqual({ code: 'PAY_004', method: 'CARD', bank: null, currency: 'RUB', risk_rule: null, count: 4, amount: '2000.00' });
  });
});

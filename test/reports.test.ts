/**
 * The operator's reports (issue 17 item 3), GET /admin/v1/reports/merchants and /reports/executors:
 * turnover, executors' rewards and revenue per UTC day, read from the ledger. Payments completed by
 * executors' notifications, with rewards set on the executors, are checked against figures
 * computed here with decimal.js from src/ledger/credit.ts, and the report's sums against the
 * ledger's own totals; the CSV variant against the JSON one; every bad query parameter.
 */
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payinSettlement, payoutReserve, payoutSettlement } from '../src/ledger/credit.js';
import type { ReportFigures } from '../src/reports/reports.service.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  sqlOf,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
} from './helpers.js';

const RATE = '95.5';
let service: TestService;
let shopA: MerchantCredentials;
let shopB: MerchantCredentials;
const executors: Record<string, { id: string; token: string; reward: string; payoutReward: string }> = {};
/** Every completed pay-in and payout: who, and its figures computed here. */
interface Done {
  kind: 'payin' | 'payout';
  merchantId: string;
  executorId: string | null;
  turnover: Decimal;
  /** The pay-in reward, or what a payout's executor was credited. */
  credit: Decimal;
  revenue: Decimal;
}
const done: Done[] = [];
const payin = (merchantId: string, executorId: string, s: ReturnType<typeof payinSettlement>): Done => ({
  kind: 'payin',
  merchantId,
  executorId,
  turnover: s.gross,
  credit: s.reward,
  revenue: s.revenue,
});

const sql = sqlOf(() => service);
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** The figures as the route answers them (the service's own type: the test checks their values, not their names). */
type Figures = ReportFigures;
type Row = Figures & { day: string; merchant_id?: string | null; executor_id?: string | null };
interface Report {
  by: string;
  from: string;
  to: string;
  rows: Row[];
  totals: Figures;
}

/** Completes a payment of `amount` RUB on `shop` while only `executor` is active. */
async function complete(shop: MerchantCredentials, amount: number, executor: string, payinRate: string): Promise<void> {
  const { status, body } = await createPayment(service.app, shop, { ext_id: uniqueExtId(), amount, currency: 'RUB', method: 'CARD' });
  expect(status, JSON.stringify(body)).toBe(200);
  const [row] = await sql<{ requisite_id: string; executor_id: string }>('SELECT requisite_id, executor_id FROM payments WHERE id = $1', [body.id]);
  expect(row!.executor_id).toBe(executors[executor]!.id);
  const res = await service.app.inject({
    method: 'POST',
    url: '/executor/v1/notifications',
    headers: { authorization: `Bearer ${executors[executor]!.token}`, 'content-type': 'application/json' },
    payload: { requisite_id: row!.requisite_id, amount, received_at: new Date().toISOString() },
  });
  expect(res.json()).toMatchObject({ matched: true, payment_id: body.id });
  done.push(payin(shop.merchantId, row!.executor_id, payinSettlement(String(amount), RATE, payinRate, executors[executor]!.reward)));
}

async function activeOnly(name: string): Promise<void> {
  for (const [other, e] of Object.entries(executors)) await adminOk(service.app, 'PATCH', `/executors/${e.id}`, { is_active: other === name });
}

/** Sums the rows of a report per owner (across days): the test's payments may straddle midnight. */
function perOwner(report: Report, key: 'merchant_id' | 'executor_id'): Map<string | null, Figures> {
  const out = new Map<string | null, Figures>();
  for (const row of report.rows) {
    const owner = row[key] ?? null;
    const sum = out.get(owner);
    const figures = { ...row } as Partial<Row>;
    delete figures.day;
    delete figures[key];
    if (!sum) out.set(owner, figures as Figures);
    else for (const k of Object.keys(sum) as (keyof Figures)[]) sum[k] = new Decimal(sum[k]).plus(figures[k]!).toNumber();
  }
  return out;
}

function expected(filter: (d: Done) => boolean): Figures {
  const mine = done.filter(filter);
  const sum = (kind: Done['kind'] | null, f: (d: Done) => Decimal) =>
    mine.filter((d) => kind === null || d.kind === kind).reduce((acc, d) => acc.plus(f(d)), new Decimal(0));
  return {
    payins: mine.filter((d) => d.kind === 'payin').length,
    payin_turnover: sum('payin', (d) => d.turnover).toNumber(),
    payouts: mine.filter((d) => d.kind === 'payout').length,
    payout_turnover: sum('payout', (d) => d.turnover).toNumber(),
    turnover: sum(null, (d) => d.turnover).toNumber(),
    payin_rewards: sum('payin', (d) => d.credit).toNumber(),
    payout_credits: sum('payout', (d) => d.credit).toNumber(),
    rewards: sum(null, (d) => d.credit).toNumber(),
    revenue: sum(null, (d) => d.revenue).toNumber(),
  };
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', Number(RATE));
  shopA = await createMerchant(service.app, { payin_rate: 2.5 });
  shopB = await createMerchant(service.app, { payin_rate: 4 });
  // X's reward is below both fees; Y's 3 % exceeds shop A's 2.5 %: the platform loses on those.
  for (const [name, reward, payoutReward] of [
    ['X', '1.5', '0.5'],
    ['Y', '3', '2'],
  ] as const) {
    const e = await createExecutor(service.app, `Trader ${name}`);
    await adminOk(service.app, 'PATCH', `/executors/${e.id}`, { payin_reward: Number(reward), payout_reward: Number(payoutReward) });
    for (let i = 0; i < 3; i++) await createRequisite(service.app, e.id);
    executors[name] = { ...e, reward, payoutReward };
  }
  await activeOnly('X');
  await complete(shopA, 1500, 'X', '2.5');
  await complete(shopA, 2750.5, 'X', '2.5');
  await complete(shopB, 1234.56, 'X', '4');
  await activeOnly('Y');
  await complete(shopA, 999, 'Y', '2.5');
  await complete(shopB, 5000, 'Y', '4');
  await complete(shopB, 777.77, 'Y', '4');
  // Cancelled (the hold returned), disputed and approved for less: Y pays v from what the dispute
  // froze on it when it opened (issue 35; the freeze's remainder returns by a dispute_release), and
  // is still rewarded on it.
  const { body } = await createPayment(service.app, shopA, { ext_id: uniqueExtId(), amount: 1800, currency: 'RUB', method: 'CARD' });
  await adminOk(service.app, 'POST', `/payments/${body.id}/cancel`);
  expect((await signed(service.app, shopA, 'POST', `/v1/payments/${body.id}/dispute`, {})).statusCode).toBe(200);
  await adminOk(service.app, 'POST', `/payments/${body.id}/dispute/approve`, { amount: 1799.5 });
  const disputed = payinSettlement('1799.5', RATE, '2.5', executors.Y!.reward);
  done.push(payin(shopA.merchantId, executors.Y!.id, disputed));
  const entries = await sql<{ kind: string; amount: string }>(
    `SELECT a.kind, e.amount::text FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id JOIN ledger_accounts a ON a.id = e.account_id
      WHERE t.kind = 'payin' AND t.ref_id = $1 AND a.kind LIKE 'executor_%' ORDER BY e.amount`,
    [body.id],
  );
  expect(entries).toEqual([
    { kind: 'executor_frozen', amount: disputed.gross.negated().toFixed(6) },
    { kind: 'executor_available', amount: disputed.reward.toFixed(6) },
  ]);

  // Payouts: one X takes and completes, one Y takes and the operator completes, one nobody takes.
  for (const e of Object.values(executors)) await adminOk(service.app, 'PATCH', `/executors/${e.id}`, { is_active: true });
  await payout(shopA, 1000, 'X', 'executor');
  await payout(shopB, 2500, 'Y', 'operator');
  await payout(shopA, 640, null, 'operator');
});

/** A payout of `amount` RUB on `shop` (payout_rate 1.5), taken by `taker` (or nobody) and completed by it or the operator. */
async function payout(shop: MerchantCredentials, amount: number, taker: string | null, completer: 'executor' | 'operator'): Promise<void> {
  const created = await signed(service.app, shop, 'POST', '/v1/payouts', {
    ext_id: uniqueExtId(),
    amount,
    method: 'card',
    requisites: '4111 1111 1111 1111',
    holder_name: 'Ivan Petrov',
  });
  expect(created.statusCode, created.body).toBe(200);
  const id = created.json().id as string;
  const reserve = payoutReserve(String(amount), RATE, '1.5');
  if (taker) {
    const auth = { authorization: `Bearer ${executors[taker]!.token}` };
    expect((await service.app.inject({ method: 'POST', url: `/executor/v1/payouts/${id}/take`, headers: auth })).statusCode).toBe(200);
    if (completer === 'executor') {
      const proof = multipartBody({}, { field: 'proof', content: TINY_PNG });
      const res = await service.app.inject({
        method: 'POST',
        url: `/executor/v1/payouts/${id}/complete`,
        headers: { ...auth, 'content-type': proof.contentType },
        payload: proof.body,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  }
  if (completer === 'operator') await adminOk(service.app, 'POST', `/payouts/${id}/complete`);
  const settled = taker ? payoutSettlement(String(amount), RATE, reserve.reserve, executors[taker]!.payoutReward) : undefined;
  done.push({
    kind: 'payout',
    merchantId: shop.merchantId,
    executorId: taker ? executors[taker]!.id : null,
    turnover: reserve.reserve,
    credit: settled ? settled.executorCredit : new Decimal(0),
    revenue: settled ? settled.revenue : reserve.fee,
  });
}
afterAll(async () => service?.close());

describe('reports from the ledger', () => {
  it('gives each merchant its pay-ins, turnover, rewards and revenue exactly', async () => {
    const report = await adminOk<Report>(service.app, 'GET', `/reports/merchants?from=${day(-1)}&to=${day(1)}`);
    expect(report).toMatchObject({ by: 'merchant', from: day(-1), to: day(1), currency: 'USDT' });
    const owners = perOwner(report, 'merchant_id');
    expect([...owners.keys()].sort()).toEqual([shopA.merchantId, shopB.merchantId].sort());
    expect(owners.get(shopA.merchantId)).toEqual(expected((d) => d.merchantId === shopA.merchantId));
    expect(owners.get(shopB.merchantId)).toEqual(expected((d) => d.merchantId === shopB.merchantId));
    expect(report.totals).toEqual(expected(() => true));
    // Y's reward on shop A's pay-in exceeds the fee: that pay-in's revenue is negative.
    expect(done.some((d) => d.revenue.isNegative())).toBe(true);
    for (const row of report.rows) expect(row.day >= day(-1) && row.day <= day(1)).toBe(true);
  });

  it('gives each executor its pay-ins and rewards exactly, and filters by merchant and executor', async () => {
    const report = await adminOk<Report>(service.app, 'GET', `/reports/executors?from=${day(-1)}&to=${day(1)}`);
    const owners = perOwner(report, 'executor_id');
    expect(new Set(owners.keys())).toEqual(new Set([executors.X!.id, executors.Y!.id, null]));
    for (const e of Object.values(executors)) expect(owners.get(e.id)).toEqual(expected((d) => d.executorId === e.id));
    // The payout nobody took: no executor, its fee the revenue.
    expect(owners.get(null)).toEqual(expected((d) => d.executorId === null));
    expect(owners.get(null)).toMatchObject({ payins: 0, payouts: 1, rewards: 0 });
    expect(report.totals).toEqual(expected(() => true));

    const yOnA = await adminOk<Report>(
      service.app,
      'GET',
      `/reports/executors?from=${day(-1)}&to=${day(1)}&merchant_id=${shopA.merchantId}&executor_id=${executors.Y!.id}`,
    );
    expect(yOnA.totals).toEqual(expected((d) => d.merchantId === shopA.merchantId && d.executorId === executors.Y!.id));
    expect(yOnA.totals.payins).toBe(2);
    const xOnly = await adminOk<Report>(service.app, 'GET', `/reports/merchants?from=${day(-1)}&to=${day(1)}&executor_id=${executors.X!.id}`);
    expect(xOnly.totals).toEqual(expected((d) => d.executorId === executors.X!.id));
  });

  it('sums to the ledger’s own totals', async () => {
    const report = await adminOk<Report>(service.app, 'GET', `/reports/merchants?from=${day(-1)}&to=${day(1)}`);
    const [ledger] = await sql<{ revenue: string; executors: string; payin_parts: string; payout_parts: string; frozen_out: string }>(
      `SELECT (SELECT sum(e.amount) FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id WHERE a.kind = 'system_fee_revenue')::text AS revenue,
              (SELECT sum(balance) FROM ledger_accounts WHERE kind IN ('executor_available', 'executor_frozen'))::text AS executors,
              -- what each kind of posting credited outside the executors: terminals and revenue for
              -- pay-ins, the outside world and revenue for payouts
              (SELECT sum(e.amount) FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id JOIN ledger_transactions t ON t.id = e.transaction_id
                WHERE t.kind = 'payin' AND a.kind IN ('terminal_available', 'system_fee_revenue'))::text AS payin_parts,
              (SELECT sum(e.amount) FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id JOIN ledger_transactions t ON t.id = e.transaction_id
                WHERE t.kind = 'payout_settle' AND a.kind IN ('system_outgoing', 'system_fee_revenue'))::text AS payout_parts,
              (SELECT -sum(e.amount) FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id JOIN ledger_transactions t ON t.id = e.transaction_id
                WHERE t.kind = 'payout_settle' AND a.kind = 'terminal_frozen')::text AS frozen_out`,
    );
    expect(report.totals.revenue).toBe(Number(ledger!.revenue));
    expect(report.totals.payout_turnover).toBe(Number(ledger!.frozen_out));
    // Each executor was funded 1,000,000, paid v per pay-in and was credited its rewards and its
    // payouts: what the two hold now is exactly that.
    expect(new Decimal(ledger!.executors).minus(2_000_000).plus(report.totals.payin_turnover).toNumber()).toBe(report.totals.rewards);
    // A pay-in's value is the terminal's credit, the reward and the revenue; a payout's reserve
    // is the executor's credit, what went out to nobody's executor and the revenue.
    expect(new Decimal(ledger!.payin_parts).plus(report.totals.payin_rewards).toNumber()).toBe(report.totals.payin_turnover);
    expect(new Decimal(ledger!.payout_parts).plus(report.totals.payout_credits).toNumber()).toBe(report.totals.payout_turnover);
    // Nothing outside the range.
    const empty = await adminOk<Report>(service.app, 'GET', `/reports/merchants?from=${day(-40)}&to=${day(-10)}`);
    expect(empty.rows).toEqual([]);
    expect(empty.totals).toMatchObject({ payins: 0, turnover: 0, rewards: 0, revenue: 0 });
  });

  it('answers the same figures as CSV, by ?format=csv or Accept: text/csv', async () => {
    for (const by of ['merchants', 'executors'] as const) {
      const url = `/reports/${by}?from=${day(-1)}&to=${day(1)}`;
      const json = await adminOk<Report>(service.app, 'GET', url);
      const viaQuery = await admin(service.app, 'GET', `${url}&format=csv`);
      const viaAccept = await service.app.inject({
        method: 'GET',
        url: `/admin/v1${url}`,
        headers: { authorization: 'Bearer test-admin-token', accept: 'text/csv' },
      });
      for (const res of [viaQuery, viaAccept]) {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/csv/);
        expect(res.headers['content-disposition']).toBe(`attachment; filename="kassir-report-${by.slice(0, -1)}-${day(-1)}-${day(1)}.csv"`);
        const [header, ...lines] = res.body.trimEnd().split('\r\n');
        const owner = by === 'merchants' ? 'merchant_id' : 'executor_id';
        expect(header).toBe(`day,${owner},payins,payin_turnover,payouts,payout_turnover,turnover,payin_rewards,payout_credits,rewards,revenue`);
        const columns = header!.split(',');
        const rows = lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [columns[i]!, cell])));
        expect(rows.length).toBe(json.rows.length);
        rows.forEach((row, i) => {
          const expectedRow = json.rows[i]!;
          expect(row.day).toBe(expectedRow.day);
          expect(row[owner]).toBe(expectedRow[owner] ?? '');
          for (const c of columns.slice(2)) expect(Number(row[c]), c).toBe(expectedRow[c as keyof Figures]);
          expect(row.revenue).toMatch(/^-?\d+\.\d{6}$/);
        });
      }
    }
  });

  it('refuses every bad query parameter with a VALIDATION error saying what to send', async () => {
    const cases: [string, RegExp][] = [
      ['from=2026-02-30', /from must be a calendar date YYYY-MM-DD/],
      ['to=yesterday', /to must be a calendar date/],
      ['from=2026-03-10&to=2026-03-01', /to \(2026-03-01\) is before from \(2026-03-10\)/],
      ['from=2025-01-01&to=2026-01-02', /covers 367 days; a report covers at most 366/],
      ['merchant_id=42', /merchant_id must be a uuid/],
      ['executor_id=x', /executor_id must be a uuid/],
      ['format=xml', /format must be json or csv/],
      ['merchant=abc', /unknown query parameter merchant/],
    ];
    for (const [query, message] of cases) {
      const res = await admin(service.app, 'GET', `/reports/merchants?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ error: 'VALIDATION' });
      expect(res.json().message, query).toMatch(message);
    }
    expect((await admin(service.app, 'GET', '/reports/merchants?from=2025-01-01&to=2026-01-01')).statusCode).toBe(200);
    const unknown = await admin(service.app, 'GET', '/reports/executors?executor_id=00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toMatch(/Executor .* not found/);
  });

  it('is documented in the OpenAPI: the definitions, the query, JSON and CSV answers', async () => {
    const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/admin/v1/reports/merchants', '/admin/v1/reports/executors']) {
      const op = doc.paths[path].get;
      expect(op.tags).toEqual(['operator']);
      expect(op.description).toMatch(/payin_turnover/);
      expect(op.description).toMatch(/system_fee_revenue/);
      expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['executor_id', 'format', 'from', 'merchant_id', 'to']);
      expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
    }
  });
});

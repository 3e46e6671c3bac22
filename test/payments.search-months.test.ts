/**
 * The console's search by amount across months (migration 064): payments_month_amount holds each
 * payment's UTC month and its amount, and the search probes every month from the oldest
 * payment's (or from's) to the newest's (or to's). Payments are made through the merchant API and
 * their creation time then moved to months long past, to the last microsecond of a month and the
 * first of the next, so that a month missed, or a month read in another zone, loses one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPayments, type PaymentFilter } from '../src/payments/payments.repo.js';
import { searchTerms } from '../src/payments/payments.search.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

let service: TestService;
let merchantA: MerchantCredentials;
let merchantB: MerchantCredentials;

/** The payments of 777 RUB by when they are made to have been created, oldest first; `other` is 778. */
const at = {
  old: '2022-06-15T12:00:00.000000Z',
  endOfJanuary: '2025-01-31T23:59:59.999999Z',
  startOfFebruary: '2025-02-01T00:00:00.000000Z',
  endOfDecember: '2025-12-31T23:59:59.999999Z',
} as const;
const p = {} as Record<keyof typeof at | 'now' | 'other', string>;

interface List {
  payments: { id: string; amount: number; created_at: string }[];
  total: number;
}

async function list(query: string): Promise<List> {
  return adminOk<List>(service.app, 'GET', `/payments?${query}`);
}

async function ids(query: string): Promise<string[]> {
  return (await list(query)).payments.map((payment) => payment.id);
}

/** A payment of `amount`, cancelled at once so that the next one of the same amount may take the requisite. */
async function pay(merchant: MerchantCredentials, amount: number): Promise<string> {
  const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount, currency: 'RUB', method: 'CARD' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await adminOk(service.app, 'POST', `/payments/${res.body.id}/cancel`);
  return res.body.id as string;
}

beforeAll(async () => {
  service = await startTestService();
  await setRate(service.app, 'RUB', 95.5);
  merchantA = await createMerchant(service.app);
  merchantB = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  await createRequisite(service.app, executor.id);
  for (const key of Object.keys(at) as (keyof typeof at)[]) p[key] = await pay(key === 'endOfJanuary' ? merchantB : merchantA, 777);
  p.now = await pay(merchantA, 777);
  p.other = await pay(merchantA, 778);
  for (const [key, instant] of Object.entries(at)) {
    await service.ctx.db.query('UPDATE payments SET created_at = $2::timestamptz WHERE id = $1', [p[key as keyof typeof at], instant]);
  }
  // 778 in January's last microsecond too: the month's probe takes the amount's entries only.
  await service.ctx.db.query('UPDATE payments SET created_at = $2::timestamptz WHERE id = $1', [p.other, at.endOfJanuary]);
});
afterAll(async () => {
  await service?.close();
});

describe('the search by amount over payments_month_amount (migration 064)', () => {
  it('finds every payment of the amount, in every month from the oldest to now, newest first', async () => {
    const all = [p.now, p.endOfDecember, p.startOfFebruary, p.endOfJanuary, p.old];
    expect(await list('q=777')).toMatchObject({ total: 5 });
    expect(await ids('q=777')).toEqual(all);
    expect(await ids('q=777.00')).toEqual(all);
    expect(await ids('q=778')).toEqual([p.other]);
    expect(await list('q=779')).toMatchObject({ payments: [], total: 0 });
    // Pages of it, each counted in full.
    const pages = await Promise.all([0, 2, 4].map((offset) => list(`q=777&limit=2&offset=${offset}`)));
    expect(pages.flatMap((page) => page.payments.map((x) => x.id))).toEqual(all);
    for (const page of pages) expect(page.total).toBe(5);
  });

  it('takes from and to to the microsecond around a month’s end, however the bounds are written', async () => {
    const q = (from?: string, to?: string) =>
      ids(['q=777', from && `from=${encodeURIComponent(from)}`, to && `to=${encodeURIComponent(to)}`].filter(Boolean).join('&'));
    expect(await q('2025-02-01T00:00:00Z')).toEqual([p.now, p.endOfDecember, p.startOfFebruary]);
    expect(await q(undefined, '2025-01-31T23:59:59.999Z')).toEqual([p.endOfJanuary, p.old]);
    expect(await q('2025-01-31T23:59:59.999Z', '2025-02-01T00:00:00Z')).toEqual([p.startOfFebruary, p.endOfJanuary]);
    // The same instants in Moscow's zone (its February begins three hours earlier) and bare dates.
    expect(await q('2025-02-01T03:00:00+03:00', '2025-12-31')).toEqual([p.endOfDecember, p.startOfFebruary]);
    expect(await q('2025-01-31', '2025-01-31')).toEqual([p.endOfJanuary]);
    expect(await q('2022-06-01', '2022-06-30')).toEqual([p.old]);
    expect(await q('2023-01-01', '2024-12-31')).toEqual([]);
    // Bounds beyond every payment: the months probed are the payments' own.
    expect(await q('1990-01-01', '2199-12-31')).toEqual([p.now, p.endOfDecember, p.startOfFebruary, p.endOfJanuary, p.old]);
    expect(await list(`q=777&from=2025-01-01&to=2025-12-31&limit=1`)).toMatchObject({ total: 3 });
  });

  it('answers the same with the other filters (their own query, the search as p.id IN (…))', async () => {
    expect(await ids(`q=777&merchant_id=${merchantA.merchantId}`)).toEqual([p.now, p.endOfDecember, p.startOfFebruary, p.old]);
    expect(await ids(`q=777&merchant_id=${merchantB.merchantId}`)).toEqual([p.endOfJanuary]);
    expect(await ids('q=777&status=CANCELLED&from=2025-02-01T00:00:00Z&to=2025-12-31T23:59:59.999Z')).toEqual([p.endOfDecember, p.startOfFebruary]);
    expect(await list('q=777&method=CARD&to=2025-01-31T23:59:59.999Z&limit=1')).toMatchObject({ total: 2 });
    expect(await ids(`q=778&merchant_id=${merchantA.merchantId}&from=2025-02-01`)).toEqual([]);
  });

  it('reads months in UTC whatever the session’s time zone', async () => {
    const client = await service.ctx.db.connect();
    try {
      for (const zone of ['Pacific/Kiritimati', 'America/Los_Angeles']) {
        await client.query(`SET TimeZone = '${zone}'`);
        const find = async (f: Partial<PaymentFilter>) =>
          (await listPayments(client, { search: searchTerms('777'), limit: 100, offset: 0, ...f })).rows.map((x) => x.id);
        expect(await find({})).toEqual([p.now, p.endOfDecember, p.startOfFebruary, p.endOfJanuary, p.old]);
        expect(await find({ from: new Date('2025-01-31T23:00:00Z'), to: new Date('2025-02-01T01:00:00Z') })).toEqual([p.startOfFebruary, p.endOfJanuary]);
        expect(await find({ merchantId: merchantB.merchantId })).toEqual([p.endOfJanuary]);
      }
    } finally {
      await client.query('RESET TimeZone');
      client.release();
    }
  });

  it('has payments_month_amount, valid, in place of payments_amount', async () => {
    const { rows } = await service.ctx.db.query<{ name: string; definition: string; valid: boolean }>(
      `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, i.indisvalid AS valid
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'payments'::regclass AND c.relname IN ('payments_amount', 'payments_month_amount')`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: 'payments_month_amount', valid: true });
    expect(rows[0]!.definition).toContain(`date_trunc('month'::text, (created_at AT TIME ZONE 'UTC'::text)), amount`);
  });
});

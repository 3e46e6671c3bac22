/**
 * The operator console's payments screen: GET /admin/v1/payments with its search box, filters,
 * pages and CSV export, and GET /admin/v1/payments/:id/timeline, on real payments made through
 * the merchant and executor APIs.
 */
import { randomInt } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luhnValid } from '../src/lib/validators.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  notifyTransfer,
  setRate,
  signed,
  startTestService,
  type TestService,
  testPhone,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

let service: TestService;
let hook: Awaited<ReturnType<typeof webhookReceiver>>;
let merchantA: MerchantCredentials;
let merchantB: MerchantCredentials;
let terminalA2: string;
let terminalA2Key: string;
let cardExecutor: { id: string; token: string };
let sbpExecutor: { id: string; token: string };
let card: { id: string; value: string };
let phone: { id: string; value: string };

interface Created {
  id: string;
  ext_id: string;
  amount: number;
  created_at: string;
}
/** The payments of this file, oldest first: A1 completed, A2 cancelled, A3 B1 B2 pending. */
const p: Record<'A1' | 'A2' | 'A3' | 'B1' | 'B2', Created> = {} as never;

interface ListItem {
  id: string;
  ext_id: string;
  amount: number;
  status: string;
  method: string;
  merchant_id: string;
  terminal_id: string;
  executor_id: string | null;
  requisite_id: string | null;
  client_id: string | null;
  cancel_reason: string | null;
  created_at: string;
  requisites: { type: string; value: string };
}
interface List {
  payments: ListItem[];
  total: number;
  limit: number;
  offset: number;
}

/** A Luhn-valid 16-digit card number ending in `tail` (its check digit is the last of the tail). */
function cardEndingIn(tail: string): string {
  const head = `2200${String(randomInt(10_000_000)).padStart(7, '0')}`;
  for (let d = 0; d < 10; d++) if (luhnValid(`${head}${d}${tail}`)) return `${head}${d}${tail}`;
  throw new Error('unreachable: one digit five places from the end always fixes the Luhn sum');
}

async function pay(merchant: MerchantCredentials, body: Record<string, unknown>): Promise<Created> {
  const res = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), currency: 'RUB', method: 'CARD', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // created_at is compared to the millisecond below: one payment per millisecond at most.
  await new Promise((resolve) => setTimeout(resolve, 5));
  return res.body as Created;
}

async function list(query: string): Promise<List> {
  return adminOk<List>(service.app, 'GET', `/payments?${query}`);
}

async function ids(query: string): Promise<string[]> {
  return (await list(query)).payments.map((payment) => payment.id);
}

beforeAll(async () => {
  service = await startTestService({}, { worker: true });
  hook = await webhookReceiver();
  await setRate(service.app, 'RUB', 95.5);
  merchantA = await createMerchant(service.app, { name: 'A1' });
  const a2Terminal = await createTerminal(service.app, merchantA.merchantId, { name: 'A2' });
  terminalA2 = a2Terminal.id;
  terminalA2Key = a2Terminal.api_key;
  merchantB = await createMerchant(service.app);
  cardExecutor = await createExecutor(service.app, 'Card trader');
  sbpExecutor = await createExecutor(service.app, 'SBP trader');
  // One requisite per method, so that the cascade's choice is known: the card ends in 4321, and
  // 4321 is also an amount below (q=4321 must find both).
  card = await createRequisite(service.app, cardExecutor.id, { value: cardEndingIn('4321') });
  phone = await createRequisite(service.app, sbpExecutor.id, { type: 'sbp', value: testPhone(), methods: ['SBP'] });

  p.A1 = await pay(merchantA, { amount: 1500, client_id: 'client-42', notify_url: hook.url });
  expect(await notifyTransfer(service.app, cardExecutor.token, card.id, 1500)).toMatchObject({ matched: true, payment_id: p.A1.id });
  p.A2 = await pay({ ...merchantA, terminalId: terminalA2, apiKey: terminalA2Key }, { amount: 1500.5 });
  await adminOk(service.app, 'POST', `/payments/${p.A2.id}/cancel`);
  p.A3 = await pay(merchantA, { amount: 2000, method: 'SBP' });
  p.B1 = await pay(merchantB, { amount: 4321, method: 'SBP' });
  p.B2 = await pay(merchantB, { amount: 1500, client_id: 'client-42', ext_id: '=1+2' });
});
afterAll(async () => {
  hook?.server.close();
  await service?.close();
});

describe('GET /admin/v1/payments: the search box', () => {
  it('finds a payment by its id, in either case', async () => {
    expect(await ids(`q=${p.A3.id}`)).toEqual([p.A3.id]);
    expect(await ids(`q=${p.A3.id.toUpperCase()}`)).toEqual([p.A3.id]);
    expect(await ids('q=00000000-0000-4000-8000-000000000000')).toEqual([]);
  });

  it('finds a payment by its ext_id, exactly', async () => {
    expect(await ids(`q=${p.A2.ext_id}`)).toEqual([p.A2.id]);
    expect(await ids(`q=${encodeURIComponent('=1+2')}`)).toEqual([p.B2.id]);
    expect(await ids(`q=${p.A2.ext_id.slice(0, -1)}`)).toEqual([]);
  });

  it('finds payments by client_id, across merchants, newest first', async () => {
    expect(await ids('q=client-42')).toEqual([p.B2.id, p.A1.id]);
    expect(await ids('q=client-4')).toEqual([]);
  });

  it('finds payments by amount, exactly: 1500 is not 1500.50', async () => {
    expect(await ids(`q=1500&merchant_id=${merchantA.merchantId}`)).toEqual([p.A1.id]);
    expect(await ids('q=1500.50')).toEqual([p.A2.id]);
    expect(await ids('q=1500,50')).toEqual([p.A2.id]);
    expect(await ids('q=2000')).toEqual([p.A3.id]);
  });

  it('finds payments by the last digits of the requisite handed out, however the number is written', async () => {
    const cardPayments = [p.B2.id, p.A2.id, p.A1.id];
    expect(await ids(`q=${card.value.slice(-8)}`)).toEqual(cardPayments);
    expect(await ids(`q=${card.value.slice(-12, -8)} ${card.value.slice(-8, -4)} ${card.value.slice(-4)}`)).toEqual(cardPayments);
    expect(await ids(`q=${encodeURIComponent(card.value)}`)).toEqual(cardPayments);
    // A phone written as people write it: +7 (9xx) xxx-xx-xx.
    const d = phone.value.slice(2);
    const written = `+7 (${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6, 8)}-${d.slice(8)}`;
    expect(await ids(`q=${encodeURIComponent(written)}`)).toEqual([p.B1.id, p.A3.id]);
    expect(await ids(`q=${phone.value.slice(-5)}`)).toEqual([p.B1.id, p.A3.id]);
    // Digits that are not the end of the value do not match.
    expect(await ids(`q=${card.value.slice(0, 8)}`)).toEqual([]);
  });

  it('reads digits every way at once: 4321 is the card’s last digits and an amount', async () => {
    // B1 is an SBP payment of 4321 (its requisite is a phone); the others are on the card ending 4321.
    expect(await ids('q=4321')).toEqual([p.B2.id, p.B1.id, p.A2.id, p.A1.id]);
    expect(await ids('q=4321&method=SBP')).toEqual([p.B1.id]);
  });

  it('answers the operator’s view of each payment, the requisite as the merchant API shows it', async () => {
    const [a1] = (await list(`q=${p.A1.id}`)).payments;
    expect(a1).toMatchObject({
      id: p.A1.id,
      ext_id: p.A1.ext_id,
      amount: 1500,
      status: 'COMPLETED',
      method: 'CARD',
      merchant_id: merchantA.merchantId,
      terminal_id: merchantA.terminalId,
      executor_id: cardExecutor.id,
      requisite_id: card.id,
      client_id: 'client-42',
      cancel_reason: null,
      requisites: { type: 'card', value: card.value },
    });
    const [a2] = (await list(`q=${p.A2.id}`)).payments;
    expect(a2).toMatchObject({ status: 'CANCELLED', cancel_reason: 'manual', terminal_id: terminalA2 });
  });
});

describe('GET /admin/v1/payments: filters and pages', () => {
  it('filters by status, merchant, terminal, executor and method, together', async () => {
    const a = `merchant_id=${merchantA.merchantId}`;
    expect(await ids(a)).toEqual([p.A3.id, p.A2.id, p.A1.id]);
    expect(await ids(`merchant_id=${merchantB.merchantId}`)).toEqual([p.B2.id, p.B1.id]);
    expect(await ids(`${a}&status=COMPLETED`)).toEqual([p.A1.id]);
    expect(await ids('status=CANCELLED')).toEqual([p.A2.id]);
    expect(await ids('status=PENDING')).toEqual([p.B2.id, p.B1.id, p.A3.id]);
    expect(await ids('status=DISPUTE')).toEqual([]);
    expect(await ids(`terminal_id=${terminalA2}`)).toEqual([p.A2.id]);
    expect(await ids(`terminal_id=${merchantA.terminalId}`)).toEqual([p.A3.id, p.A1.id]);
    expect(await ids(`executor_id=${sbpExecutor.id}`)).toEqual([p.B1.id, p.A3.id]);
    expect(await ids(`executor_id=${cardExecutor.id}&status=PENDING`)).toEqual([p.B2.id]);
    expect(await ids('method=SBP')).toEqual([p.B1.id, p.A3.id]);
    expect(await ids(`method=CARD&merchant_id=${merchantB.merchantId}`)).toEqual([p.B2.id]);
    expect(await ids(`method=VIET_QR`)).toEqual([]);
  });

  it('filters by creation time, both ends included to the millisecond shown', async () => {
    const at = (payment: Created) => encodeURIComponent(payment.created_at);
    expect(await ids(`from=${at(p.A3)}`)).toEqual([p.B2.id, p.B1.id, p.A3.id]);
    expect(await ids(`to=${at(p.A2)}`)).toEqual([p.A2.id, p.A1.id]);
    expect(await ids(`from=${at(p.A2)}&to=${at(p.A3)}`)).toEqual([p.A3.id, p.A2.id]);
    // The same instants in another zone.
    const moscow = (payment: Created) => encodeURIComponent(new Date(Date.parse(payment.created_at) + 3 * 3_600_000).toISOString().replace('Z', '+03:00'));
    expect(await ids(`from=${moscow(p.A2)}&to=${moscow(p.A3)}`)).toEqual([p.A3.id, p.A2.id]);
    // A bare date: from its UTC midnight, to the end of its UTC day.
    const today = p.A1.created_at.slice(0, 10);
    expect((await list(`from=${today}&to=${p.B2.created_at.slice(0, 10)}`)).total).toBe(5);
    expect(await ids('from=2000-01-01&to=2000-01-02')).toEqual([]);
    expect(await ids(`from=${at(p.A3)}&method=CARD`)).toEqual([p.B2.id]);
    // With a search (whose matches are ordered and counted apart from the other filters'): the same bounds.
    expect(await ids(`q=4321&from=${at(p.A2)}&to=${at(p.B1)}`)).toEqual([p.B1.id, p.A2.id]);
    expect(await list(`q=4321&from=${at(p.A2)}&limit=1`)).toMatchObject({ total: 3 });
  });

  it('pages newest first, every page with the total matching', async () => {
    const all = await list('');
    expect(all).toMatchObject({ total: 5, limit: 100, offset: 0 });
    expect(all.payments.map((x) => x.id)).toEqual([p.B2.id, p.B1.id, p.A3.id, p.A2.id, p.A1.id]);
    const pages = await Promise.all([0, 2, 4].map((offset) => list(`limit=2&offset=${offset}`)));
    expect(pages.map((page) => page.payments.length)).toEqual([2, 2, 1]);
    for (const page of pages) expect(page).toMatchObject({ total: 5, limit: 2 });
    expect(pages.flatMap((page) => page.payments.map((x) => x.id))).toEqual(all.payments.map((x) => x.id));
    expect(await list('limit=2&offset=10')).toMatchObject({ payments: [], total: 5 });
    const filtered = await list(`q=client-42&limit=1&offset=1`);
    expect(filtered).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(filtered.payments.map((x) => x.id)).toEqual([p.A1.id]);
  });
});

/** RFC 4180: fields separated by commas, quoted when they hold a comma, a quote or a line break; CRLF line ends. */
function parseCsv(text: string): Record<string, string>[] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    i += 1;
    if (quoted) {
      if (c === '"' && next === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && next === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 1;
    } else field += c;
  }
  expect(field, 'the document ends with CRLF').toBe('');
  const [header, ...rows] = records;
  return rows.map((cells) => {
    expect(cells.length).toBe(header!.length);
    return Object.fromEntries(header!.map((name, k) => [name, cells[k]!]));
  });
}

describe('GET /admin/v1/payments as CSV', () => {
  it('exports the same filtered list as a download: decimal strings, cards masked, formulas defused', async () => {
    const json = await list('');
    const viaQuery = await admin(service.app, 'GET', '/payments?format=csv');
    const viaAccept = await service.app.inject({
      method: 'GET',
      url: '/admin/v1/payments',
      headers: { authorization: 'Bearer test-admin-token', accept: 'text/csv' },
    });
    for (const res of [viaQuery, viaAccept]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="payments-\d{8}T\d{6}Z\.csv"$/);
      expect(res.headers['x-total-count']).toBe('5');
      expect(res.body.split('\r\n')[0]).toBe(
        'id,created_at,status,merchant_id,terminal_id,terminal_name,executor_id,requisite_id,ext_id,client_id,method,amount,currency,' +
          'received_amount,payer_amount,payer_currency,rate,payin_rate,requisite_type,requisite_value,bank_code,cancel_reason,completed_at,valid_until',
      );
      // The card number is never in the file, only its first 6 and last 4 digits.
      expect(res.body).not.toContain(card.value);
      const rows = parseCsv(res.body);
      expect(rows.map((row) => row.id)).toEqual(json.payments.map((x) => x.id));
      rows.forEach((row, i) => {
        const payment = json.payments[i]!;
        expect(row).toMatchObject({
          created_at: payment.created_at,
          status: payment.status,
          merchant_id: payment.merchant_id,
          terminal_id: payment.terminal_id,
          executor_id: payment.executor_id ?? '',
          requisite_id: payment.requisite_id ?? '',
          client_id: payment.client_id ?? '',
          method: payment.method,
          currency: 'RUB',
          requisite_type: payment.requisites.type,
          cancel_reason: payment.cancel_reason ?? '',
        });
        expect(row.amount).toMatch(/^\d+\.\d{2}$/);
        expect(new Decimal(row.amount!).eq(String(payment.amount))).toBe(true);
        expect(row.requisite_value).toBe(
          payment.requisites.type === 'card' ? `${card.value.slice(0, 6)}******${card.value.slice(-4)}` : payment.requisites.value,
        );
        // A spreadsheet would run "=1+2" as a formula: it is exported as text.
        expect(row.ext_id).toBe(payment.ext_id.startsWith('=') ? `'${payment.ext_id}` : payment.ext_id);
      });
      const a1 = rows.find((row) => row.id === p.A1.id)!;
      const a2 = rows.find((row) => row.id === p.A2.id)!;
      expect(a1).toMatchObject({ amount: '1500.00', received_amount: '1500.00', payer_amount: '1500.00', terminal_name: 'A1', rate: '95.50000000' });
      expect(a1.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(a2).toMatchObject({ amount: '1500.50', received_amount: '', terminal_name: 'A2', cancel_reason: 'manual', completed_at: '' });
    }
  });

  it('applies the filters and takes up to 10 000 rows from offset', async () => {
    const mine = await admin(service.app, 'GET', `/payments?format=csv&merchant_id=${merchantA.merchantId}`);
    expect(parseCsv(mine.body).map((row) => row.id)).toEqual([p.A3.id, p.A2.id, p.A1.id]);
    expect(mine.headers['x-total-count']).toBe('3');
    const slice = await admin(service.app, 'GET', '/payments?format=csv&limit=2&offset=1');
    expect(parseCsv(slice.body).map((row) => row.id)).toEqual([p.B1.id, p.A3.id]);
    expect(slice.headers['x-total-count']).toBe('5');
    expect((await admin(service.app, 'GET', '/payments?format=csv&limit=10000')).statusCode).toBe(200);
    const none = await admin(service.app, 'GET', '/payments?format=csv&q=nothing-matches');
    expect(none.statusCode).toBe(200);
    expect(parseCsv(none.body)).toEqual([]);
  });
});

describe('GET /admin/v1/payments: bad parameters', () => {
  it('refuses every bad value with a VALIDATION error naming the parameter and what it takes', async () => {
    const cases: [string, RegExp][] = [
      ['status=BOGUS', /status must be one of PENDING, PROCESSING, COMPLETED/],
      ['status=pending', /status must be one of/],
      ['method=CASH', /method must be one of CARD, SBP/],
      ['merchant_id=42', /merchant_id must be a uuid/],
      ['terminal_id=x', /terminal_id must be a uuid/],
      ['executor_id=nope', /executor_id must be a uuid/],
      ['from=yesterday', /from must be an ISO 8601 date-time with its zone/],
      ['from=2026-01-31T10:00:00', /from must be an ISO 8601 date-time with its zone/],
      ['to=2026-02-30', /to must be an ISO 8601/],
      ['to=1', /to must be an ISO 8601/],
      ['from=2026-02-01&to=2026-01-01', /to \(2026-01-01T23:59:59.999Z\) is before from \(2026-02-01T00:00:00.000Z\)/],
      ['limit=0', /limit must be between 1 and 1000/],
      ['limit=1001', /limit must be between 1 and 1000/],
      ['limit=abc', /limit must be a non-negative integer/],
      ['offset=-1', /offset must be a non-negative integer/],
      ['format=xml', /format must be json or csv/],
      ['format=csv&limit=10001', /limit of a CSV export must be between 1 and 10000/],
      [`q=${'x'.repeat(256)}`, /q must be at most 255 characters/],
      ['merchant=abc', /unknown query parameter merchant; the payment list takes q, status/],
      ['status=PENDING&status=COMPLETED', /status/],
    ];
    for (const [query, message] of cases) {
      const res = await admin(service.app, 'GET', `/payments?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
      expect(res.json().message, query).toMatch(message);
    }
  });

  it('is documented in the OpenAPI: every parameter, JSON and CSV answers, the timeline', async () => {
    const doc = (await service.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/admin/v1/payments'].get;
    expect(op.parameters.map((x: { name: string }) => x.name).sort()).toEqual(
      ['executor_id', 'format', 'from', 'limit', 'merchant_id', 'method', 'offset', 'q', 'status', 'terminal_id', 'to'].sort(),
    );
    expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
    expect(op.description).toMatch(/at most 10000 rows per export/);
    expect(doc.paths['/admin/v1/payments/{id}/timeline'].get.description).toMatch(/ledger_posting/);
  });
});

interface TimelineItem {
  at: string;
  kind: string;
  [key: string]: any;
}

async function timeline(id: string): Promise<{ payment_id: string; status: string; timeline: TimelineItem[] }> {
  return adminOk(service.app, 'GET', `/payments/${id}/timeline`);
}

/** Each posting's entries sum to zero, to the micro-USDT. */
function expectBalanced(posting: TimelineItem): void {
  expect(posting.entries.length).toBeGreaterThanOrEqual(2);
  const sum = posting.entries.reduce((total: Decimal, entry: { amount: number }) => total.plus(String(entry.amount)), new Decimal(0));
  expect(sum.toFixed(6), posting.posting).toBe('0.000000');
}

describe('GET /admin/v1/payments/:id/timeline', () => {
  it('tells a completed payment’s life in order: created, handed out, held, notified, completed, credited, webhook delivered', async () => {
    // The webhook goes out from the job queue, after the completion's commit.
    const t = await until(async () => {
      const read = await timeline(p.A1.id);
      return read.timeline.some((item) => item.kind === 'webhook_attempt') ? read : undefined;
    });
    expect(hook.received.map((r) => JSON.parse(r.body).data.id)).toContain(p.A1.id);
    expect(t).toMatchObject({ payment_id: p.A1.id, status: 'COMPLETED' });
    expect(t.timeline.map((item) => (item.kind === 'ledger_posting' ? `ledger_posting:${item.posting}` : item.kind))).toEqual([
      'created',
      'requisite_handed_out',
      'ledger_posting:payin_hold',
      'notification',
      'status_changed',
      'ledger_posting:payin',
      'webhook_enqueued',
      'webhook_attempt',
    ]);
    const ats = t.timeline.map((item) => Date.parse(item.at));
    expect(ats).toEqual([...ats].sort((a, b) => a - b));

    const [created, handedOut, hold, notification, completed, payin, enqueued, attempt] = t.timeline as [TimelineItem, ...TimelineItem[]];
    expect(created).toMatchObject({
      at: p.A1.created_at,
      amount: 1500,
      currency: 'RUB',
      method: 'CARD',
      terminal_id: merchantA.terminalId,
      terminal_name: 'A1',
    });
    expect(handedOut).toMatchObject({
      requisite_id: card.id,
      requisite_type: 'card',
      requisite_value: `${card.value.slice(0, 6)}******${card.value.slice(-4)}`,
      executor_id: cardExecutor.id,
      executor_name: 'Card trader',
    });
    expect(JSON.stringify(t)).not.toContain(card.value);
    expect(notification).toMatchObject({ relation: 'matched', status: 'matched', amount: 1500, executor_id: cardExecutor.id, requisite_id: card.id });
    expect(completed).toMatchObject({ from: 'PENDING', to: 'COMPLETED' });
    expect(notification!.at).toBe(completed!.at);

    // The hold moves the executor's money from available to frozen; the pay-in takes it from the
    // hold and shares it out between the terminal, the executor's reward and the platform.
    expectBalanced(hold!);
    expectBalanced(payin!);
    const entry = (posting: TimelineItem, account: string) => posting.entries.filter((e: { account: string }) => e.account === account);
    expect(entry(hold!, 'executor_available')).toEqual([expect.objectContaining({ owner_type: 'executor', owner_id: cardExecutor.id })]);
    expect(entry(hold!, 'executor_available')[0].amount).toBeLessThan(0);
    expect(entry(payin!, 'executor_frozen')[0].amount).toBe(-entry(hold!, 'executor_frozen')[0].amount);
    expect(entry(payin!, 'terminal_available')).toEqual([expect.objectContaining({ owner_type: 'terminal', owner_id: merchantA.terminalId })]);
    expect(payin).toMatchObject({ currency: 'USDT', at: completed!.at });

    expect(enqueued).toMatchObject({ event: 'payment.completed', url: hook.url, delivery_status: 'delivered', attempts: 1, at: completed!.at });
    expect(attempt).toMatchObject({ event_id: enqueued!.event_id, event: 'payment.completed', attempt: 1, status_code: 200, error: null });
  });

  it('tells an operator’s cancellation: who, why, and the hold given back', async () => {
    const t = await timeline(p.A2.id);
    expect(t.status).toBe('CANCELLED');
    expect(t.timeline.map((item) => (item.kind === 'ledger_posting' ? `ledger_posting:${item.posting}` : item.kind))).toEqual([
      'created',
      'requisite_handed_out',
      'ledger_posting:payin_hold',
      'status_changed',
      'ledger_posting:payin_hold_release',
    ]);
    const [, , hold, cancelled, release] = t.timeline;
    expect(cancelled).toMatchObject({ from: 'PENDING', to: 'CANCELLED', reason: 'manual', by: 'token' });
    expect(release!.at).toBe(cancelled!.at);
    expectBalanced(hold!);
    expectBalanced(release!);
    expect(release!.entries.map((e: { amount: number }) => e.amount).sort()).toEqual(hold!.entries.map((e: { amount: number }) => -e.amount).sort());
  });

  it('shows a pending SBP payment still held, its phone in full as the requisite API shows it', async () => {
    const t = await timeline(p.A3.id);
    expect(t.status).toBe('PENDING');
    expect(t.timeline.map((item) => item.kind)).toEqual(['created', 'requisite_handed_out', 'ledger_posting']);
    expect(t.timeline[1]).toMatchObject({ requisite_type: 'sbp', requisite_value: phone.value, executor_id: sbpExecutor.id });
  });

  // Runs after the list's tests: the payment it makes would change their totals.
  it('tells a dispute: cancelled, disputed with a receipt, approved for less; each status change once, in order', async () => {
    const merchant = await createMerchant(service.app);
    const disputed = await pay(merchant, { amount: 999 });
    await adminOk(service.app, 'POST', `/payments/${disputed.id}/cancel`);
    const opened = await signed(service.app, merchant, 'POST', `/v1/payments/${disputed.id}/dispute`, {
      amount: 990,
      receipt_url: 'https://shop.example/proof.jpg',
      comment: 'paid from card 4111 1111 1111 1111',
    });
    expect(opened.statusCode, opened.body).toBe(200);
    await adminOk(service.app, 'POST', `/payments/${disputed.id}/dispute/approve`, { amount: 990 });

    const t = await timeline(disputed.id);
    expect(t.status).toBe('COMPLETED_APPEAL');
    expect(t.timeline.map((item) => (item.kind === 'ledger_posting' ? `ledger_posting:${item.posting}` : item.kind))).toEqual([
      'created',
      'requisite_handed_out',
      'ledger_posting:payin_hold',
      'status_changed',
      'ledger_posting:payin_hold_release',
      'receipt',
      'dispute_opened',
      'status_changed',
      'dispute_decided',
      'status_changed',
      'ledger_posting:payin',
    ]);
    const changes = t.timeline.filter((item) => item.kind === 'status_changed');
    expect(changes).toEqual([
      expect.objectContaining({ from: 'PENDING', to: 'CANCELLED', reason: 'manual', by: 'token' }),
      expect.objectContaining({ from: 'CANCELLED', to: 'DISPUTE' }),
      expect.objectContaining({ from: 'DISPUTE', to: 'COMPLETED_APPEAL', by: 'token' }),
    ]);
    const byKind = (kind: string) => t.timeline.find((item) => item.kind === kind)!;
    expect(byKind('receipt')).toMatchObject({ source: 'dispute', url: 'https://shop.example/proof.jpg', at: changes[1]!.at });
    expect(byKind('dispute_opened')).toMatchObject({ amount: 990, receipt_id: byKind('receipt').receipt_id, comment: 'paid from card 411111******1111' });
    expect(byKind('dispute_decided')).toMatchObject({ outcome: 'approved', decided_amount: 990, decided_by: 'token', at: changes[2]!.at });
    for (const posting of t.timeline.filter((item) => item.kind === 'ledger_posting')) expectBalanced(posting);
  });

  it('answers 404 PAY_006 for a payment that does not exist', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await admin(service.app, 'GET', `/payments/${id}/timeline`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json(), id).toMatchObject({ error: 'PAY_006' });
    }
  });
});

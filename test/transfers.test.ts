import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Money } from '../src/lib/money.js';
import { admin, adminOk, createMerchant, createTerminal, type MerchantCredentials, signed, startTestService, type TestService } from './helpers.js';

let service: TestService;
let merchant: MerchantCredentials;
let stranger: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  merchant = await createMerchant(service.app, { name: 'Main' });
  stranger = await createMerchant(service.app, { name: 'Other shop' });
});
afterAll(async () => service?.close());

async function fund(terminalId: string, amount: number | string): Promise<void> {
  await adminOk(service.app, 'POST', `/terminals/${terminalId}/adjustments`, { amount: Number(amount), reason: 'test funds' });
}

/** A terminal's available balance, read from the ledger as exact text. */
async function available(terminalId: string): Promise<string> {
  const { rows } = await service.ctx.db.query<{ balance: string }>(
    `SELECT balance::text FROM ledger_accounts WHERE terminal_id = $1 AND kind = 'terminal_available'`,
    [terminalId],
  );
  return new Money(rows[0]!.balance).toFixed();
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await service.ctx.db.query<{ n: string }>(sql, params);
  return Number(rows[0]!.n);
}

const transfersOf = (merchantId: string) => count('SELECT count(*) AS n FROM transfers WHERE merchant_id = $1', [merchantId]);

function transfer(body: unknown, creds: MerchantCredentials = merchant, app: FastifyInstance = service.app) {
  return signed(app, creds, 'POST', '/v1/transfers', body);
}

async function newTerminal(creds: MerchantCredentials = merchant, name = 'Extra'): Promise<string> {
  return (await createTerminal(service.app, creds.merchantId, { name })).id;
}

async function ledgerOk(): Promise<void> {
  expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
}

describe('POST /v1/transfers: success', () => {
  it('answers exactly {success, from_terminal_id, to_terminal_id, amount, currency}, moves the amount without fee', async () => {
    const from = await newTerminal();
    const to = await newTerminal();
    await fund(from, 100);
    const res = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 37.25 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toStrictEqual({ success: true, from_terminal_id: from, to_terminal_id: to, amount: 37.25, currency: 'USDT' });
    expect(await available(from)).toBe('62.75');
    expect(await available(to)).toBe('37.25');
    // The merchant API shows the same balances.
    const terminals = (await signed(service.app, merchant, 'GET', '/v1/terminals')).json().terminals as { id: string; balance: number }[];
    expect(terminals.find((t) => t.id === from)!.balance).toBe(62.75);
    expect(terminals.find((t) => t.id === to)!.balance).toBe(37.25);
    await ledgerOk();
  });

  it('moves 6-decimal amounts exactly (0.000001, 12345.678901), and can drain the source to exactly zero', async () => {
    const from = await newTerminal();
    const to = await newTerminal();
    await fund(from, '12345.678902');
    const tiny = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 0.000001 });
    expect(tiny.statusCode, tiny.body).toBe(200);
    expect(tiny.json().amount).toBe(0.000001);
    expect(await available(from)).toBe('12345.678901');
    expect(await available(to)).toBe('0.000001');
    const rest = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 12345.678901 });
    expect(rest.statusCode, rest.body).toBe(200);
    expect(rest.json().amount).toBe(12345.678901);
    expect(await available(from)).toBe('0');
    expect(await available(to)).toBe('12345.678902');
    await ledgerOk();
  });

  it('writes one transfer row and ONE ledger transaction of kind transfer with exactly two entries (−amount, +amount)', async () => {
    const from = await newTerminal();
    const to = await newTerminal();
    await fund(from, 10);
    const before = await count(`SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'transfer'`);
    const res = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 4.5 });
    expect(res.statusCode, res.body).toBe(200);
    expect(await count(`SELECT count(*) AS n FROM ledger_transactions WHERE kind = 'transfer'`)).toBe(before + 1);

    const { rows: transfers } = await service.ctx.db.query<{ id: string; merchant_id: string; amount: string }>(
      'SELECT id, merchant_id, amount::text FROM transfers WHERE from_terminal_id = $1 AND to_terminal_id = $2',
      [from, to],
    );
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ merchant_id: merchant.merchantId });
    expect(new Money(transfers[0]!.amount).toFixed()).toBe('4.5');

    const { rows: postings } = await service.ctx.db.query<{ id: string }>(`SELECT id FROM ledger_transactions WHERE kind = 'transfer' AND ref_id = $1`, [
      transfers[0]!.id,
    ]);
    expect(postings).toHaveLength(1);
    const { rows: entries } = await service.ctx.db.query<{ terminal_id: string; kind: string; amount: string }>(
      `SELECT a.terminal_id, a.kind, e.amount::text FROM ledger_entries e JOIN ledger_accounts a ON a.id = e.account_id
        WHERE e.transaction_id = $1 ORDER BY e.amount`,
      [postings[0]!.id],
    );
    expect(entries.map((e) => ({ ...e, amount: new Money(e.amount).toFixed() }))).toEqual([
      { terminal_id: from, kind: 'terminal_available', amount: '-4.5' },
      { terminal_id: to, kind: 'terminal_available', amount: '4.5' },
    ]);
  });

  it("works between any two of the merchant's terminals, not only the caller's (the signing terminal is neither side)", async () => {
    const from = await newTerminal();
    const to = await newTerminal();
    await fund(from, 5);
    const res = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 5 });
    expect(res.statusCode, res.body).toBe(200);
    expect(await available(from)).toBe('0');
    expect(await available(to)).toBe('5');
  });

  it("an inactive terminal of the merchant may still send and receive (its funds are the merchant's); an inactive caller is AUTH_003", async () => {
    // Current semantics: is_active only blocks the terminal's own API key (DESIGN.md decision 3);
    // withdrawals likewise accept an inactive terminal named by an active one.
    const inactive = await createTerminal(service.app, merchant.merchantId, { name: 'Inactive' });
    const active = await newTerminal();
    await fund(inactive.id, 20);
    await adminOk(service.app, 'PATCH', `/terminals/${inactive.id}`, { is_active: false });

    const out = await transfer({ from_terminal_id: inactive.id, to_terminal_id: active, amount: 8 });
    expect(out.statusCode, out.body).toBe(200);
    const back = await transfer({ from_terminal_id: active, to_terminal_id: inactive.id, amount: 3 });
    expect(back.statusCode, back.body).toBe(200);
    expect(await available(inactive.id)).toBe('15');
    expect(await available(active)).toBe('5');

    const viaInactiveKey = await transfer(
      { from_terminal_id: active, to_terminal_id: inactive.id, amount: 1 },
      { ...merchant, apiKey: inactive.api_key, terminalId: inactive.id },
    );
    expect(viaInactiveKey.statusCode).toBe(403);
    expect(viaInactiveKey.json().error).toBe('AUTH_003');
    expect(await available(active)).toBe('5');
  });
});

describe('POST /v1/transfers: TRF_001 (invalid parameters)', () => {
  let a: string;
  let b: string;
  beforeAll(async () => {
    a = await newTerminal();
    b = await newTerminal();
    await fund(a, 50);
  });

  const cases: [string, () => unknown][] = [
    ['zero amount', () => ({ from_terminal_id: a, to_terminal_id: b, amount: 0 })],
    ['negative amount', () => ({ from_terminal_id: a, to_terminal_id: b, amount: -5 })],
    ['same terminal', () => ({ from_terminal_id: a, to_terminal_id: a, amount: 1 })],
    ['same terminal in another letter case', () => ({ from_terminal_id: a, to_terminal_id: a.toUpperCase(), amount: 1 })],
    ['7 decimal places', () => ({ from_terminal_id: a, to_terminal_id: b, amount: 0.0000001 })],
    ['7 decimal places on a larger amount', () => ({ from_terminal_id: a, to_terminal_id: b, amount: 1.1234567 })],
    ['amount as a string', () => ({ from_terminal_id: a, to_terminal_id: b, amount: '10' })],
    ['amount null', () => ({ from_terminal_id: a, to_terminal_id: b, amount: null })],
    ['amount missing', () => ({ from_terminal_id: a, to_terminal_id: b })],
    ['from_terminal_id missing', () => ({ to_terminal_id: b, amount: 1 })],
    ['to_terminal_id missing', () => ({ from_terminal_id: a, amount: 1 })],
    ['from_terminal_id not a uuid', () => ({ from_terminal_id: 'main', to_terminal_id: b, amount: 1 })],
    ['to_terminal_id not a uuid', () => ({ from_terminal_id: a, to_terminal_id: `${b}x`, amount: 1 })],
    ['terminal id as a number', () => ({ from_terminal_id: 42, to_terminal_id: b, amount: 1 })],
    ['empty object', () => ({})],
    ['JSON array', () => []],
    ['amount absurdly large', () => ({ from_terminal_id: a, to_terminal_id: b, amount: 1e21 })],
  ];

  it.each(cases)('%s → 400 TRF_001, nothing moves', async (_name, body) => {
    const before = await transfersOf(merchant.merchantId);
    const res = await transfer(body());
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'TRF_001', message: expect.any(String) });
    expect(await transfersOf(merchant.merchantId)).toBe(before);
    expect(await available(a)).toBe('50');
    expect(await available(b)).toBe('0');
  });

  it('malformed JSON → 400 TRF_001', async () => {
    const res = await transfer(`{"from_terminal_id": "${a}", "to_terminal_id": "${b}", "amount": 1,`);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('TRF_001');
    expect(await available(a)).toBe('50');
  });
});

describe('POST /v1/transfers: TRF_002 (terminal not found)', () => {
  let own: string;
  let foreign: string;
  beforeAll(async () => {
    own = await newTerminal();
    foreign = stranger.terminalId;
    await fund(own, 30);
    await fund(foreign, 30);
  });

  it("another merchant's terminal as destination → 404 TRF_002, both balances unchanged", async () => {
    const res = await transfer({ from_terminal_id: own, to_terminal_id: foreign, amount: 10 });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ error: 'TRF_002', data: { terminal_id: foreign } });
    expect(await available(own)).toBe('30');
    expect(await available(foreign)).toBe('30');
  });

  it("another merchant's terminal as source → 404 TRF_002 (their money cannot be pulled), both balances unchanged", async () => {
    const res = await transfer({ from_terminal_id: foreign, to_terminal_id: own, amount: 10 });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ error: 'TRF_002', data: { terminal_id: foreign } });
    expect(await available(own)).toBe('30');
    expect(await available(foreign)).toBe('30');
  });

  it('an unknown uuid (source or destination) → 404 TRF_002', async () => {
    const unknown = '7a1c2f3e-0000-4000-8000-000000000001';
    for (const body of [
      { from_terminal_id: own, to_terminal_id: unknown, amount: 1 },
      { from_terminal_id: unknown, to_terminal_id: own, amount: 1 },
    ]) {
      const res = await transfer(body);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ error: 'TRF_002', data: { terminal_id: unknown } });
    }
    expect(await available(own)).toBe('30');
    expect(await transfersOf(stranger.merchantId)).toBe(0);
  });
});

describe('POST /v1/transfers: TRF_003 (insufficient funds)', () => {
  it('more than the source holds → 400 TRF_003 with data.available; balances and tables unchanged', async () => {
    const from = await newTerminal();
    const to = await newTerminal();
    await fund(from, 12.345678);
    const before = await transfersOf(merchant.merchantId);
    const res = await transfer({ from_terminal_id: from, to_terminal_id: to, amount: 12.345679 });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'TRF_003', data: { available: 12.345678 } });
    expect(await available(from)).toBe('12.345678');
    expect(await available(to)).toBe('0');
    expect(await transfersOf(merchant.merchantId)).toBe(before);
    await ledgerOk();
  });

  it('an empty source → TRF_003 with available 0', async () => {
    const res = await transfer({ from_terminal_id: await newTerminal(), to_terminal_id: await newTerminal(), amount: 0.000001 });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'TRF_003', data: { available: 0 } });
  });

  it('frozen funds (a pending withdrawal) are not available for a transfer', async () => {
    const from = await createTerminal(service.app, merchant.merchantId, { name: 'Frozen', withdrawal_fee: 1 });
    const to = await newTerminal();
    await fund(from.id, 100);
    const withdrawal = await signed(service.app, merchant, 'POST', '/v1/withdrawals', {
      terminal_id: from.id,
      amount: 59,
      address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
    });
    expect(withdrawal.statusCode, withdrawal.body).toBe(200);
    expect(await available(from.id)).toBe('40');
    const res = await transfer({ from_terminal_id: from.id, to_terminal_id: to, amount: 40.5 });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'TRF_003', data: { available: 40 } });
    const ok = await transfer({ from_terminal_id: from.id, to_terminal_id: to, amount: 40 });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await available(from.id)).toBe('0');
    await ledgerOk();
  });
});

/** A small deterministic generator, so a failing race run can be replayed with the same draws. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('POST /v1/transfers: concurrency', () => {
  it('200 concurrent transfers back and forth over 3 terminals and 2 instances conserve the total exactly; failures are only TRF_003', async () => {
    const other = await service.startAnother();
    const terminals = [await newTerminal(merchant, 'R1'), await newTerminal(merchant, 'R2'), await newTerminal(merchant, 'R3')];
    await fund(terminals[0]!, '100.000001');
    await fund(terminals[1]!, '50.5');
    const totalBefore = new Money('150.500001');

    const random = lcg(20240601);
    const jobs = Array.from({ length: 200 }, (_, i) => {
      const from = Math.floor(random() * 3);
      const to = (from + 1 + Math.floor(random() * 2)) % 3;
      // Mostly amounts the source may or may not cover at that moment; every 10th exceeds the whole total.
      const micro = i % 10 === 9 ? 200_000_000 + Math.floor(random() * 1e6) : 1 + Math.floor(random() * 40_000_000);
      const amount = new Money(micro).div(1e6);
      return { from: terminals[from]!, to: terminals[to]!, amount, app: i % 2 === 0 ? service.app : other.app };
    });

    const results = await Promise.all(
      jobs.map(async (job) => {
        const res = await transfer({ from_terminal_id: job.from, to_terminal_id: job.to, amount: job.amount.toNumber() }, merchant, job.app);
        return { job, status: res.statusCode, body: res.json() as Record<string, any> };
      }),
    );

    const unexpected = results.filter((r) => !(r.status === 200 || (r.status === 400 && r.body.error === 'TRF_003')));
    expect(unexpected.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([]);
    const succeeded = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 400);
    expect(succeeded.length).toBeGreaterThan(0);
    // Every 10th draw exceeds the total that exists, so at least those are refused.
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const r of succeeded)
      expect(r.body).toStrictEqual({
        success: true,
        from_terminal_id: r.job.from,
        to_terminal_id: r.job.to,
        amount: r.job.amount.toNumber(),
        currency: 'USDT',
      });

    // Each success applied exactly once, each refusal not at all: the final balances are the start plus the successful flows.
    const expected = new Map<string, Money>([
      [terminals[0]!, new Money('100.000001')],
      [terminals[1]!, new Money('50.5')],
      [terminals[2]!, new Money(0)],
    ]);
    for (const { job } of succeeded) {
      expected.set(job.from, expected.get(job.from)!.minus(job.amount));
      expected.set(job.to, expected.get(job.to)!.plus(job.amount));
    }
    let total = new Money(0);
    for (const id of terminals) {
      const balance = await available(id);
      expect(new Money(balance).isNegative()).toBe(false);
      expect(balance).toBe(expected.get(id)!.toFixed());
      total = total.plus(balance);
    }
    expect(total.toFixed()).toBe(totalBefore.toFixed());
    expect(await count('SELECT count(*) AS n FROM transfers WHERE from_terminal_id = ANY($1::uuid[])', [terminals])).toBe(succeeded.length);
    expect(
      await count(
        `SELECT count(*) AS n FROM ledger_transactions t JOIN transfers r ON r.id = t.ref_id
          WHERE t.kind = 'transfer' AND r.from_terminal_id = ANY($1::uuid[])`,
        [terminals],
      ),
    ).toBe(succeeded.length);
    await ledgerOk();
    // The other instance sees the same state.
    expect((await admin(other.app, 'GET', '/ledger/check')).json()).toEqual({ ok: true, problems: [] });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, adminOk, startTestService, type TestService } from './helpers.js';

// Seeded by src/db/migrations/002_banks_seed.sql; the spec's "Bank (directory entry)" section.
const SPEC_BANK_CODES = [
  'sberbank',
  'tinkoff',
  'alfabank',
  'vtb',
  'raiffeisenbank',
  'gazprombank',
  'ozon',
  'sovkom',
  'mts',
  'pochta',
  'rncb',
  'home_bank',
  'ros_bank',
  'uralsib',
  'promsvyazn',
  'bank_open',
  'mkb',
  'rencredit',
  'bspb',
  'ak_bars_bank',
  'kaspi',
  'halyk_bank',
  'jusan_bank',
  'forte',
  'eskhata',
  'alif_bank',
  'arvand',
  'vasl_bank',
];
const TAJIK_OPERATORS = ['tcell', 'babilon_mobile', 'megafon_tjs', 'beeline_tj', 'zet_mobile'];
const OTHER_OPERATOR_COUNTRIES = ['UZ', 'KZ', 'KG', 'AZ', 'AM', 'GE'];

interface Entry {
  code: string;
  name: string;
}
interface AdminEntry extends Entry {
  country: string;
  kind: 'bank' | 'operator';
  is_active: boolean;
  operator_code: string | null;
}

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

async function directory(): Promise<Entry[]> {
  // No headers at all: the directory is the one public endpoint (spec "Authentication" 1).
  const res = await service.app.inject({ method: 'GET', url: '/v1/public/banks' });
  expect(res.statusCode).toBe(200);
  return (res.json() as { banks: Entry[] }).banks;
}

async function operatorList(): Promise<AdminEntry[]> {
  return (await adminOk<{ banks: AdminEntry[] }>(service.app, 'GET', '/banks')).banks;
}

describe('GET /v1/public/banks', () => {
  it('answers without authentication with {banks: [{code, name}]} and nothing else', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/v1/public/banks' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['banks']);
    const banks = body.banks as Record<string, unknown>[];
    expect(banks.length).toBeGreaterThan(0);
    for (const bank of banks) {
      expect(Object.keys(bank).sort()).toEqual(['code', 'name']);
      expect(typeof bank.code).toBe('string');
      expect(typeof bank.name).toBe('string');
      expect((bank.name as string).length).toBeGreaterThan(0);
    }
    expect(new Set(banks.map((b) => b.code)).size).toBe(banks.length);
  });

  it('contains every bank code the spec lists and the five Tajik operators', async () => {
    const codes = new Set((await directory()).map((b) => b.code));
    for (const code of [...SPEC_BANK_CODES, ...TAJIK_OPERATORS]) expect(codes, code).toContain(code);
  });

  it('shows the Russian display names', async () => {
    const byCode = new Map((await directory()).map((b) => [b.code, b.name]));
    expect(byCode.get('sberbank')).toBe('Сбербанк');
    expect(byCode.get('tinkoff')).toBe('Т-Банк');
    expect(byCode.get('alfabank')).toBe('Альфа-Банк');
    expect(byCode.get('vtb')).toBe('ВТБ');
  });

  it('is sorted by name in Russian collation (Cyrillic before Latin)', async () => {
    const banks = await directory();
    const collator = new Intl.Collator('ru');
    for (let i = 1; i < banks.length; i++) {
      expect(collator.compare(banks[i - 1]!.name, banks[i]!.name), `${banks[i - 1]!.name} before ${banks[i]!.name}`).toBeLessThanOrEqual(0);
    }
    // A code-point sort would also put Cyrillic after Latin; this one pins the collation's reorder.
    const firstLatin = banks.findIndex((b) => /^[A-Za-z]/.test(b.name));
    const lastCyrillic = banks.map((b) => /^[А-яЁё]/.test(b.name)).lastIndexOf(true);
    expect(firstLatin).toBeGreaterThan(-1);
    expect(lastCyrillic).toBeLessThan(firstLatin);
  });
});

describe('the operator directory (GET /admin/v1/banks)', () => {
  it('marks the Tajik operators and has operators for UZ, KZ, KG, AZ, AM and GE', async () => {
    const all = await operatorList();
    const byCode = new Map(all.map((b) => [b.code, b]));
    for (const code of TAJIK_OPERATORS) expect(byCode.get(code), code).toMatchObject({ country: 'TJ', kind: 'operator', is_active: true });
    for (const country of OTHER_OPERATOR_COUNTRIES) {
      expect(all.filter((b) => b.country === country && b.kind === 'operator').length, country).toBeGreaterThan(0);
    }
    expect(byCode.get('sberbank')).toMatchObject({ country: 'RU', kind: 'bank' });
    expect(byCode.get('kaspi')).toMatchObject({ country: 'KZ', kind: 'bank' });
    expect(byCode.get('eskhata')).toMatchObject({ country: 'TJ', kind: 'bank' });
  });

  it('needs the operator token', async () => {
    const res = await service.app.inject({ method: 'GET', url: '/admin/v1/banks' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'AUTH_001' });
  });
});

describe('editing the directory', () => {
  it('hides an inactive entry from the public directory and shows it again when re-activated', async () => {
    const off = await adminOk<AdminEntry>(service.app, 'PATCH', '/banks/rncb', { is_active: false });
    expect(off).toMatchObject({ code: 'rncb', name: 'РНКБ', is_active: false });
    expect((await directory()).map((b) => b.code)).not.toContain('rncb');
    // The operator still sees it, so it can be switched back on.
    expect((await operatorList()).find((b) => b.code === 'rncb')).toMatchObject({ is_active: false });

    const on = await adminOk<AdminEntry>(service.app, 'PATCH', '/banks/rncb', { is_active: true });
    expect(on.is_active).toBe(true);
    expect((await directory()).find((b) => b.code === 'rncb')).toEqual({ code: 'rncb', name: 'РНКБ' });
  });

  it('answers 404 for a PATCH of an unknown code', async () => {
    const res = await admin(service.app, 'PATCH', '/banks/no_such_bank', { is_active: false });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NOT_FOUND' });
  });

  it('adds an entry with POST /admin/v1/banks, which then appears publicly', async () => {
    const res = await admin(service.app, 'POST', '/banks', { code: 'test_bank_1', name: 'Тестбанк', country: 'RU', kind: 'bank' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ code: 'test_bank_1', name: 'Тестбанк', country: 'RU', kind: 'bank', is_active: true, operator_code: null });
    expect((await directory()).find((b) => b.code === 'test_bank_1')).toEqual({ code: 'test_bank_1', name: 'Тестбанк' });
  });

  it('refuses a duplicate code with 409, the first entry untouched', async () => {
    await adminOk(service.app, 'POST', '/banks', { code: 'test_bank_2', name: 'Тестбанк', country: 'RU', kind: 'bank' });
    const dup = await admin(service.app, 'POST', '/banks', { code: 'test_bank_2', name: 'Другой', country: 'RU', kind: 'bank' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ error: 'CONFLICT', message: expect.any(String) });
    // The first entry is untouched by the refused duplicate.
    expect((await directory()).find((b) => b.code === 'test_bank_2')?.name).toBe('Тестбанк');

    const seeded = await admin(service.app, 'POST', '/banks', { code: 'sberbank', name: 'Сбер', country: 'RU' });
    expect(seeded.statusCode).toBe(409);
  });

  it('an entry added inactive stays out of the public directory', async () => {
    await adminOk(service.app, 'POST', '/banks', { code: 'dormant_bank', name: 'Спящий Банк', country: 'RU', kind: 'bank', is_active: false });
    expect((await directory()).map((b) => b.code)).not.toContain('dormant_bank');
  });

  it.each([
    ['an upper-case code', { code: 'BadCode', name: 'X', country: 'RU' }],
    ['a code with spaces', { code: 'bad code', name: 'X', country: 'RU' }],
    ['a one-letter code', { code: 'b', name: 'X', country: 'RU' }],
    ['a lower-case country', { code: 'ok_code', name: 'X', country: 'ru' }],
    ['a three-letter country', { code: 'ok_code', name: 'X', country: 'RUS' }],
    ['an empty name', { code: 'ok_code', name: '', country: 'RU' }],
    ['an unknown kind', { code: 'ok_code', name: 'X', country: 'RU', kind: 'shop' }],
    ['no country', { code: 'ok_code', name: 'X' }],
  ])('refuses %s with 400 and the error body', async (_label, body) => {
    const res = await admin(service.app, 'POST', '/banks', body);
    expect(res.statusCode).toBe(400);
    const error = res.json() as Record<string, unknown>;
    expect(error).toMatchObject({ error: 'VALIDATION', message: expect.any(String) });
    expect(String(error.message)).not.toMatch(/\n\s+at /);
    expect((await operatorList()).map((b) => b.code)).not.toContain('ok_code');
  });

  it('sorts Ё together with Е, as a Russian reader expects', async () => {
    await adminOk(service.app, 'POST', '/banks', { code: 'yolka_bank', name: 'Ёлка Банк', country: 'RU' });
    await adminOk(service.app, 'POST', '/banks', { code: 'evrofinance', name: 'Еврофинанс', country: 'RU' });
    await adminOk(service.app, 'POST', '/banks', { code: 'ermak_bank', name: 'Ермак Банк', country: 'RU' });
    const names = (await directory()).map((b) => b.name);
    // By code point Ё (U+0401) precedes А; in Russian collation it is a letter Е: Ев… < Ёл… < Ер….
    const at = names.indexOf('Ёлка Банк');
    expect(at).toBeGreaterThan(0);
    expect(names.slice(at - 1, at + 2)).toEqual(['Еврофинанс', 'Ёлка Банк', 'Ермак Банк']);
    expect(names.indexOf('Альфа-Банк')).toBeLessThan(names.indexOf('Еврофинанс'));
  });
});

describe('codes that name both a bank and a mobile operator', () => {
  it('shows mts as МТС Банк standing for the operator МТС (mts_mobile) where an operator is meant', async () => {
    const byCode = new Map((await operatorList()).map((b) => [b.code, b]));
    expect(byCode.get('mts')).toMatchObject({ kind: 'bank', country: 'RU', operator_code: 'mts_mobile' });
    expect(byCode.get('mts_mobile')).toMatchObject({ kind: 'operator', country: 'RU', name: 'МТС', operator_code: null });
    expect(byCode.get('sberbank')?.operator_code).toBeNull();
  });

  it('lets the operator link a bank to an operator of its country, and unlink it', async () => {
    await adminOk(service.app, 'POST', '/banks', { code: 'beeline_bank', name: 'Билайн Банк', country: 'RU', kind: 'bank' });
    expect(await adminOk<AdminEntry>(service.app, 'PATCH', '/banks/beeline_bank', { operator_code: 'beeline' })).toMatchObject({ operator_code: 'beeline' });
    expect(await adminOk<AdminEntry>(service.app, 'PATCH', '/banks/beeline_bank', { operator_code: null })).toMatchObject({ operator_code: null });
  });

  it.each([
    ['a bank', 'sberbank', /operator_code must be a mobile operator of RU/],
    ['an operator of another country', 'tcell', /operator_code must be a mobile operator of RU/],
    ['an unknown code', 'no_such_operator', /operator_code must be a mobile operator of RU/],
  ])('refuses %s as operator_code and changes nothing', async (_what, operatorCode, message) => {
    const res = await admin(service.app, 'PATCH', '/banks/rncb', { operator_code: operatorCode });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'VALIDATION', message: expect.stringMatching(message) });
    expect((await operatorList()).find((b) => b.code === 'rncb')?.operator_code).toBeNull();
  });

  it('refuses operator_code on an operator entry', async () => {
    const res = await admin(service.app, 'PATCH', '/banks/megafon', { operator_code: 'beeline' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/megafon is an operator itself/);
  });
});

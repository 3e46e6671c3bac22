/**
 * Request generators for the route fuzz (test/fuzz.test.ts): from a route's JSON schemas, values
 * that a client could send — mostly plausible (so that requests reach the handlers, the services
 * and the database) and, at any field, hostile ones: control characters, broken Unicode, huge
 * strings, numbers JSON cannot carry exactly, wrong types — plus bodies that are not what the route
 * takes at all.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { METHODS, REQUISITE_TYPES } from '../../src/lib/methods.js';

export type Schema = Record<string, any>;

/** Real objects of the fuzzed service, by kind, so that generated ids and codes often exist. */
export interface Pools {
  payments: string[];
  payouts: string[];
  withdrawals: string[];
  terminals: string[];
  merchants: string[];
  executors: string[];
  requisites: string[];
  notifications: string[];
  webhooks: string[];
  receipts: string[];
  providers: string[];
  extIds: string[];
  pageTokens: string[];
  assets: string[];
  cards: string[];
  webhookUrl: string;
}

/**
 * Percent-encodes everything but unreserved characters (light-my-request would encode `'` itself,
 * and the signature is over the URL as sent); unpaired surrogates, which encodeURIComponent refuses,
 * go as the bytes UTF-8 would give them.
 */
export function encodeAny(value: string): string {
  let out = '';
  for (const char of value) {
    // Iterating a string yields pairs whole and unpaired surrogates alone.
    const code = char.charCodeAt(0);
    out +=
      char.length === 1 && code >= 0xd800 && code <= 0xdfff
        ? `%ED%${(0xa0 + ((code >> 6) & 0x1f)).toString(16).toUpperCase()}%${(0x80 + (code & 0x3f)).toString(16).toUpperCase()}`
        : encodeURIComponent(char).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  }
  return out;
}

export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007bell',
  '\u001b[31mred',
  '\u0085',
  '\u009b',
  '\ud800',
  'x\udc00',
  '\r\n',
  '\t',
  'x'.repeat(5000),
  'ё'.repeat(1500),
  '😀'.repeat(40),
  "' OR 1=1 --",
  '"; DROP TABLE payments; --',
  '../../../etc/passwd',
  '<script>alert(1)</script>',
  '%00',
  '%ZZ',
  '\u202eevil',
  '0',
  '-1',
  '1e309',
  'NaN',
  'Infinity',
  'null',
  '{}',
  '[]',
  '00000000-0000-0000-0000-000000000000',
  'RUB',
  'XXX',
  'rub',
  'sberbank',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, sent as written
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
];

const HOSTILE_NUMBERS = [
  -1,
  0,
  -0,
  0.001,
  1e-7,
  0.000001,
  123.456789123,
  0.1 + 0.2,
  // biome-ignore lint/correctness/noPrecisionLoss: a number that cannot be held exactly is the point
  99999999999999.99,
  1e14,
  12345678.9,
  Number.MIN_VALUE,
  4.35,
  1.005,
  300000.01,
  99.999,
  2 ** 31,
  -(2 ** 31),
];

/** Number literals a JSON parser reads into something else than was written. */
export const RAW_NUMBERS = [
  '9007199254740993',
  '1e400',
  '-1e400',
  '1e-400',
  '0.1000000000000000055511151231257827',
  '123456789012345678901234567890',
  '1E+15',
  '1e15',
  '-0.0',
  '100.00000000000000001',
];

/** Whole bodies that are not what any route takes. */
export const RAW_BODIES = [
  'not json',
  '{',
  '}',
  '[]',
  '"text"',
  'null',
  '0',
  'true',
  '{"a":1,"a":2}',
  '{"amount":1,"amount":2}',
  '['.repeat(5000),
  '{"__proto__":{"isAdmin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  `{"x":${'['.repeat(40)}${']'.repeat(40)}}`,
];

const WRONG_TYPES: unknown[] = [null, true, false, [], {}, '100', [1, 2], { nested: { deeper: 'x' } }];

/** A value the route might accept, or a hostile one (one in ten): a field of its own, a type that is not its own. */
export function maybeHostile<T>(plausible: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 27, arbitrary: plausible as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
    { weight: 1, arbitrary: fc.constantFrom(...WRONG_TYPES) },
  );
}

/** A value for a field named `name`, plausible for what such a field means in this service. */
function hinted(name: string, pools: Pools): fc.Arbitrary<unknown> | undefined {
  const pick = (values: readonly unknown[]) => (values.length ? fc.constantFrom(...values) : undefined);
  switch (name) {
    case 'amount':
      return fc.constantFrom(100, 150, 1500, 2000.5, 300000, 5, 0.01, 1000, 777.77, 50000);
    case 'rate':
    case 'payin_rate':
    case 'payout_rate':
    case 'payout_reward':
    case 'payin_reward':
    case 'withdrawal_fee':
      return fc.constantFrom(0, 1, 2.5, 95.5, 99.99, 100, 12.34567891);
    case 'ext_id':
    case 'client_id':
      return fc.oneof(
        fc.constantFrom(...pools.extIds),
        fc.string({ minLength: 1, maxLength: 40 }).map((s) => `fz-${s}`),
      );
    case 'method':
      return fc.oneof({ weight: 6, arbitrary: fc.constantFrom('CARD', 'SBP', 'card', 'sbp') }, { weight: 2, arbitrary: fc.constantFrom(...METHODS, 'FOO') });
    case 'methods':
      return fc.oneof(
        { weight: 6, arbitrary: fc.constant(['CARD']) },
        { weight: 1, arbitrary: fc.array(fc.constantFrom(...METHODS, 'PAYOUT'), { maxLength: 4 }) },
      );
    case 'type':
      return fc.oneof({ weight: 6, arbitrary: fc.constant('card') }, { weight: 1, arbitrary: fc.constantFrom(...REQUISITE_TYPES, 'iban') });
    case 'currency':
      return fc.oneof({ weight: 6, arbitrary: fc.constant('RUB') }, { weight: 1, arbitrary: fc.constantFrom('KZT', 'TJS', 'AZN', 'UZS', 'USDT', 'EUR') });
    case 'currencies':
      return fc.array(fc.constantFrom('RUB', 'KZT', 'TJS', 'AZN', 'usd'), { maxLength: 3 });
    case 'country':
      return fc.oneof({ weight: 6, arbitrary: fc.constant('RU') }, { weight: 1, arbitrary: fc.constantFrom('KZ', 'TJ', 'UZ', 'VN', 'US') });
    case 'bank':
    case 'bank_code':
      return fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('sberbank', 'tinkoff') },
        { weight: 1, arbitrary: fc.constantFrom('mts', 'mts_mobile', 'kaspi', 'nosuch') },
      );
    case 'requisites':
    case 'card_number':
    case 'value':
      return fc.oneof(pick(pools.cards)!, fc.constantFrom('+79161234567', '89161234567', '2200 7001 2345 6789'));
    case 'phone':
      return fc.constantFrom('+79161234567', '89161234567', '+992900000000');
    case 'terminal_id':
    case 'from_terminal_id':
    case 'to_terminal_id':
      return pick(pools.terminals);
    case 'requisite_id':
      return pick(pools.requisites);
    case 'payment_id':
      return pick(pools.payments);
    case 'provider_id':
      return pick(pools.providers);
    case 'executor_id':
      return pick(pools.executors);
    case 'merchant_id':
      return pick(pools.merchants);
    case 'address':
      return fc.constantFrom('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', '0xdeadbeef');
    case 'tx_hash':
      return fc.constantFrom('a'.repeat(64), 'b1'.repeat(32), 'zz');
    case 'notify_url':
    case 'return_url':
    case 'receipt_url':
    case 'base_url':
      return fc.constantFrom(pools.webhookUrl, 'https://example.com/hook', 'http://169.254.169.254/latest', 'ftp://x', 'http://[::1]:9/');
    case 'received_at':
      return fc.integer({ min: 0, max: 4_000_000_000_000 }).map((ms) => new Date(ms).toISOString());
    case 'text':
      return fc.constantFrom(
        'Поступление 1 500,00 RUR на счет *1234 от ИВАН ИВАНОВ. Баланс 5 000,00 RUR',
        'СЧЁТ1234 12:34 Перевод 150р от Сергей С. Баланс: 879.81р',
        'Покупка 500 ₽ SHOP',
        'Код подтверждения 1234',
      );
    case 'is_active':
    case 'subtract_fee_from_amount':
    case 'executors':
      return fc.boolean();
    case 'kind':
      return fc.constantFrom('kassir', 'bank', 'operator', 'other');
    case 'code':
    case 'operator_code':
      return fc.constantFrom('mts_mobile', 'zz_bank', 'sberbank', 'BAD CODE');
    default:
      return undefined;
  }
}

/** Values a JSON schema describes (the subset TypeBox writes), with hints by field name. */
export function fromSchema(schema: Schema | undefined, pools: Pools, name = '', depth = 0): fc.Arbitrary<unknown> {
  const hint = hinted(name, pools);
  if (hint) return maybeHostile(hint);
  if (!schema || depth > 5) return fc.constantFrom(...WRONG_TYPES);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Schema) => fromSchema(s, pools, name, depth + 1)));
  if (schema.const !== undefined) return maybeHostile(fc.constant(schema.const));
  if (schema.enum) return maybeHostile(fc.constantFrom(...schema.enum));
  switch (schema.type) {
    case 'string':
      if (schema.format === 'uuid') return maybeHostile(fc.oneof(fc.uuid(), fc.constant(randomUUID())));
      if (schema.format === 'date-time') return maybeHostile(fc.integer({ min: 0, max: 4e12 }).map((ms) => new Date(ms).toISOString()));
      if (schema.pattern) return maybeHostile(fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 2048)));
      return maybeHostile(fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 60) }));
    case 'number':
    case 'integer':
      return maybeHostile(fc.oneof(fc.integer({ min: -10, max: 1_000_000 }), fc.double({ min: -1e6, max: 1e12, noNaN: true, noDefaultInfinity: true })));
    case 'boolean':
      return maybeHostile(fc.boolean());
    case 'null':
      return fc.constant(null);
    case 'array':
      return maybeHostile(fc.array(fromSchema(schema.items, pools, name, depth + 1), { maxLength: 4 }));
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const entries = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, fromSchema(value, pools, key, depth + 1)]));
      const required = new Set<string>(schema.required ?? []);
      // Each required field is missing from one body in thirty, so that most get past "x is required";
      // each optional one in one of three, so that most bodies are coherent enough to be taken.
      return fc
        .record(
          Object.fromEntries(
            Object.entries(entries).map(([key, arbitrary]) => {
              const presence = required.has(key)
                ? fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 29, arbitrary })
                : fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
              return [key, presence];
            }),
          ),
        )
        .map((value) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)));
    }
    default:
      return fc.constantFrom(...WRONG_TYPES);
  }
}

/** Field names a body without a schema may still read (confirm, dispute, fail, …). */
const LOOSE_FIELDS = ['amount', 'comment', 'reason', 'receipt_url', 'tx_hash', 'grace_hours', 'text', 'data', 'is_active'];

/** A JSON body for a route: from its schema, or loose fields when it has none. */
export function bodyText(schema: Schema | undefined, pools: Pools): fc.Arbitrary<string | undefined> {
  const value = schema
    ? fromSchema(schema, pools)
    : fc.option(fc.dictionary(fc.constantFrom(...LOOSE_FIELDS), maybeHostile(fc.string({ maxLength: 30 })), { maxKeys: 4 }), { nil: undefined });
  // One body in eight with a number literal JSON.stringify would never write.
  const rawNumber = fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...RAW_NUMBERS) });
  const serialised = fc.tuple(value, rawNumber).map(([body, raw]) => {
    if (body === undefined) return undefined;
    // A number literal JSON.stringify would never write, in place of one field of an object body.
    if (raw !== null && body !== null && typeof body === 'object' && !Array.isArray(body)) {
      const keys = Object.keys(body);
      if (keys.length > 0) {
        const marker = '"__raw_number__"';
        // The field: the one with the most characters in its name, so it varies with the body.
        const key = keys.reduce((a, b) => (b.length > a.length ? b : a));
        return JSON.stringify({ ...body, [key]: '__raw_number__' }).replace(marker, raw);
      }
    }
    return JSON.stringify(body);
  });
  return fc.oneof({ weight: 14, arbitrary: serialised }, { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES) });
}

/** Query-string vocabulary of the list routes, with values plausible or hostile. */
export function queryString(documented: string[], pools: Pools): fc.Arbitrary<string> {
  const names = [
    ...new Set([...documented, 'status', 'limit', 'offset', 'from', 'to', 'ext_id', 'merchant_id', 'terminal_id', 'executor_id', 'lang', 'error']),
  ];
  const value = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '10',
        '0',
        '1000',
        '1001',
        '-1',
        'abc',
        'PENDING',
        'COMPLETED',
        'pending',
        'ru',
        'en',
        '2026-01-01',
        '2026-01-01T00:00:00Z',
        'not-a-date',
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(...pools.terminals, ...pools.merchants, ...pools.extIds) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((s) => s.length < 100)) },
  );
  return fc
    .array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 3 })
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${encodeAny(v)}`).join('&')}` : ''));
}

/** A path parameter: usually a real object of the kind the path names, sometimes anything. */
export function pathValue(pool: string[]): fc.Arbitrary<string> {
  const hostile = fc.constantFrom(...HOSTILE_STRINGS.filter((s) => s.length > 0 && s.length < 200)).map(encodeAny);
  return fc.oneof(
    { weight: 6, arbitrary: pool.length ? fc.constantFrom(...pool) : fc.uuid() },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: hostile },
    { weight: 1, arbitrary: fc.constantFrom('%ZZ', '%C0%AF', '%FF', '%F0%9F', 'a%2Fb', '..', '%2e%2e') },
  );
}

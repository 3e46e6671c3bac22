import { Writable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { maskCard, maskDeep, maskPhone, maskSensitive, maskUrl } from './mask.js';
import { luhnValid } from './validators.js';

/** A pino destination that keeps every written line, parsed. */
function captureLog(level = 'info') {
  const lines: Record<string, any>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  return { log: createLogger(level, destination), lines, raw };
}

describe('maskCard / maskPhone', () => {
  it('keeps the first 6 and last 4 digits of a card, whatever the grouping', () => {
    expect(maskCard('4276 1234 5678 9012')).toBe('427612******9012');
    expect(maskCard('4276-1234-5678-9012')).toBe('427612******9012');
    expect(maskCard('2200123456789012345')).toBe('220012*********2345');
    expect(maskCard('4111111111111')).toBe('411111***1111');
  });

  it('keeps the country code and the last 2 digits of a phone', () => {
    expect(maskPhone('+79123456789')).toBe('+7********89');
    expect(maskPhone('+7 (912) 345-67-89')).toBe('+7********89');
    expect(maskPhone('89123456789')).toBe('8********89');
  });
});

describe('maskSensitive in free text', () => {
  it.each([
    ['paid with 4111111111111111 today', 'paid with 411111******1111 today'],
    ['paid with 4111 1111 1111 1111 today', 'paid with 411111******1111 today'],
    ['paid with 4111-1111-1111-1111.', 'paid with 411111******1111.'],
    ['pan=5536913812345678,holder=IVAN', 'pan=553691******5678,holder=IVAN'],
    ['/v1/payments/by-ext-id/4111111111111111?x=1', '/v1/payments/by-ext-id/411111******1111?x=1'],
    ['19 digits: 2200123456789012345', '19 digits: 220012*********2345'],
  ])('masks the card in %j', (text, expected) => {
    expect(maskSensitive(text)).toBe(expected);
  });

  it.each([
    ['call +79123456789 now', 'call +7********89 now'],
    ['call +7 912 345-67-89 now', 'call +7********89 now'],
    ['call +7 (912) 345-67-89 now', 'call +7********89 now'],
    ['call 89123456789', 'call 8********89'],
    ['tj +992 93 123 45 67', 'tj +9*********67'],
  ])('masks the phone in %j', (text, expected) => {
    expect(maskSensitive(text)).toBe(expected);
  });

  it('masks a card and a phone in the same text', () => {
    expect(maskSensitive('card 2200 1234 5678 9012, phone +79123456789')).toBe('card 220012******9012, phone +7********89');
  });

  it.each([
    // UUIDs whose segments are all digits were once read as a card or a phone and garbled.
    'payment 123e4567-e89b-12d3-a456-426614174000 created',
    'request 550e8400-e29b-41d4-a716-446655440000',
    'request 7f3c2a10-5a5b-4c6d-9e8f-1234567890ab',
    'nil 00000000-0000-0000-0000-000000000000',
    'UPPER 550E8400-E29B-41D4-A716-446655440000',
    'amount 1500.00 RUB',
    'amount 300000',
    'credited 12345.678901 USDT at rate 95.50000000',
    'at 2024-01-15T10:30:00.000Z',
    'at 2024-01-15 10:30:00+00',
    'at 2024-01-15 10:30:00.123456',
    'from 192.168.100.200:5432',
    'ext_id order-1234567',
    'ms 12.3, status 404',
    'hash a1b2c3d4e5f6a7b8c9d0',
    // A Tron transaction hash with a 14-digit run in it, as a withdrawal's log line has.
    'tx_hash 6fc2c475cffee12878912345678593f1058d057e459b7bd1345b78caba5be38d',
  ])('leaves %j untouched', (text) => {
    expect(maskSensitive(text)).toBe(text);
  });

  it('still masks a card written right next to a UUID or a timestamp', () => {
    expect(maskSensitive('550e8400-e29b-41d4-a716-446655440000 4111111111111111 2024-01-15T10:30:00Z')).toBe(
      '550e8400-e29b-41d4-a716-446655440000 411111******1111 2024-01-15T10:30:00Z',
    );
  });

  it('never lets a Luhn-valid card number through, however it is grouped or surrounded', () => {
    const digits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map((body) => {
      const prefix = body.join('');
      for (let check = 0; check < 10; check++) if (luhnValid(prefix + check)) return prefix + check;
      throw new Error('unreachable');
    });
    const words = fc.string({ unit: fc.constantFrom('a', 'Я', ' ', ',', ':', '=', '/', '"', '_'), maxLength: 12 });
    fc.assert(
      fc.property(words, digits, fc.constantFrom('', ' ', '-'), words, (before, card, separator, after) => {
        const grouped = card.match(/.{4}/g)!.join(separator);
        expect(maskSensitive(`${before}${grouped}${after}`)).toBe(`${before}${card.slice(0, 6)}******${card.slice(12)}${after}`);
      }),
    );
  });
});

describe('maskDeep', () => {
  it('masks strings at any depth and leaves numbers, booleans and nulls alone', () => {
    const record = {
      card: '4111 1111 1111 1111',
      nested: { phones: ['+79123456789', 'none'], id: '123e4567-e89b-12d3-a456-426614174000' },
      amount: 4111111111111111,
      ok: true,
      none: null,
    };
    expect(maskDeep(record)).toEqual({
      card: '411111******1111',
      nested: { phones: ['+7********89', 'none'], id: '123e4567-e89b-12d3-a456-426614174000' },
      amount: 4111111111111111,
      ok: true,
      none: null,
    });
    expect(record.card).toBe('4111 1111 1111 1111');
  });
});

describe('the service logger', () => {
  /** The cards and phones the tests below log, in the shapes they are logged in. */
  const LOGGED_SECRETS = ['4111111111111111', '4111 1111', '2200-1234', '2200123456789012', '9123456789', '912 345'];

  it('masks a card and a phone in the message', () => {
    const { log, lines, raw } = captureLog();
    log.info('payer 4111111111111111 called from +7 912 345-67-89');
    expect(lines.map((line) => line.msg)).toEqual(['payer 411111******1111 called from +7********89']);
    const everything = raw.join('\n');
    for (const secret of LOGGED_SECRETS) expect(everything).not.toContain(secret);
  });

  it('masks a card and a phone in the format arguments', () => {
    const { log, lines, raw } = captureLog();
    log.info('formatted %s / %s', '4111 1111 1111 1111', '+79123456789');
    expect(lines.map((line) => line.msg)).toEqual(['formatted 411111******1111 / +7********89']);
    const everything = raw.join('\n');
    for (const secret of LOGGED_SECRETS) expect(everything).not.toContain(secret);
  });

  it('masks a card and a phone in fields', () => {
    const { log, lines, raw } = captureLog();
    log.info({ requisite: { value: '2200-1234-5678-9012' }, phone: '89123456789' }, 'fields');
    expect(lines.map((line) => line.msg)).toEqual(['fields']);
    expect(lines[0]).toMatchObject({ requisite: { value: '220012******9012' }, phone: '8********89' });
    const everything = raw.join('\n');
    for (const secret of LOGGED_SECRETS) expect(everything).not.toContain(secret);
  });

  it('masks card numbers inside a logged error: message, stack and extra fields (a pg error detail)', () => {
    const { log, lines, raw } = captureLog();
    const error = Object.assign(new Error('duplicate requisite 4111111111111111'), {
      detail: 'Key (value)=(4111111111111111) already exists.',
    });
    log.error({ err: error }, 'request failed');
    log.error(error);
    expect(raw.join('\n')).not.toContain('4111111111111111');
    expect(lines[0]!.err).toMatchObject({
      message: 'duplicate requisite 411111******1111',
      detail: 'Key (value)=(411111******1111) already exists.',
    });
    expect(lines[0]!.err.stack).toContain('Error: duplicate requisite 411111******1111');
    expect(lines[1]).toMatchObject({ msg: 'duplicate requisite 411111******1111', err: { detail: 'Key (value)=(411111******1111) already exists.' } });
  });

  it('writes ids and timestamps unchanged', () => {
    const { log, lines } = captureLog();
    log.info({ payment_id: '123e4567-e89b-12d3-a456-426614174000', valid_until: '2024-01-15 10:30:00+00', amount: '1500.00' }, 'created');
    expect(lines[0]).toMatchObject({ payment_id: '123e4567-e89b-12d3-a456-426614174000', valid_until: '2024-01-15 10:30:00+00', amount: '1500.00' });
  });
});

describe('maskUrl', () => {
  it.each([
    ['/v1/payments/by-ext-id/4111111111111111', '/v1/payments/by-ext-id/411111******1111'],
    ['/v1/payments/by-ext-id/4111%201111%201111%201111', '/v1/payments/by-ext-id/411111******1111'],
    ['/v1/x?card=4111+1111+1111+1111&a=1', '/v1/x?card=411111******1111&a=1'],
    ['/v1/x?card=4111%2D1111%2D1111%2D1111&bad=%ZZ', '/v1/x?card=411111******1111&bad=%ZZ'],
    ['/v1/x?phone=%2B7%20912%20345-67-89', '/v1/x?phone=+7********89'],
  ])('masks %j', (url, expected) => {
    expect(maskUrl(url)).toBe(expected);
  });

  it.each([
    '/v1/payments/123e4567-e89b-12d3-a456-426614174000',
    '/v1/payments/by-ext-id/order%20%231?from=2024-01-15T10:30:00Z&q=a+b',
    '/v1/payments/by-ext-id/%E2%9C%93',
  ])('leaves %j exactly as received', (url) => {
    expect(maskUrl(url)).toBe(url);
  });
});

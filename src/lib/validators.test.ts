import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc16ccitt, emvProblem, luhnValid, normalizeCard, normalizePhone } from './validators.js';

describe('card numbers', () => {
  it('accepts Luhn-valid numbers of 13–19 digits, with spaces or dashes', () => {
    expect(normalizeCard('4111 1111 1111 1111')).toBe('4111111111111111');
    expect(normalizeCard('5555-5555-5555-4444')).toBe('5555555555554444');
  });

  it('refuses a wrong check digit, letters and wrong lengths', () => {
    expect(normalizeCard('4111111111111112')).toBeUndefined();
    expect(normalizeCard('4111a11111111111')).toBeUndefined();
    expect(normalizeCard('411111111111')).toBeUndefined();
  });

  it('detects every single-digit change (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{15}$/), fc.nat(14), fc.integer({ min: 1, max: 9 }), (body, position, delta) => {
        let valid = '';
        for (let check = 0; check < 10; check++) if (luhnValid(body + check)) valid = body + check;
        const digits = valid.split('');
        digits[position] = String((Number(digits[position]) + delta) % 10);
        return luhnValid(valid) && !luhnValid(digits.join(''));
      }),
    );
  });
});

describe('phone numbers', () => {
  it('normalises to E.164, reading Russian national forms', () => {
    expect(normalizePhone('+7 (912) 345-67-89')).toBe('+79123456789');
    expect(normalizePhone('89123456789')).toBe('+79123456789');
    expect(normalizePhone('9123456789')).toBe('+79123456789');
    expect(normalizePhone('+992 90 123 4567')).toBe('+992901234567');
  });

  it('refuses what is not a phone number', () => {
    expect(normalizePhone('12345')).toBeUndefined();
    expect(normalizePhone('+7 912 abc')).toBeUndefined();
    expect(normalizePhone('+1234567890123456')).toBeUndefined();
  });
});

describe('EMV QR payloads', () => {
  const tlv = (tag: string, value: string) => tag + String(value.length).padStart(2, '0') + value;
  const withCrc = (body: string) => `${body}6304${crc16ccitt(`${body}6304`)}`;

  it('computes CRC-16/CCITT-FALSE (check value of "123456789" is 29B1)', () => {
    expect(crc16ccitt('123456789')).toBe('29B1');
  });

  it('accepts a well-formed payload and refuses a broken CRC, a missing CRC or a bad start', () => {
    const payload = withCrc(tlv('00', '01') + tlv('01', '12') + tlv('58', 'VN') + tlv('54', '100000'));
    expect(emvProblem(payload)).toBeUndefined();
    expect(emvProblem(payload.slice(0, -1) + (payload.endsWith('0') ? '1' : '0'))).toMatch(/CRC mismatch/);
    expect(emvProblem(tlv('00', '01') + tlv('58', 'VN'))).toMatch(/no CRC/);
    expect(emvProblem('hello')).toMatch(/starts with 000201/);
  });
});

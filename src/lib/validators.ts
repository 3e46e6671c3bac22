/** Validation of the things payers type or scan: card numbers, phone numbers, EMV QR payloads. */

/** Luhn check of a card number given as digits. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A card number without spaces or dashes when it has 13–19 digits and passes Luhn. */
export function normalizeCard(value: string): string | undefined {
  const digits = value.replace(/[\s-]/g, '');
  return /^\d{13,19}$/.test(digits) && luhnValid(digits) ? digits : undefined;
}

/**
 * An international phone number as `+` and 10–15 digits (E.164). Russian numbers written
 * nationally (`8 912 …`, `912 …`) become `+7…`.
 */
export function normalizePhone(value: string): string | undefined {
  const compact = value.replace(/[\s()-]/g, '');
  if (!/^\+?\d+$/.test(compact)) return undefined;
  let digits = compact.replace(/^\+/, '');
  if (!compact.startsWith('+')) {
    if (digits.length === 11 && digits.startsWith('8')) digits = `7${digits.slice(1)}`;
    else if (digits.length === 10 && digits.startsWith('9')) digits = `7${digits}`;
  }
  return digits.length >= 10 && digits.length <= 15 ? `+${digits}` : undefined;
}

/** A Russian mobile number: +7 9XX XXX-XX-XX. */
export function isRussianMobile(e164: string): boolean {
  return /^\+79\d{9}$/.test(e164);
}

/** CRC-16/CCITT-FALSE, the checksum of EMV QR payloads (tag 63). */
export function crc16ccitt(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/**
 * An EMV merchant-presented QR payload: TLV fields starting with payload format `000201` and
 * ending with a CRC (`6304XXXX`) that matches. Returns a reason when it is not one.
 */
export function emvProblem(payload: string): string | undefined {
  if (!payload.startsWith('000201')) return 'an EMV QR payload starts with 000201';
  let i = 0;
  while (i < payload.length) {
    const tag = payload.slice(i, i + 2);
    const length = Number(payload.slice(i + 2, i + 4));
    if (!/^\d{2}$/.test(tag) || !/^\d{2}$/.test(payload.slice(i + 2, i + 4)) || i + 4 + length > payload.length) {
      return `malformed EMV field at position ${i}`;
    }
    if (tag === '63') {
      if (length !== 4 || i + 8 !== payload.length) return 'the CRC field (63) must be last and 4 characters long';
      const expected = crc16ccitt(payload.slice(0, i + 4));
      return payload.slice(i + 4).toUpperCase() === expected ? undefined : `EMV CRC mismatch (expected ${expected})`;
    }
    i += 4 + length;
  }
  return 'the EMV payload has no CRC field (63)';
}

/** A UUID in its canonical text form: ids that are not one are "not found" without asking the database. */
export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

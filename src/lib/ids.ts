import { randomBytes } from 'node:crypto';

/**
 * Ids and tokens for rows that only grow (issue 38; docs/performance.md "Time-ordered ids").
 *
 * A random key puts each new row's index entry on a random leaf of an index as big as the table:
 * at 10^7 payments, a leaf neither cached nor touched since the last checkpoint (read, and logged
 * whole at its first change). A key that starts with the time puts it on the leaves just written.
 */

let lastMs = 0;
let lastSeq = 0;

/**
 * An RFC 9562 version 7 uuid: the Unix time in milliseconds (48 bits), the version, 12 bits that
 * keep the ids of this process in the order they were made (a counter within a millisecond,
 * starting at a random value below 2048; past 4095 the time moves on a millisecond), the variant
 * and 62 random bits. The database's uuid_v7() (migration 060) makes the same kind. No secret:
 * an id reveals when its row was made, which the API returns beside it (created_at).
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = Math.max(now, lastMs);
  let seq: number;
  if (ms === lastMs) {
    seq = lastSeq + 1;
    if (seq > 0xfff) {
      ms += 1;
      seq = ((bytes[6]! << 8) | bytes[7]!) & 0x7ff;
    }
  } else {
    seq = ((bytes[6]! << 8) | bytes[7]!) & 0x7ff;
  }
  lastMs = ms;
  lastSeq = seq;
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (seq >> 8);
  bytes[7] = seq & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The random part of a page token: 24 bytes (192 bits), 32 base64url characters. */
export const PAGE_TOKEN_RANDOM_BYTES = 24;

/**
 * A payment page's token (the payer's only credential for the page, so unguessable): the creation
 * time in milliseconds as 12 hexadecimal digits, then 24 random bytes in base64url (192 bits).
 * The prefix orders the tokens by time in payments_page_token_key under any collation (digits and
 * a–f sort alike in all), so that a new token's entry lands on the leaves just written, not on a
 * random one of 10^7 entries; the random part alone makes it unguessable. Tokens made before
 * (32 random characters, no prefix) are looked up as they are.
 */
export function pageToken(now: number = Date.now()): string {
  return now.toString(16).padStart(12, '0') + randomBytes(PAGE_TOKEN_RANDOM_BYTES).toString('base64url');
}

import { describe, expect, it } from 'vitest';
import { pageToken, uuidv7 } from './ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('is a version 7 uuid whose first 48 bits are the time in milliseconds', () => {
    const id = uuidv7(Date.UTC(2026, 10, 28, 7, 0, 0, 123));
    expect(id).toMatch(V7);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(Date.UTC(2026, 10, 28, 7, 0, 0, 123));
  });

  it('comes out in the order made, within one millisecond too, and never repeats', () => {
    const ids = Array.from({ length: 10_000 }, () => uuidv7());
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // the same instant given again (a clock that stood still or went back) still orders after
    const now = Date.now();
    const a = uuidv7(now + 10_000);
    const b = uuidv7(now);
    expect(b > a).toBe(true);
  });
});

describe('pageToken', () => {
  it('is the time as 12 hexadecimal digits, then 32 base64url characters of 24 random bytes', () => {
    const at = Date.UTC(2026, 10, 28, 7, 0, 0, 0);
    const token = pageToken(at);
    expect(token).toMatch(/^[0-9a-f]{12}[A-Za-z0-9_-]{32}$/);
    expect(Number.parseInt(token.slice(0, 12), 16)).toBe(at);
    const tails = Array.from({ length: 1000 }, () => pageToken(at).slice(12));
    expect(new Set(tails).size).toBe(1000);
    // every base64url character shows up at every place: 1000 draws from 64 (a counter or a time would not)
    for (let c = 0; c < 32; c++) expect(new Set(tails.map((t) => t[c])).size).toBeGreaterThan(50);
  });

  it('sorts by time as text', () => {
    expect(pageToken(1_000_000) < pageToken(1_000_001)).toBe(true);
    expect(pageToken(0xfffffffff) < pageToken(0x1000000000)).toBe(true);
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './crypto.js';

describe('SecretBox', () => {
  it('opens what it sealed, again and again', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('merchant secret');
    expect(sealed).toMatch(/^v1\./);
    expect(box.open(sealed)).toBe('merchant secret');
    expect(box.open(sealed)).toBe('merchant secret');
  });

  it('seals the same secret differently each time', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('merchant secret');
    expect(box.seal('merchant secret')).not.toBe(sealed);
  });

  it('refuses a tampered sealed secret even after opening the original, and another key cannot open it', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal('merchant secret');
    box.open(sealed);
    const [version, iv, tag, body] = sealed.split('.');
    const flipped = Buffer.from(body!, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open([version, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});

import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A random, URL-safe token with `bytes` bytes of entropy and an optional readable prefix. */
export function randomToken(prefix = '', bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** SHA-256 of a high-entropy token: enough for values that only need checking (keys, tokens). */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  // Hashing first gives equal lengths, so timingSafeEqual never throws or leaks the length.
  return timingSafeEqual(left, right) && a.length === b.length;
}

/** base64(HMAC-SHA1(secret, data)): the spec's request signature and DESIGN.md's webhook signature. */
export function hmacSha1Base64(secret: string, ...parts: (string | Buffer)[]): string {
  const hmac = createHmac('sha1', secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest('base64');
}

/** Opened secrets SecretBox remembers. */
const OPENED_MAX = 10_000;

/**
 * AES-256-GCM sealing of secrets that must be usable later (merchant Secret Keys, provider
 * credentials). Format: `v1.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
    this.key = masterKey;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  /**
   * Opens a sealed secret. Secrets are opened often — a merchant's on every webhook delivery and
   * every identity read (IdentityCache misses), a provider's on every call — so what was opened is
   * remembered (a bounded map from sealed text to plaintext: the same sealed text always opens to
   * the same plaintext). Which secrets are valid is decided by the callers' reads, never here.
   */
  open(sealed: string): string {
    let plaintext = this.opened.get(sealed);
    if (plaintext === undefined) {
      plaintext = this.decrypt(sealed);
      if (this.opened.size >= OPENED_MAX) this.opened.delete(this.opened.keys().next().value!);
      this.opened.set(sealed, plaintext);
    }
    return plaintext;
  }

  private readonly opened = new Map<string, string>();

  private decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unknown sealed secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  /**
   * HMAC-SHA256 of `value` under the master key, for `purpose` (hex): a value that must be found
   * again by equality but never kept in clear (a blocked card number or phone, issue 36).
   */
  keyedHash(purpose: string, value: string): string {
    return createHmac('sha256', this.key).update(purpose).update('\0').update(value).digest('hex');
  }

  /** A value that proves which master key sealed the database's secrets, without revealing it. */
  fingerprint(): string {
    return createHmac('sha256', this.key).update('kassir master key check').digest('base64url');
  }
}

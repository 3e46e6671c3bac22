import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { DomainError } from '../errors.js';
import { constantTimeEqual } from '../lib/crypto.js';

/**
 * The spec's request signature, computed over the body bytes as they are read:
 * `base64(HMAC-SHA1(secret, METHOD + URL + BODY))` (spec "Authentication" 2; DESIGN.md decision 2),
 * with URL = PUBLIC_BASE_URL + path and query exactly as sent and BODY the raw bytes as received
 * (multipart boundaries and file content included). One HMAC per currently valid secret, so a
 * rotation's grace period costs nothing extra when there is only one.
 */
export class BodySigner {
  private readonly hmacs: Hmac[];
  private digests: string[] | undefined;
  /** SHA-256 of METHOD + URL + BODY: what an Idempotency-Key is compared on. */
  private readonly request: Hash;
  private requestDigest: Buffer | undefined;

  constructor(
    secrets: string[],
    private readonly method: string,
    /** The URL signed: PUBLIC_BASE_URL + the path and query as sent. */
    private readonly url: string,
  ) {
    this.hmacs = secrets.map((secret) => createHmac('sha1', secret).update(method.toUpperCase() + url));
    this.request = createHash('sha256').update(`${method.toUpperCase()} ${url}\n`);
  }

  update(chunk: Buffer): void {
    for (const hmac of this.hmacs) hmac.update(chunk);
    this.request.update(chunk);
  }

  /** The request's fingerprint, once the body has been read. */
  requestHash(): Buffer {
    this.requestDigest ??= this.request.digest();
    return this.requestDigest;
  }

  /** True when `signature` matches one of the secrets; constant-time for each comparison. */
  matches(signature: string): boolean {
    this.digests ??= this.hmacs.map((hmac) => hmac.digest('base64'));
    let ok = false;
    // Every candidate is compared, so the time taken does not tell which secret matched.
    for (const digest of this.digests) ok = constantTimeEqual(digest, signature.trim()) || ok;
    return ok;
  }

  /**
   * The answer to a request whose API key is known but whose signature does not match: what was
   * expected to be signed, spelled out (never the secret), since a wrong host or port in the URL —
   * a service behind a proxy, `localhost` against `127.0.0.1` — is the usual cause.
   */
  mismatch(): DomainError {
    return new DomainError(
      'AUTH_002',
      `The signature does not match: X-Signature must be base64(HMAC-SHA1(Secret Key, ${this.method.toUpperCase()} + "${this.url}" + the body bytes)); the URL starts with this service's PUBLIC_BASE_URL whatever address the request was sent to`,
      { signed_method: this.method.toUpperCase(), signed_url: this.url },
    );
  }

  /** A pass-through stream that feeds every body byte into the signature. */
  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
        this.update(chunk);
        done(null, chunk);
      },
    });
  }
}

/** Signs a request the way a merchant must; used by tests, the example in docs/merchant.md ("A signed request") and the CLI. */
export function signRequest(secret: string, method: string, url: string, body: string | Buffer = ''): string {
  return createHmac('sha1', secret)
    .update(method.toUpperCase() + url)
    .update(body)
    .digest('base64');
}

/**
 * The spec's signature ("Authentication" 2): `base64(HMAC-SHA1(secret, METHOD + URL + BODY))`, with
 * METHOD upper-case, URL the service's public base URL plus the path and query exactly as sent, and
 * BODY the raw bytes exactly as sent (every byte of a multipart body; nothing for a GET). Webhooks
 * are signed the same way over their body alone (DESIGN.md decision 9). WebCrypto only, so the SDK
 * runs wherever `fetch` does.
 */

const encoder = new TextEncoder();

/** UTF-8 bytes of a string; bytes are passed through. */
export function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value;
}

function subtle(): SubtleCrypto {
  const crypto = globalThis.crypto;
  if (!crypto?.subtle) throw new Error('Kassir SDK: WebCrypto (globalThis.crypto.subtle) is not available in this runtime');
  return crypto.subtle;
}

/** An HMAC-SHA1 key made from a merchant Secret Key (imported once, reused for every request). */
export function importSecret(secret: string): Promise<CryptoKey> {
  return subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
}

/** HMAC-SHA1 over the concatenation of `parts`. */
export async function hmacSha1(key: CryptoKey | string, ...parts: (string | Uint8Array)[]): Promise<Uint8Array> {
  const cryptoKey = typeof key === 'string' ? await importSecret(key) : key;
  const chunks = parts.map(toBytes);
  const message = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    message.set(chunk, offset);
    offset += chunk.length;
  }
  return new Uint8Array(await subtle().sign('HMAC', cryptoKey, message));
}

/** The `X-Signature` of a request: base64(HMAC-SHA1(secret, METHOD + URL + BODY)). */
export async function signRequest(secret: CryptoKey | string, method: string, url: string, body: string | Uint8Array = ''): Promise<string> {
  return toBase64(await hmacSha1(secret, method.toUpperCase() + url, body));
}

/** Standard base64 (with padding), as the service writes signatures. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Bytes of a standard base64 string; undefined when it is not one. */
export function fromBase64(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * Compares `given` with `expected` in time that depends only on the length of `expected` (an
 * HMAC's length is public), never on where they first differ.
 */
export function timingSafeEqual(expected: Uint8Array, given: Uint8Array): boolean {
  let diff = expected.length ^ given.length;
  for (let i = 0; i < expected.length; i++) diff |= expected[i]! ^ (given[i] ?? 0);
  return diff === 0;
}

import { toBytes } from './signing.js';
import type { ReceiptFile } from './types.js';

/** A multipart/form-data body as the exact bytes to sign and send. */
export interface MultipartBody {
  body: Uint8Array;
  contentType: string;
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  pdf: 'application/pdf',
};

/**
 * Builds a multipart/form-data body byte by byte, so that the signature covers exactly what is sent
 * (spec "Authentication" 2: "the whole multipart body including boundaries and file content").
 * `fields` become text parts, then the file goes in part `receipt`. A boundary that happens to occur
 * in the content is replaced by a fresh one.
 */
export async function buildMultipart(fields: Record<string, string>, file?: ReceiptFile): Promise<MultipartBody> {
  const content = file ? await fileBytes(file.data) : undefined;
  const filename = file ? safeFilename(file) : undefined;
  const fileType = file ? (file.contentType ?? typeFromName(filename!) ?? 'application/octet-stream') : undefined;
  const texts = Object.values(fields).map(toBytes);
  for (;;) {
    const boundary = `----kassir-sdk-${randomHex(16)}`;
    const marker = toBytes(`--${boundary}`);
    if (content && indexOf(content, marker) !== -1) continue;
    if (texts.some((text) => indexOf(text, marker) !== -1)) continue;
    const parts: Uint8Array[] = [];
    for (const [name, value] of Object.entries(fields)) {
      parts.push(toBytes(`--${boundary}\r\nContent-Disposition: form-data; name="${headerValue(name)}"\r\n\r\n`), toBytes(value), toBytes('\r\n'));
    }
    if (content) {
      parts.push(
        toBytes(`--${boundary}\r\nContent-Disposition: form-data; name="receipt"; filename="${filename}"\r\nContent-Type: ${headerValue(fileType!)}\r\n\r\n`),
        content,
        toBytes('\r\n'),
      );
    }
    parts.push(toBytes(`--${boundary}--\r\n`));
    return { body: concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
  }
}

async function fileBytes(data: ReceiptFile['data']): Promise<Uint8Array> {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(await data.arrayBuffer());
}

/** The file name in plain ASCII without quotes or line breaks: it goes inside a quoted header parameter. */
function safeFilename(file: ReceiptFile): string {
  const given = file.filename ?? (file.data instanceof Blob && 'name' in file.data && typeof file.data.name === 'string' ? file.data.name : undefined);
  if (given) return given.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const extension = Object.entries(EXTENSION_TYPES).find(([, type]) => type === file.contentType)?.[0];
  return extension ? `receipt.${extension}` : 'receipt';
}

function typeFromName(name: string): string | undefined {
  const extension = name.split('.').pop()?.toLowerCase();
  return extension === undefined ? undefined : EXTENSION_TYPES[extension];
}

function headerValue(value: string): string {
  return value.replace(/[\r\n"]/g, '_');
}

function randomHex(bytes: number): string {
  const random = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(random, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0];
  outer: for (let i = haystack.indexOf(first!); i !== -1 && i <= haystack.length - needle.length; i = haystack.indexOf(first!, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

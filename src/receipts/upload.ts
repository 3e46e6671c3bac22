import { createHash } from 'node:crypto';
import { PassThrough, pipeline, Transform, type Readable } from 'node:stream';
import busboy from 'busboy';
import { fileTypeFromBuffer } from 'file-type';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { DomainError, type ErrorKey } from '../errors.js';
import { InputProblem, parseJson, textProblem } from '../lib/input.js';
import type { FileStore } from './store.js';

/** Spec "Limits": receipt files up to 10 MB. */
export const MAX_RECEIPT_BYTES = 10 * 1024 * 1024;
/** DESIGN.md decision 4: PAY_009 for an oversized file up to a body of at least 20 MB; 413 beyond. */
export const MAX_UPLOAD_BODY_BYTES = 25 * 1024 * 1024;
/** Spec: "receipt (file; names attachment, file, proof are also accepted)". */
const FILE_FIELDS = new Set(['receipt', 'attachment', 'file', 'proof']);
/** Spec formats png, jpg, jpeg, webp, heic, pdf — judged by the bytes, never by the name. */
const ALLOWED_TYPES = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['webp', 'image/webp'],
  ['heic', 'image/heic'],
  ['pdf', 'application/pdf'],
]);
/** Enough of the head of a file for file-type to recognise every allowed format. */
const SNIFF_BYTES = 4100;

export interface StoredFile {
  key: string;
  contentType: string;
  extension: string;
  size: number;
  sha256: Buffer;
}

/** What an upload route received, after the signature over every byte was checked. */
export interface UploadInput {
  file?: StoredFile;
  /** Text fields of the form, or the JSON body's top-level fields. */
  fields: Record<string, unknown>;
  /** The `data` part parsed as a JSON object (spec: "data (string, JSON part)"). */
  data: Record<string, unknown>;
}

export function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Reads an upload route's body: JSON as parsed by the server, or multipart streamed through
 * busboy — the file straight to the file store, hashed and measured on the way, its type decided
 * by its first bytes. A multipart body's signature can only be checked once all of it has been
 * read, so it is checked here, before anything read is used; on any failure the stored file is
 * deleted again.
 */
export async function readUpload(
  request: FastifyRequest,
  ctx: AppContext,
  invalidCode: ErrorKey = 'PAY_002',
  options: { signed: boolean } = { signed: true },
): Promise<UploadInput> {
  if (!isMultipart(request)) {
    const body = request.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new DomainError(invalidCode, 'The request body must be a JSON object');
    }
    const fields = (body ?? {}) as Record<string, unknown>;
    return { fields, data: parseData(fields.data, invalidCode) };
  }

  const parsed = await readMultipart(request, ctx.files);
  const cleanup = async () => {
    if (parsed.file) await ctx.files.delete(parsed.file.key).catch(() => undefined);
  };
  if (options.signed) {
    // The spec's signature covers "the whole multipart body including boundaries and file content".
    if (!request.signer?.matches(String(request.headers['x-signature'] ?? ''))) {
      await cleanup();
      throw new DomainError('AUTH_002');
    }
    if (!request.merchant?.terminalActive) {
      await cleanup();
      throw new DomainError('AUTH_003');
    }
  }
  try {
    if (parsed.problem) throw parsed.problem;
    return { file: parsed.file, fields: parsed.fields, data: parseData(parsed.fields.data, invalidCode) };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

function parseData(data: unknown, invalidCode: ErrorKey): Record<string, unknown> {
  if (data === undefined || data === '') return {};
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) return data as Record<string, unknown>;
  if (typeof data !== 'string') throw new DomainError(invalidCode, 'data must be a JSON object or a string holding one');
  let value: unknown;
  try {
    value = parseJson(data);
  } catch (err) {
    if (!(err instanceof InputProblem)) throw err;
    throw new DomainError(invalidCode, `The data part cannot be read: ${err.message.replace(/^The body/, 'it')}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DomainError(invalidCode, 'The data part must be a JSON object');
  }
  return value as Record<string, unknown>;
}

interface MultipartResult {
  fields: Record<string, string>;
  file?: StoredFile;
  /** The first thing wrong with the upload; reported only after the signature is checked. */
  problem?: DomainError;
}

async function readMultipart(request: FastifyRequest, store: FileStore): Promise<MultipartResult> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_UPLOAD_BODY_BYTES) {
    throw new DomainError('PAYLOAD_TOO_LARGE', `Uploads are limited to ${MAX_UPLOAD_BODY_BYTES} bytes`);
  }
  const source = request.body as Readable;
  const result: MultipartResult = { fields: {} };
  const pending: Promise<void>[] = [];
  const noteProblem = (problem: DomainError) => {
    result.problem ??= problem;
  };

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: request.headers as busboy.BusboyConfig['headers'],
      // busboy flags a file as truncated once it *reaches* the limit, so a file of exactly 10 MB
      // would be refused; one byte more makes "truncated" mean "over 10 MB".
      limits: { fileSize: MAX_RECEIPT_BYTES + 1, files: 5, fields: 20, fieldSize: 64 * 1024, parts: 30 },
    });
  } catch {
    throw new DomainError('PAY_002', 'The multipart body could not be read: the boundary is missing');
  }

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) noteProblem(new DomainError('PAY_002', `Field ${name} is too long`));
    // Form fields are text from outside like any JSON string (src/lib/input.ts).
    const problem = textProblem(name, false) ?? textProblem(value);
    if (problem) noteProblem(new DomainError('PAY_002', `Field ${JSON.stringify(name)} ${problem}`));
    result.fields[name] = value;
  });
  parser.on('file', (name, stream, info) => {
    if (!FILE_FIELDS.has(name)) {
      noteProblem(new DomainError('PAY_002', `Unexpected file field ${name}; send the receipt as receipt (or attachment, file, proof)`));
      discard(stream);
      return;
    }
    if (result.file || pending.length > 0) {
      noteProblem(new DomainError('PAY_002', 'Send one receipt file per request'));
      discard(stream);
      return;
    }
    pending.push(
      storeFile(stream, store, info.filename === undefined).then((outcome) => {
        if ('problem' in outcome) noteProblem(outcome.problem);
        else if ('file' in outcome) result.file = outcome.file;
      }),
    );
  });
  parser.on('partsLimit', () => noteProblem(new DomainError('PAY_002', 'Too many parts in the form')));
  parser.on('filesLimit', () => noteProblem(new DomainError('PAY_002', 'Send one receipt file per request')));
  parser.on('fieldsLimit', () => noteProblem(new DomainError('PAY_002', 'Too many fields in the form')));

  let received = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      source.unpipe(parser);
      source.resume();
      // The parser gets no more bytes: destroying it ends the file part being stored (its partial
      // file is removed), which would otherwise wait for the rest of the body forever.
      parser.destroy(err instanceof Error ? err : undefined);
      reject(err);
    };
    source.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_UPLOAD_BODY_BYTES) {
        source.destroy();
        fail(new DomainError('PAYLOAD_TOO_LARGE', `Uploads are limited to ${MAX_UPLOAD_BODY_BYTES} bytes`));
      }
    });
    source.on('error', fail);
    parser.on('error', () => fail(new DomainError('PAY_002', 'The multipart body is malformed')));
    parser.on('close', resolve);
    source.pipe(parser);
  }).catch(async (err: unknown) => {
    await Promise.allSettled(pending);
    if (result.file) await store.delete(result.file.key).catch(() => undefined);
    throw err;
  });
  await Promise.all(pending);
  // Bytes after the closing boundary still belong to the signed body.
  if (!source.readableEnded) {
    await new Promise<void>((resolve) => {
      source.on('end', resolve);
      source.resume();
    });
  }
  return result;
}

type FileOutcome = { file: StoredFile } | { problem: DomainError } | { none: true };

/**
 * Streams one file part into the store. The head is sniffed first: a file that is not one of the
 * allowed formats is drained, never stored. A file cut off at the size limit (busboy's `limit`)
 * is deleted once stored and reported as PAY_009.
 */
async function storeFile(stream: Readable & { truncated?: boolean }, store: FileStore, unnamed: boolean): Promise<FileOutcome> {
  const head = await readHead(stream, SNIFF_BYTES);
  // A browser form with an untouched file input sends an empty part named "" (busboy: no
  // filename): that is no receipt, not a bad one. An empty file with a name stays PAY_010.
  if (head.length === 0 && unnamed) return { none: true };
  const detected = head.length > 0 ? await fileTypeFromBuffer(head) : undefined;
  const extension = detected?.ext === 'jpg' || detected?.ext === 'png' || detected?.ext === 'webp' || detected?.ext === 'heic' || detected?.ext === 'pdf'
    ? detected.ext
    : undefined;
  const tooLarge = () => ({ problem: new DomainError('PAY_009', `The receipt file is larger than ${MAX_RECEIPT_BYTES / 1024 / 1024} MB`) });

  if (!extension) {
    await drain(stream);
    if (stream.truncated) return tooLarge();
    return { problem: new DomainError('PAY_010', 'The receipt must be a png, jpg/jpeg, webp, heic or pdf file (judged by its content)') };
  }
  const hash = createHash('sha256');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  const body = new PassThrough();
  body.write(head);
  // pipeline, not pipe: a part that fails mid-way (aborted or cut-off body) must fail the store's
  // write, which then removes what it wrote, instead of leaving it waiting for an end.
  const key = await store.put(pipeline(stream, body, measure, () => undefined), ALLOWED_TYPES.get(extension)!);
  if (stream.truncated) {
    await store.delete(key).catch(() => undefined);
    return tooLarge();
  }
  return { file: { key, contentType: ALLOWED_TYPES.get(extension)!, extension, size, sha256: hash.digest() } };
}

/** Reads up to `bytes` from the start of a stream, leaving the rest unread. */
async function readHead(stream: Readable, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  // destroyOnReturn false: leaving the loop early must leave the rest of the stream readable.
  for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= bytes) break;
  }
  const head = Buffer.concat(chunks);
  if (length > bytes) {
    // Put back what was read beyond the head.
    stream.unshift(head.subarray(bytes));
    return head.subarray(0, bytes);
  }
  return head;
}

/** Reads a part nobody wants; its error (a body cut off in this part) must not go unhandled. */
function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.resume();
}

async function drain(stream: Readable): Promise<void> {
  for await (const _chunk of stream as AsyncIterable<Buffer>) {
    // discarded: only read so the body's signature can be checked
  }
}

import { createHash } from 'node:crypto';
import { PassThrough, pipeline, type Readable, Transform } from 'node:stream';
import busboy from 'busboy';
import type { FastifyRequest } from 'fastify';
import { DomainError, type ErrorKey } from '../errors.js';
import { InputProblem, parseJson, textProblem } from '../lib/input.js';
import type { FileStore } from '../receipts/store.js';
import type { StoredFile, UploadInput } from '../receipts/upload.js';

/**
 * What an upload route accepts (route config `upload`), given by the feature that owns the files:
 * the edge streams and measures, the feature decides what is allowed and how a refusal reads.
 */
export interface UploadPolicy {
  /** Form fields a file may come in. */
  fileFields: ReadonlySet<string>;
  /** The largest file accepted; a larger one is refused with `refuse.tooLarge`. */
  maxFileBytes: number;
  /** The largest multipart body read at all; beyond it 413 PAYLOAD_TOO_LARGE. */
  maxBodyBytes: number;
  /** How many of a file's first bytes `accept` is shown. */
  sniffBytes: number;
  /** The file's type, judged by its first bytes; undefined refuses it (`refuse.type`). */
  accept(head: Buffer): Promise<{ contentType: string; extension: string } | undefined>;
  /** How a refused file is answered: sent in a field not in fileFields, a second file, too large, not an accepted type. */
  refuse: { field(name: string): DomainError; another(): DomainError; tooLarge(): DomainError; type(): DomainError };
}

export function isMultipart(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/**
 * Reads an upload route's body: JSON as parsed by the server, or multipart streamed through
 * busboy — the file straight to the file store, hashed and measured on the way, its type decided
 * by its first bytes. A multipart body's signature can only be checked once all of it has been
 * read, so on a signed route (merchant API) it is checked here, before anything read is used; on
 * any failure the stored file is deleted again.
 */
export async function readUpload(request: FastifyRequest, store: FileStore, policy: UploadPolicy): Promise<UploadInput> {
  const invalidCode: ErrorKey = request.routeOptions.config.invalidCode ?? 'VALIDATION';
  if (!isMultipart(request)) {
    const body = request.body;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw new DomainError(invalidCode, 'The request body must be a JSON object');
    }
    const fields = (body ?? {}) as Record<string, unknown>;
    return { fields, data: parseData(fields.data, invalidCode) };
  }

  const parsed = await readMultipart(request, store, policy);
  const cleanup = async () => {
    if (parsed.file) await store.discard(parsed.file.key, 'a refused upload');
  };
  if (request.routeOptions.config.signed) {
    // The spec's signature covers "the whole multipart body including boundaries and file content".
    if (!request.signer?.matches(String(request.headers['x-signature'] ?? ''))) {
      await cleanup();
      throw request.signer ? request.signer.mismatch() : new DomainError('AUTH_002');
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

async function readMultipart(request: FastifyRequest, store: FileStore, policy: UploadPolicy): Promise<MultipartResult> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > policy.maxBodyBytes) {
    throw new DomainError('PAYLOAD_TOO_LARGE', `Uploads are limited to ${policy.maxBodyBytes} bytes`);
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
      // busboy flags a file as truncated once it *reaches* the limit, so a file of exactly the
      // limit would be refused; one byte more makes "truncated" mean "over the limit".
      limits: { fileSize: policy.maxFileBytes + 1, files: 5, fields: 20, fieldSize: 64 * 1024, parts: 30 },
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
    if (!policy.fileFields.has(name)) {
      noteProblem(policy.refuse.field(name));
      discard(stream);
      return;
    }
    if (result.file || pending.length > 0) {
      noteProblem(policy.refuse.another());
      discard(stream);
      return;
    }
    pending.push(
      storeFile(stream, store, policy, info.filename === undefined).then((outcome) => {
        if ('problem' in outcome) noteProblem(outcome.problem);
        else if ('file' in outcome) result.file = outcome.file;
      }),
    );
  });
  parser.on('partsLimit', () => noteProblem(new DomainError('PAY_002', 'Too many parts in the form')));
  parser.on('filesLimit', () => noteProblem(policy.refuse.another()));
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
      if (received > policy.maxBodyBytes) {
        // Not destroyed: a reset would reach the client before its 413 (the rest is discarded, see closeLingering).
        fail(new DomainError('PAYLOAD_TOO_LARGE', `Uploads are limited to ${policy.maxBodyBytes} bytes`));
      }
    });
    source.on('error', fail);
    parser.on('error', () => fail(new DomainError('PAY_002', 'The multipart body is malformed')));
    parser.on('close', resolve);
    source.pipe(parser);
  }).catch(async (err: unknown) => {
    await Promise.allSettled(pending);
    if (result.file) await store.discard(result.file.key, 'an unreadable multipart body');
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
 * Streams one file part into the store. The head is sniffed first: a file the policy does not
 * accept is drained, never stored. A file cut off at the size limit (busboy's `limit`) is deleted
 * once stored and refused as too large.
 */
async function storeFile(stream: Readable & { truncated?: boolean }, store: FileStore, policy: UploadPolicy, unnamed: boolean): Promise<FileOutcome> {
  const head = await readHead(stream, policy.sniffBytes);
  // A browser form with an untouched file input sends an empty part named "" (busboy: no
  // filename): that is no file, not a bad one. An empty file with a name is refused by type.
  if (head.length === 0 && unnamed) return { none: true };
  const accepted = head.length > 0 ? await policy.accept(head) : undefined;
  if (!accepted) {
    await drain(stream);
    return { problem: stream.truncated ? policy.refuse.tooLarge() : policy.refuse.type() };
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
  const key = await store.put(
    pipeline(stream, body, measure, () => undefined),
    accepted.contentType,
  );
  if (stream.truncated) {
    await store.discard(key, 'a file over the size limit');
    return { problem: policy.refuse.tooLarge() };
  }
  return { file: { key, contentType: accepted.contentType, extension: accepted.extension, size, sha256: hash.digest() } };
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

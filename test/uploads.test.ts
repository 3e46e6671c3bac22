import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { LightMyRequestResponse } from 'fastify';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import {
  admin,
  adminOk,
  createExecutor,
  createMerchant,
  createPayment,
  createRequisite,
  type MerchantCredentials,
  multipartBody,
  setRate,
  signed,
  signedMultipart,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
  until,
} from './helpers.js';

// ---------------------------------------------------------------------------------------------
// Real files of every allowed format, small but well-formed (not just a magic number).

/** A 1×1 baseline JPEG (SOI, APP0 JFIF, DQT, SOF0, DHT, SOS, EOI). */
const TINY_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////' +
    'wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
/** A 1×1 lossless WebP: RIFF <size> WEBP VP8L <chunk>. */
const TINY_WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
/** A 1×1 GIF: a real image, but not an allowed format. */
const TINY_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** An ISO-BMFF box: 32-bit size, 4-char type, payload. */
function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** The start of a HEIC file: an `ftyp` box (major brand heic, compatible mif1/heic) and a `meta` box with its `hdlr` = pict. */
const TINY_HEIC = Buffer.concat([
  box('ftyp', Buffer.from('heic', 'latin1'), Buffer.alloc(4), Buffer.from('mif1heic', 'latin1')),
  box('meta', Buffer.alloc(4), box('hdlr', Buffer.alloc(4), Buffer.alloc(4), Buffer.from('pict', 'latin1'), Buffer.alloc(12), Buffer.from([0]))),
]);

/** A one-page PDF with a correct cross-reference table (byte offsets computed, not guessed). */
function tinyPdf(): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>'];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
const TINY_PDF = tinyPdf();

/** A valid ZIP archive holding one empty stored file `a.txt` (local header, central directory, end record). */
function tinyZip(): Buffer {
  const name = Buffer.from('a.txt');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(10, 4);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(10, 4);
  central.writeUInt16LE(10, 6);
  central.writeUInt16LE(name.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(local.length + name.length, 16);
  return Buffer.concat([local, name, central, name, end]);
}

const ALLOWED = [
  { format: 'png', content: TINY_PNG, contentType: 'image/png', name: 'scan.pdf' },
  { format: 'jpeg', content: TINY_JPEG, contentType: 'image/jpeg', name: 'receipt.png' },
  { format: 'webp', content: TINY_WEBP, contentType: 'image/webp', name: 'no-extension' },
  { format: 'heic', content: TINY_HEIC, contentType: 'image/heic', name: 'IMG_0001.HEIC.exe' },
  { format: 'pdf', content: TINY_PDF, contentType: 'application/pdf', name: '../../etc/passwd' },
];

const REJECTED = [
  { format: 'a renamed text file', content: Buffer.from('hello'), name: 'receipt.png', contentType: 'image/png' },
  { format: 'an empty file', content: Buffer.alloc(0), name: 'receipt.png', contentType: 'image/png' },
  {
    format: 'SVG',
    content: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
    name: 'r.svg',
    contentType: 'image/svg+xml',
  },
  {
    format: 'SVG with an XML prolog',
    content: Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'),
    name: 'r.png',
    contentType: 'image/png',
  },
  { format: 'HTML', content: Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>'), name: 'r.pdf', contentType: 'application/pdf' },
  { format: 'GIF', content: TINY_GIF, name: 'r.gif', contentType: 'image/gif' },
  { format: 'ZIP', content: tinyZip(), name: 'r.jpg', contentType: 'image/jpeg' },
];

// ---------------------------------------------------------------------------------------------
// Multipart bodies with any parts, so the tests can build what the shared helper cannot.

interface Part {
  name: string;
  value?: string;
  file?: { filename: string; contentType?: string; content: Buffer };
}

function form(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = `----kassirUp${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if (part.file) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.file.filename}"\r\n` +
            `Content-Type: ${part.file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
        ),
        part.file.content,
        Buffer.from('\r\n'),
      );
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value ?? ''}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

function errorOf(res: LightMyRequestResponse): { status: number; error: string; message: string } {
  const body = res.json() as { error: string; message: string };
  return { status: res.statusCode, error: body.error, message: body.message };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();

// ---------------------------------------------------------------------------------------------

let service: TestService;
let merchant: MerchantCredentials;
let stranger: MerchantCredentials;
let dataDir: string;
let storeDir: string;
let amountSeq = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'kassir-uploads-'));
  service = await startTestService({ KASSIR_DATA_DIR: dataDir }, { listen: true });
  storeDir = join(service.config.dataDir, 'receipts');
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app);
  stranger = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  for (let i = 0; i < 4; i++) await createRequisite(service.app, executor.id);
});
afterAll(async () => {
  await service?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A new PENDING payment of `creds` (amounts differ, so the same-amount limit never interferes). */
async function pendingPayment(creds: MerchantCredentials = merchant): Promise<{ id: string; ext_id: string }> {
  const { status, body } = await createPayment(service.app, creds, { ext_id: uniqueExtId(), amount: 1000 + amountSeq++ });
  if (status !== 200) throw new Error(`create payment → ${status} ${JSON.stringify(body)}`);
  return body as { id: string; ext_id: string };
}

async function cancelledPayment(creds: MerchantCredentials = merchant): Promise<{ id: string; ext_id: string }> {
  const payment = await pendingPayment(creds);
  await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
  return payment;
}

/** The three upload routes, each with a payment in a status it accepts. */
const ROUTES = [
  { route: 'confirm', prepare: pendingPayment },
  { route: 'receipt', prepare: pendingPayment },
  { route: 'dispute', prepare: cancelledPayment },
] as const;

/** Every file in the local receipt store, as paths relative to it. */
async function storedFiles(): Promise<string[]> {
  const entries = await readdir(storeDir, { recursive: true, withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(storeDir.length + 1))
    .sort();
}

interface ReceiptDbRow {
  id: string;
  source: string;
  storage_key: string | null;
  content_type: string | null;
  size_bytes: number | null;
  sha256: Buffer | null;
  url: string | null;
}

async function receiptsOf(paymentId: string): Promise<ReceiptDbRow[]> {
  const { rows } = await service.ctx.db.query<ReceiptDbRow>(
    'SELECT id, source, storage_key, content_type, size_bytes, sha256, url FROM receipts WHERE payment_id = $1 ORDER BY created_at, id',
    [paymentId],
  );
  return rows;
}

/** Asserts a refused upload left nothing: no receipt row for the payment, no new file in the store. */
async function expectNothingStored(paymentId: string, filesBefore: string[]): Promise<void> {
  expect(await receiptsOf(paymentId)).toEqual([]);
  expect(await storedFiles()).toEqual(filesBefore);
}

// ---------------------------------------------------------------------------------------------
// Streaming uploads over real HTTP.

const ZEROS = Buffer.alloc(64 * 1024);

/**
 * A multipart body whose file is `head` followed by zero padding up to `fileSize` bytes, produced
 * chunk by chunk (the padding is one reused buffer), so the test never holds the body in memory.
 */
function streamedForm(head: Buffer, fileSize: number): { contentType: string; length: number; chunks: () => Generator<Buffer> } {
  const boundary = `----kassirBig${randomBytes(8).toString('hex')}`;
  const preamble = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="receipt"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`);
  const epilogue = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: preamble.length + fileSize + epilogue.length,
    *chunks() {
      yield preamble;
      yield head;
      let left = fileSize - head.length;
      while (left > 0) {
        const n = Math.min(left, ZEROS.length);
        yield n === ZEROS.length ? ZEROS : ZEROS.subarray(0, n);
        left -= n;
      }
      yield epilogue;
    },
  };
}

interface Checkpoint {
  /** Body bytes the client had written when it paused. */
  sent: number;
  /** Growth of heapUsed + arrayBuffers over the baseline, both after a full GC, in bytes. */
  liveGrowth: number;
  /** Bytes of the upload already in the local store (new files since the upload began). */
  stored: number;
}

interface StreamedResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  checkpoints: Checkpoint[];
}

/**
 * A full garbage collection. Memory sampled without one is dominated by garbage: in trial runs a
 * 19 MB upload "grew" heapUsed + arrayBuffers by 10–23 MB while nothing but a few 64 KB socket
 * buffers was alive (V8 frees Buffers lazily). Measured after a full GC, only what is really
 * held counts, so the bound below can be tight without being flaky.
 */
const fullGc: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

async function liveMemory(): Promise<number> {
  // Twice: V8 frees the memory of dead Buffers in a sweep that may finish after gc() returns;
  // the second collection completes the first one's sweep.
  fullGc();
  await new Promise((resolve) => setImmediate(resolve));
  fullGc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function storedBytesSince(before: string[]): Promise<number> {
  let total = 0;
  for (const file of await storedFiles()) {
    if (before.includes(file)) continue;
    total += await stat(join(storeDir, file)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}

/**
 * POSTs a streamed, correctly signed multipart body to the listening service (the server runs in
 * this process). At each `pauseAt` the client stops writing until the server has read everything
 * written so far, then records how much memory is live beyond the baseline and how much of the
 * file is already in the store; `abortAt` drops the connection there instead.
 */
async function streamUpload(
  url: string,
  form: ReturnType<typeof streamedForm>,
  options: { chunked?: boolean; pauseAt?: number[]; abortAt?: number; target?: { service: TestService; creds: MerchantCredentials } } = {},
): Promise<StreamedResult> {
  const target = options.target ?? { service, creds: merchant };
  const hmac = createHmac('sha1', target.creds.secretKey).update(`POSThttp://kassir.test${url}`);
  for (const chunk of form.chunks()) hmac.update(chunk);
  const signature = hmac.digest('base64');

  const filesBefore = await storedFiles();
  const baseline = await liveMemory();
  const checkpoints: Checkpoint[] = [];
  const pauses = [...(options.pauseAt ?? [])];

  // A fresh connection (no agent), so the server's socket for it is the next one accepted.
  const serverSocket = new Promise<Socket>((resolve) => target.service.app.server.once('connection', resolve));
  const req = httpRequest({
    host: '127.0.0.1',
    port: (target.service.app.server.address() as { port: number }).port,
    method: 'POST',
    path: url,
    agent: false,
    headers: {
      'x-identity': target.creds.apiKey,
      'x-signature': signature,
      'content-type': form.contentType,
      ...(options.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(form.length) }),
    },
  });
  let responded = false;
  let failure: Error | undefined;
  const answer = new Promise<{ status: number; headers: IncomingHttpHeaders; body: Record<string, any> }>((resolve, reject) => {
    req.on('response', (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Record<string, any> });
        } catch {
          reject(new Error(`non-JSON answer ${res.statusCode}: ${text.slice(0, 200)}`));
        }
      });
    });
    // A server that answers before reading the whole body closes the connection while we may
    // still be writing: that is only a failure when no answer came.
    req.on('error', (err) => {
      failure = err;
      if (!responded) reject(new Error(`upload failed before an answer: ${err.message}`));
    });
  });
  answer.catch(() => undefined);

  let sent = 0;
  for (const chunk of form.chunks()) {
    if (responded || failure) break;
    if (!req.write(chunk)) {
      // Whichever comes first; the other listener goes too, or they pile up on a long upload.
      await new Promise<void>((resolve) => {
        const done = () => {
          req.off('drain', done);
          req.off('close', done);
          resolve();
        };
        req.once('drain', done);
        req.once('close', done);
      });
    }
    sent += chunk.length;
    if (pauses.length > 0 && sent >= pauses[0]!) {
      pauses.shift();
      const socket = await serverSocket;
      // bytesRead includes the request head, so this is reached a few hundred bytes early at most.
      await until(() => (socket.bytesRead >= sent ? true : undefined), 20_000, 20, `server reading ${sent} bytes`);
      checkpoints.push({ sent, liveGrowth: (await liveMemory()) - baseline, stored: await storedBytesSince(filesBefore) });
    }
    if (options.abortAt !== undefined && sent >= options.abortAt) {
      const socket = await serverSocket;
      await until(() => (socket.bytesRead >= sent ? true : undefined), 20_000, 20, `server reading ${sent} bytes`);
      checkpoints.push({ sent, liveGrowth: (await liveMemory()) - baseline, stored: await storedBytesSince(filesBefore) });
      req.destroy();
      return { status: 0, headers: {}, body: {}, checkpoints };
    }
  }
  if (!responded && !failure) req.end();
  return { ...(await answer), checkpoints };
}

const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------

describe('allowed formats, judged by content', () => {
  for (const { route, prepare } of ROUTES) {
    it.each(ALLOWED)(`${route}: a real $format file named "$name" is stored with its detected type, size and SHA-256 under a random name`, async (file) => {
      const payment = await prepare(merchant);
      const before = await storedFiles();
      // The client's Content-Type is deliberately wrong: only the bytes count.
      const res = await signedMultipart(
        service.app,
        merchant,
        `/v1/payments/${payment.id}/${route}`,
        form([{ name: 'receipt', file: { filename: file.name, contentType: 'text/plain', content: file.content } }]),
      );
      expect(res.statusCode, res.body).toBe(200);

      const rows = await receiptsOf(payment.id);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row).toMatchObject({ source: route, content_type: file.contentType, size_bytes: file.content.length, url: null });
      expect(row.sha256!.equals(sha256(file.content))).toBe(true);

      const after = await storedFiles();
      const added = after.filter((f) => !before.includes(f));
      expect(added).toEqual([row.storage_key]);
      // A random name: nothing of the upload's filename (or its extension) survives.
      expect(row.storage_key).toMatch(/^[A-Za-z0-9_-]{2}\/[A-Za-z0-9_-]{32}$/);
      expect(basename(row.storage_key!)).not.toContain(basename(file.name).split('.')[0]!);
      expect((await readFile(join(storeDir, row.storage_key!))).equals(file.content)).toBe(true);

      if (route === 'receipt') expect(res.json().receipt_url).toBe(`http://kassir.test/v1/receipts/${row.id}`);
      if (route === 'dispute') expect(res.json().dispute.receipt_url).toBe(`http://kassir.test/v1/receipts/${row.id}`);
      if (route === 'confirm') expect(res.json()).toMatchObject({ id: payment.id, status: 'PENDING' });
    });
  }
});

describe('unsupported formats: PAY_010, nothing stored', () => {
  for (const { route, prepare } of ROUTES) {
    it.each(REJECTED)(`${route}: $format → 400 PAY_010`, async (file) => {
      const payment = await prepare(merchant);
      const before = await storedFiles();
      const res = await signedMultipart(
        service.app,
        merchant,
        `/v1/payments/${payment.id}/${route}`,
        multipartBody({}, { name: file.name, contentType: file.contentType, content: file.content }),
      );
      expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_010' });
      await expectNothingStored(payment.id, before);
      // A refused upload changes nothing else either.
      const after = await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`);
      expect(after.json().status).toBe(route === 'dispute' ? 'CANCELLED' : 'PENDING');
    });
  }
});

describe('size limits over real HTTP, streamed', () => {
  /**
   * What the server may hold of an upload at any moment: stream buffers and a few socket reads.
   * Buffering the file would show at least the bytes sent so far (5–20 MB at the checkpoints).
   */
  const HOLD_LIMIT = 4 * MB;

  it('a file of exactly 10 MB is accepted; it reaches the store while the body still arrives, never held in memory', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const size = 10 * MB;
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, size), { pauseAt: [6 * MB] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [checkpoint] = res.checkpoints;
    expect(checkpoint!.stored).toBeGreaterThan(5 * MB);
    expect(checkpoint!.liveGrowth).toBeLessThan(HOLD_LIMIT);

    const rows = await receiptsOf(payment.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ content_type: 'image/png', size_bytes: size });
    const expectedHash = createHash('sha256')
      .update(TINY_PNG)
      .update(Buffer.alloc(size - TINY_PNG.length))
      .digest();
    expect(rows[0]!.sha256!.equals(expectedHash)).toBe(true);
    expect((await storedFiles()).filter((f) => !before.includes(f))).toEqual([rows[0]!.storage_key]);
    expect((await stat(join(storeDir, rows[0]!.storage_key!))).size).toBe(size);
  });

  it('10 MB + 1 byte → 400 PAY_009, nothing stored', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 10 * MB + 1));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'PAY_009', message: expect.any(String) });
    await expectNothingStored(payment.id, before);
  });

  it('a 19 MB file → PAY_009, not 413; the server never holds more than a few MB of it', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await streamUpload(`/v1/payments/${payment.id}/confirm`, streamedForm(TINY_PNG, 19 * MB), { pauseAt: [5 * MB, 15 * MB] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('PAY_009');
    await expectNothingStored(payment.id, before);
    expect(res.checkpoints).toHaveLength(2);
    for (const checkpoint of res.checkpoints) expect(checkpoint.liveGrowth, `after ${checkpoint.sent} bytes`).toBeLessThan(HOLD_LIMIT);
    // Past 10 MB the part is no longer written anywhere.
    expect(res.checkpoints[1]!.stored).toBeLessThanOrEqual(10 * MB + 1);
  });

  it('a body of exactly 20 MB, chunked (DESIGN.md decision 4: PAY_009 up to at least 20 MB) → PAY_009 on dispute, status unchanged', async () => {
    const payment = await cancelledPayment();
    const before = await storedFiles();
    const overhead = streamedForm(TINY_PNG, TINY_PNG.length).length - TINY_PNG.length;
    const form = streamedForm(TINY_PNG, 20 * MB - overhead);
    expect(form.length).toBe(20 * MB);
    const res = await streamUpload(`/v1/payments/${payment.id}/dispute`, form, { chunked: true });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('PAY_009');
    await expectNothingStored(payment.id, before);
    expect((await signed(service.app, merchant, 'GET', `/v1/payments/${payment.id}`)).json().status).toBe('CANCELLED');
  });

  it('a body over 25 MB announced by Content-Length → 413 PAYLOAD_TOO_LARGE with the error body, connection closed, nothing stored', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 26 * MB));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
    expect(res.headers.connection).toBe('close');
    await expectNothingStored(payment.id, before);
  });

  it('a chunked body over 25 MB → 413 PAYLOAD_TOO_LARGE once 25 MB are passed, connection closed, nothing stored', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 26 * MB), { chunked: true, pauseAt: [20 * MB] });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.any(String) });
    // Answered before the body ended: the rest is still on the wire, the connection cannot be reused.
    expect(res.headers.connection).toBe('close');
    expect(res.checkpoints[0]!.liveGrowth).toBeLessThan(HOLD_LIMIT);
    await expectNothingStored(payment.id, before);
  });

  it('a client that disconnects mid-file leaves no partial file and no receipt behind', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 9 * MB), { abortAt: 6 * MB });
    // The partial file was in the store when the connection dropped…
    expect(res.checkpoints[0]!.stored).toBeGreaterThan(5 * MB);
    // …and is removed once the server notices.
    await until(async () => ((await storedFiles()).length === before.length ? true : undefined), 20_000, 20, 'partial file removed');
    await expectNothingStored(payment.id, before);
    // The service still serves uploads afterwards.
    const ok = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a multipart body cut off in the middle of the file → PAY_002, nothing stored', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const url = `/v1/payments/${payment.id}/receipt`;
    // Larger than the sniffed head, so the part is already streaming into the store when it breaks off.
    const whole = multipartBody({}, { content: Buffer.concat([TINY_PNG, Buffer.alloc(256 * 1024)]) });
    const cut = whole.body.subarray(0, whole.body.length - 100 * 1024);
    const res = await service.app.inject({
      method: 'POST',
      url,
      headers: {
        'x-identity': merchant.apiKey,
        'x-signature': signRequest(merchant.secretKey, 'POST', `http://kassir.test${url}`, cut),
        'content-type': whole.contentType,
      },
      payload: cut,
    });
    expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
    await until(async () => ((await storedFiles()).length === before.length ? true : undefined), 20_000, 20, 'partial file removed');
    await expectNothingStored(payment.id, before);
  });
});

describe('fields and bodies', () => {
  it.each(['receipt', 'attachment', 'file', 'proof'])('the file field %s is accepted', async (field) => {
    const payment = await pendingPayment();
    const res = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { field, content: TINY_PNG }));
    expect(res.statusCode, res.body).toBe(200);
    expect(await receiptsOf(payment.id)).toHaveLength(1);
  });

  it('another file field name → PAY_002, nothing stored', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { field: 'image', content: TINY_PNG }));
    expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
    await expectNothingStored(payment.id, before);
  });

  it.each([
    ['receipt', 'receipt'],
    ['receipt', 'proof'],
  ])('two files (%s + %s) → PAY_002, nothing stored', async (first, second) => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    const res = await signedMultipart(
      service.app,
      merchant,
      `/v1/payments/${payment.id}/receipt`,
      form([
        { name: first, file: { filename: 'a.png', content: TINY_PNG } },
        { name: second, file: { filename: 'b.jpg', content: TINY_JPEG } },
      ]),
    );
    expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
    await expectNothingStored(payment.id, before);
  });

  for (const { route, prepare } of ROUTES.filter((r) => r.route !== 'confirm')) {
    it.each(['{not json', '[1,2]', '"a string"'])(`${route}: a data part %s that is not a JSON object → PAY_002, the file is not kept`, async (data) => {
      const payment = await prepare(merchant);
      const before = await storedFiles();
      const res = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/${route}`, multipartBody({ data }, { content: TINY_PNG }));
      expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
      await expectNothingStored(payment.id, before);
    });
  }

  it('receipt with neither file nor receipt_url → PAY_002 (multipart, JSON, empty body)', async () => {
    const payment = await pendingPayment();
    const url = `/v1/payments/${payment.id}/receipt`;
    expect(errorOf(await signedMultipart(service.app, merchant, url, multipartBody({ data: '{}' })))).toMatchObject({ status: 400, error: 'PAY_002' });
    expect(errorOf(await signed(service.app, merchant, 'POST', url, {}))).toMatchObject({ status: 400, error: 'PAY_002' });
    expect(errorOf(await signed(service.app, merchant, 'POST', url))).toMatchObject({ status: 400, error: 'PAY_002' });
    expect(await receiptsOf(payment.id)).toEqual([]);
  });

  it('JSON {receipt_url} and JSON {data: "{\\"receipt_url\\": …}"} are both accepted as links', async () => {
    const payment = await pendingPayment();
    const url = `/v1/payments/${payment.id}/receipt`;
    const direct = await signed(service.app, merchant, 'POST', url, { receipt_url: 'https://shop.example/r/1.pdf' });
    expect(direct.statusCode, direct.body).toBe(200);
    expect(direct.json().receipt_url).toBe('https://shop.example/r/1.pdf');
    const nested = await signed(service.app, merchant, 'POST', url, { data: JSON.stringify({ receipt_url: 'http://shop.example/r/2.png' }) });
    expect(nested.statusCode, nested.body).toBe(200);
    expect(nested.json().receipt_url).toBe('http://shop.example/r/2.png');
    expect((await receiptsOf(payment.id)).map((r) => [r.url, r.storage_key])).toEqual([
      ['https://shop.example/r/1.pdf', null],
      ['http://shop.example/r/2.png', null],
    ]);
  });

  it.each(['ftp://shop.example/r.pdf', 'javascript:alert(1)', 'file:///etc/passwd', '/relative/r.png', 'not a url'])(
    'receipt_url %s (not http/https) → PAY_002',
    async (link) => {
      const payment = await pendingPayment();
      const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/receipt`, { receipt_url: link });
      expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
      expect(await receiptsOf(payment.id)).toEqual([]);
    },
  );

  for (const { route, prepare } of ROUTES) {
    it(`${route}: a valid file with a bad receipt_url in the data part → PAY_002 and the stored file is deleted`, async () => {
      const payment = await prepare(merchant);
      const before = await storedFiles();
      const res = await signedMultipart(
        service.app,
        merchant,
        `/v1/payments/${payment.id}/${route}`,
        multipartBody({ data: JSON.stringify({ receipt_url: 'ftp://shop.example/r.pdf' }) }, { content: TINY_PNG }),
      );
      expect(errorOf(res)).toMatchObject({ status: 400, error: 'PAY_002' });
      await expectNothingStored(payment.id, before);
    });
  }
});

describe('the signature covers the exact multipart bytes', () => {
  it('one file byte changed after signing → 401 AUTH_002, nothing stored', async () => {
    const payment = await pendingPayment();
    const url = `/v1/payments/${payment.id}/receipt`;
    const before = await storedFiles();
    const multipart = multipartBody({}, { content: TINY_PNG });
    const signature = signRequest(merchant.secretKey, 'POST', `http://kassir.test${url}`, multipart.body);
    const tampered = Buffer.from(multipart.body);
    // The last byte of the PNG's IEND CRC: still a PNG by its head, but not the signed bytes.
    const at = tampered.indexOf(TINY_PNG) + TINY_PNG.length - 1;
    tampered[at] = tampered[at]! ^ 0xff;
    const res = await service.app.inject({
      method: 'POST',
      url,
      headers: { 'x-identity': merchant.apiKey, 'x-signature': signature, 'content-type': multipart.contentType },
      payload: tampered,
    });
    expect(errorOf(res)).toMatchObject({ status: 401, error: 'AUTH_002' });
    await expectNothingStored(payment.id, before);

    // The untouched body with the same signature goes through: the change alone made the difference.
    const ok = await service.app.inject({
      method: 'POST',
      url,
      headers: { 'x-identity': merchant.apiKey, 'x-signature': signature, 'content-type': multipart.contentType },
      payload: multipart.body,
    });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a correctly signed upload from a deactivated terminal → 403 AUTH_003, and the file it stored is deleted', async () => {
    const payment = await pendingPayment();
    const before = await storedFiles();
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: false });
    try {
      const res = await signedMultipart(service.app, merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
      expect(errorOf(res)).toMatchObject({ status: 403, error: 'AUTH_003' });
      await expectNothingStored(payment.id, before);
    } finally {
      await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: true });
    }
  });

  it('a multipart body signed correctly but sent to a JSON-only route (POST /v1/payments) → 415', async () => {
    const res = await signedMultipart(service.app, merchant, '/v1/payments', multipartBody({ data: JSON.stringify({ ext_id: uniqueExtId(), amount: 500 }) }));
    expect(errorOf(res)).toMatchObject({ status: 415, error: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it("an upload to another merchant's payment → PAY_006, and the file it stored is deleted", async () => {
    const payment = await pendingPayment(stranger);
    const cancelled = await cancelledPayment(stranger);
    const before = await storedFiles();
    for (const [route, id] of [
      ['confirm', payment.id],
      ['receipt', payment.id],
      ['dispute', cancelled.id],
    ] as const) {
      const res = await signedMultipart(service.app, merchant, `/v1/payments/${id}/${route}`, multipartBody({}, { content: TINY_PNG }));
      expect(errorOf(res), route).toMatchObject({ status: 404, error: 'PAY_006' });
    }
    await expectNothingStored(payment.id, before);
    expect(await receiptsOf(cancelled.id)).toEqual([]);
  });
});

describe('downloads', () => {
  it('the owner downloads the bytes as an attachment with nosniff and the detected type; another merchant gets 404; the operator can download', async () => {
    const payment = await pendingPayment();
    // Declared as text/html by the client: the stored and served type must be the detected one.
    const res = await signedMultipart(
      service.app,
      merchant,
      `/v1/payments/${payment.id}/receipt`,
      multipartBody({}, { name: 'x.html', contentType: 'text/html', content: TINY_PDF }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const path = new URL(res.json().receipt_url as string).pathname;
    const receiptId = path.split('/').pop()!;

    const own = await signed(service.app, merchant, 'GET', path);
    expect(own.statusCode).toBe(200);
    expect(own.rawPayload.equals(TINY_PDF)).toBe(true);
    expect(own.headers['content-type']).toBe('application/pdf');
    expect(String(own.headers['content-disposition'])).toMatch(/^attachment;/);
    expect(String(own.headers['content-disposition'])).not.toContain('x.html');
    expect(own.headers['x-content-type-options']).toBe('nosniff');

    const other = await signed(service.app, stranger, 'GET', path);
    expect(errorOf(other)).toMatchObject({ status: 404 });
    expect(other.body).not.toContain('%PDF');

    const operator = await admin(service.app, 'GET', `/receipts/${receiptId}`);
    expect(operator.statusCode).toBe(200);
    expect(operator.rawPayload.equals(TINY_PDF)).toBe(true);
    expect(operator.headers['content-type']).toBe('application/pdf');
    expect(String(operator.headers['content-disposition'])).toMatch(/^attachment;/);
    expect(operator.headers['x-content-type-options']).toBe('nosniff');

    // Without the operator's token the admin download is refused.
    const anonymous = await service.app.inject({ method: 'GET', url: `/admin/v1/receipts/${receiptId}` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('an external-link receipt has no file: 404 whose message names the link; unknown ids → 404', async () => {
    const payment = await pendingPayment();
    const link = 'https://shop.example/receipts/77.pdf';
    const res = await signed(service.app, merchant, 'POST', `/v1/payments/${payment.id}/receipt`, { receipt_url: link });
    expect(res.statusCode).toBe(200);
    const [row] = await receiptsOf(payment.id);

    const download = await signed(service.app, merchant, 'GET', `/v1/receipts/${row!.id}`);
    expect(download.statusCode).toBe(404);
    expect(download.json().message).toContain(link);
    const operator = await admin(service.app, 'GET', `/receipts/${row!.id}`);
    expect(operator.statusCode).toBe(404);
    expect(operator.json().message).toContain(link);

    expect((await signed(service.app, merchant, 'GET', '/v1/receipts/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await signed(service.app, merchant, 'GET', '/v1/receipts/not-a-uuid')).statusCode).toBe(404);
  });
});

describe('S3-compatible store (s3rver)', () => {
  let s3: { close(): Promise<void> } | undefined;
  let s3Dir: string;
  let s3Service: TestService;
  let s3Merchant: MerchantCredentials;
  /** What the store asked s3rver, as "METHOD /path?query". */
  const s3Requests: string[] = [];

  beforeAll(async () => {
    s3Dir = await mkdtemp(join(tmpdir(), 'kassir-s3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: 'receipts' }] });
    const address = (await server.run()) as { port: number };
    s3 = server;
    server.httpServer.on('request', (req: IncomingMessage) => s3Requests.push(`${req.method} ${req.url}`));
    s3Service = await startTestService(
      {
        KASSIR_DATA_DIR: dataDir,
        KASSIR_S3_BUCKET: 'receipts',
        KASSIR_S3_ENDPOINT: `http://127.0.0.1:${address.port}`,
        KASSIR_S3_ACCESS_KEY_ID: 'S3RVER',
        KASSIR_S3_SECRET_ACCESS_KEY: 'S3RVER',
        KASSIR_S3_FORCE_PATH_STYLE: 'true',
      },
      { listen: true },
    );
    await setRate(s3Service.app, 'RUB', 100);
    s3Merchant = await createMerchant(s3Service.app);
    const executor = await createExecutor(s3Service.app);
    await createRequisite(s3Service.app, executor.id);
  });
  afterAll(async () => {
    await s3Service?.close();
    await s3?.close();
    if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
  });

  /** Objects s3rver holds in the bucket (its filesystem layout: <dir>/<bucket>/<key>._S3rver_object). */
  async function bucketObjects(): Promise<string[]> {
    const entries = await readdir(join(s3Dir, 'receipts'), { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile() && e.name.endsWith('._S3rver_object'))
      .map((e) =>
        join(e.parentPath ?? e.path, e.name)
          .slice(join(s3Dir, 'receipts').length + 1)
          .replace(/\._S3rver_object$/, ''),
      )
      .sort();
  }

  it('an upload is stored in the bucket under the prefix and a random key, and downloads back; an unsupported file is not stored', async () => {
    const { body: payment } = await createPayment(s3Service.app, s3Merchant, { ext_id: uniqueExtId(), amount: 1234 });
    const localBefore = await storedFiles();
    const res = await signedMultipart(
      s3Service.app,
      s3Merchant,
      `/v1/payments/${payment.id}/receipt`,
      multipartBody({}, { name: 'my-receipt.jpg', content: TINY_JPEG }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await s3Service.ctx.db.query<ReceiptDbRow>('SELECT storage_key, content_type, size_bytes, sha256 FROM receipts WHERE payment_id = $1', [
      payment.id,
    ]);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ content_type: 'image/jpeg', size_bytes: TINY_JPEG.length });
    expect(row.sha256!.equals(sha256(TINY_JPEG))).toBe(true);

    expect(await bucketObjects()).toEqual([`receipts/${row.storage_key}`]);
    const object = await readFile(join(s3Dir, 'receipts', `receipts/${row.storage_key}._S3rver_object`));
    expect(object.equals(TINY_JPEG)).toBe(true);
    // Nothing went to the local directory.
    expect(await storedFiles()).toEqual(localBefore);

    const download = await signed(s3Service.app, s3Merchant, 'GET', new URL(res.json().receipt_url as string).pathname);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.equals(TINY_JPEG)).toBe(true);
    expect(download.headers['content-type']).toBe('image/jpeg');

    const refused = await signedMultipart(
      s3Service.app,
      s3Merchant,
      `/v1/payments/${payment.id}/receipt`,
      multipartBody({}, { name: 'receipt.png', contentType: 'image/png', content: Buffer.from('hello') }),
    );
    expect(errorOf(refused)).toMatchObject({ status: 400, error: 'PAY_010' });
    expect(await bucketObjects()).toEqual([`receipts/${row.storage_key}`]);
  });

  it('a 7 MB file, sent to the bucket as a multipart upload (over the 5 MB part size), arrives byte for byte', async () => {
    s3Requests.length = 0;
    const { body: payment } = await createPayment(s3Service.app, s3Merchant, { ext_id: uniqueExtId(), amount: 1236 });
    const content = Buffer.concat([TINY_PNG, randomBytes(7 * MB - TINY_PNG.length)]);
    const res = await signedMultipart(s3Service.app, s3Merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content }));
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await s3Service.ctx.db.query<ReceiptDbRow>('SELECT storage_key, size_bytes, sha256 FROM receipts WHERE payment_id = $1', [payment.id]);
    expect(rows[0]).toMatchObject({ size_bytes: content.length });
    expect(rows[0]!.sha256!.equals(sha256(content))).toBe(true);
    const object = await readFile(join(s3Dir, 'receipts', `receipts/${rows[0]!.storage_key}._S3rver_object`));
    expect(sha256(object).equals(sha256(content))).toBe(true);
    const download = await signed(s3Service.app, s3Merchant, 'GET', new URL(res.json().receipt_url as string).pathname);
    expect(download.statusCode).toBe(200);
    expect(sha256(download.rawPayload).equals(sha256(content))).toBe(true);
    expect(s3Requests.filter((r) => /^PUT .*partNumber=\d/.test(r))).toHaveLength(2);
    expect(s3Requests.some((r) => /^POST .*uploadId=/.test(r))).toBe(true);
  });

  it('a file over 10 MB → PAY_009 and its parts already sent to the bucket are deleted', async () => {
    const { body: payment } = await createPayment(s3Service.app, s3Merchant, { ext_id: uniqueExtId(), amount: 1237 });
    const before = await bucketObjects();
    const res = await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 12 * MB), {
      target: { service: s3Service, creds: s3Merchant },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('PAY_009');
    expect(await bucketObjects()).toEqual(before);
  });

  it('a client that disconnects mid-file: the bucket upload is abandoned, no object, the service keeps working', async () => {
    const { body: payment } = await createPayment(s3Service.app, s3Merchant, { ext_id: uniqueExtId(), amount: 1238 });
    const before = await bucketObjects();
    s3Requests.length = 0;
    await streamUpload(`/v1/payments/${payment.id}/receipt`, streamedForm(TINY_PNG, 9 * MB), {
      abortAt: 6 * MB,
      target: { service: s3Service, creds: s3Merchant },
    });
    // The store stops waiting for the rest and aborts the multipart upload it had begun.
    await until(() => (s3Requests.some((r) => /^DELETE .*uploadId=/.test(r)) ? true : undefined), 20_000, 20, 'multipart upload aborted');
    expect(await bucketObjects()).toEqual(before);
    const { rows } = await s3Service.ctx.db.query('SELECT 1 FROM receipts WHERE payment_id = $1', [payment.id]);
    expect(rows).toEqual([]);
    const ok = await signedMultipart(s3Service.app, s3Merchant, `/v1/payments/${payment.id}/receipt`, multipartBody({}, { content: TINY_PNG }));
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a stored object of a refused request (wrong signature) is deleted from the bucket again', async () => {
    const { body: payment } = await createPayment(s3Service.app, s3Merchant, { ext_id: uniqueExtId(), amount: 1235 });
    const before = await bucketObjects();
    const url = `/v1/payments/${payment.id}/receipt`;
    const multipart = multipartBody({}, { content: TINY_PNG });
    const res = await s3Service.app.inject({
      method: 'POST',
      url,
      headers: {
        'x-identity': s3Merchant.apiKey,
        'x-signature': signRequest(s3Merchant.secretKey, 'POST', `http://kassir.test${url}`, Buffer.concat([multipart.body, Buffer.from('x')])),
        'content-type': multipart.contentType,
      },
      payload: multipart.body,
    });
    expect(errorOf(res)).toMatchObject({ status: 401, error: 'AUTH_002' });
    expect(await bucketObjects()).toEqual(before);
  });
});

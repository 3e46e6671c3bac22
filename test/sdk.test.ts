import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOpenApi, loadOpenApi, type OpenApiDocument } from '../sdk/scripts/check-openapi.js';
import {
  buildMultipart,
  KassirClient,
  KassirConnectionError,
  KassirError,
  KassirWebhookError,
  OPERATIONS,
  parseWebhook,
  signRequest as sdkSign,
  verifyWebhookSignature,
} from '../sdk/src/index.js';
import { freePort } from '../src/db/embedded.js';
import { signRequest } from '../src/http/signature.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  createTerminal,
  type MerchantCredentials,
  notifyTransfer,
  type ReceivedWebhook,
  setRate,
  startTestService,
  type TestService,
  TINY_PNG,
  uniqueExtId,
  until,
  webhookReceiver,
} from './helpers.js';

// Issue 20 item 2: the merchant SDK (sdk/) against a real Kassir listening on a real port, its
// webhooks delivered by the job worker to a real receiver, and its types against /openapi.json.

let service: TestService;
let origin: string;
let merchant: MerchantCredentials;
let kassir: KassirClient;
let executor: { id: string; token: string };
let requisite: { id: string };
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;

let amountSeq = 0;
/** Distinct amounts: a notification matches exactly the payment it is meant for. */
const nextAmount = () => 1200 + ++amountSeq * 13;

beforeAll(async () => {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = await startTestService(
    { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: origin, KASSIR_WEBHOOK_RETRY_BASE_MS: '100' },
    { listen: true, worker: true },
  );
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app, { name: 'Main', withdrawal_fee: 1.5, payout_rate: 2 });
  await adminOk(service.app, 'POST', `/terminals/${merchant.terminalId}/adjustments`, { amount: 1000, reason: 'test funds' });
  executor = await createExecutor(service.app);
  requisite = await createRequisite(service.app, executor.id);
  hooks = await webhookReceiver();
  kassir = new KassirClient({ baseUrl: origin, apiKey: merchant.apiKey, secretKey: merchant.secretKey });
});

afterAll(async () => {
  hooks?.server.close();
  await service?.close();
});

describe('payments through the SDK', () => {
  it('creates a payment, reads it by id and by ext_id, confirms it with a receipt file (multipart)', async () => {
    const ext_id = uniqueExtId('sdk');
    const amount = nextAmount();
    const created = await kassir.payments.create({ ext_id, amount, currency: 'RUB', method: 'CARD' });
    expect(created).toMatchObject({ ext_id, amount, currency: 'RUB', status: 'PENDING', method: 'CARD', terminal_id: merchant.terminalId });
    expect(created.requisites).toMatchObject({ type: 'card', holder: expect.any(String) });

    expect(await kassir.payments.get(created.id)).toEqual(created);
    expect(await kassir.payments.getByExtId(ext_id)).toEqual(created);

    // The multipart body is built by the SDK and signed over every byte: a wrong byte would be AUTH_002.
    const confirmed = await kassir.payments.confirm(created.id, { file: { data: TINY_PNG, filename: 'чек "1".png' }, receipt_url: 'https://shop.example/r/1' });
    expect(confirmed.status).toBe('PENDING');
    expect(confirmed.message).toEqual(expect.any(String));
    const { rows } = await service.ctx.db.query(
      `SELECT content_type, size_bytes::int AS size FROM receipts WHERE payment_id = $1 AND source = 'confirm' AND storage_key IS NOT NULL`,
      [created.id],
    );
    expect(rows).toEqual([{ content_type: 'image/png', size: TINY_PNG.length }]);
  });

  it('confirms with JSON only, and with an empty call', async () => {
    const payment = await kassir.payments.create({ ext_id: uniqueExtId('sdk'), amount: nextAmount() });
    expect((await kassir.payments.confirm(payment.id, { receipt_url: 'https://shop.example/r/2' })).status).toBe('PENDING');
    expect((await kassir.payments.confirm(payment.id)).status).toBe('PENDING');
  });

  it('attaches a receipt file and downloads the very bytes back', async () => {
    const payment = await kassir.payments.create({ ext_id: uniqueExtId('sdk'), amount: nextAmount() });
    const attached = await kassir.payments.attachReceipt(payment.id, { file: { data: new Blob([TINY_PNG]), contentType: 'image/png' } });
    expect(attached).toMatchObject({ id: payment.id, status: 'PENDING', receipt_url: expect.stringContaining(`${origin}/v1/receipts/`) });
    const receiptId = attached.receipt_url.split('/').pop()!;
    const file = await kassir.receipts.download(receiptId);
    expect(file.contentType).toBe('image/png');
    expect(Buffer.from(file.data).equals(TINY_PNG)).toBe(true);
  });

  it('opens a dispute with a file on a cancelled payment and cancels it', async () => {
    const payment = await kassir.payments.create({ ext_id: uniqueExtId('sdk'), amount: nextAmount() });
    await adminOk(service.app, 'POST', `/payments/${payment.id}/cancel`);
    const opened = await kassir.payments.openDispute(payment.id, {
      amount: payment.amount,
      comment: 'paid in full',
      file: { data: TINY_PNG, filename: 'proof.png' },
    });
    expect(opened).toMatchObject({ id: payment.id, status: 'dispute', dispute: { amount: payment.amount, comment: 'paid in full' } });
    expect(opened.dispute.receipt_url).toEqual(expect.any(String));
    expect(await kassir.payments.cancelDispute(payment.id)).toEqual({ id: payment.id, ext_id: payment.ext_id, status: 'cancelled_appeal' });
  });

  it('verifies a webhook Kassir delivered, with the SDK helper', async () => {
    const token = `tok-${randomUUID()}`;
    const amount = nextAmount();
    const payment = await kassir.payments.create({ ext_id: uniqueExtId('sdk'), amount, notify_url: hooks.url, notification_token: token });
    const match = await notifyTransfer(service.app, executor.token, requisite.id, amount);
    expect(match).toMatchObject({ matched: true, payment_id: payment.id });

    const hit = await until<ReceivedWebhook>(() => hooks.received.find((h) => h.body.includes(payment.id) && h.body.includes('payment.completed')));
    const event = await parseWebhook(hit.body, hit.headers, { secret: merchant.secretKey, notificationToken: token });
    expect(event.event).toBe('payment.completed');
    expect(event.id).toBe(hit.headers['x-event-id']);
    expect(event.data).toEqual(await kassir.payments.get(payment.id));
    expect(event.data.status).toBe('COMPLETED');

    // Bytes work as well as text; a rotation's old and new secrets are both tried.
    expect(await verifyWebhookSignature(Buffer.from(hit.body), hit.headers['x-signature'] as string, ['old-secret', merchant.secretKey])).toBe(true);
    // Anything else is refused: another secret, a changed body, no signature, a wrong token.
    expect(await verifyWebhookSignature(hit.body, hit.headers['x-signature'] as string, 'sk_wrong')).toBe(false);
    expect(await verifyWebhookSignature(hit.body.replace('COMPLETED', 'CANCELLED'), hit.headers['x-signature'] as string, merchant.secretKey)).toBe(false);
    expect(await verifyWebhookSignature(hit.body, undefined, merchant.secretKey)).toBe(false);
    expect(await verifyWebhookSignature(hit.body, 'not base64 at all!', merchant.secretKey)).toBe(false);
    await expect(parseWebhook(hit.body, hit.headers, { secret: merchant.secretKey, notificationToken: 'other' })).rejects.toBeInstanceOf(KassirWebhookError);
    const headers = new Headers({ 'x-signature': hit.headers['x-signature'] as string });
    await expect(parseWebhook(`${hit.body} `, headers, { secret: merchant.secretKey })).rejects.toThrow(/signature/);
  });
});

describe('money out through the SDK', () => {
  it('creates a payout (replayed by its Idempotency-Key), reads and lists it', async () => {
    const ext_id = uniqueExtId('payout');
    const body = { ext_id, amount: 5000, method: 'card', requisites: '4111 1111 1111 1111', holder_name: 'Ivan Petrov' } as const;
    const idempotencyKey = randomUUID();
    const before = await kassir.balance.get();
    const payout = await kassir.payouts.create(body, { idempotencyKey });
    expect(payout).toMatchObject({ ext_id, amount: 5000, currency: 'RUB', method: 'card', bank: '', status: 'pending' });
    expect(payout).not.toHaveProperty('completed_at');
    // The same key and body: the first answer again, not a second payout (nor PAY_003).
    expect(await kassir.payouts.create(body, { idempotencyKey })).toEqual(payout);

    expect(await kassir.payouts.get(payout.id)).toMatchObject({ id: payout.id, completed_at: null });
    expect((await kassir.payouts.getByExtId(ext_id)).id).toBe(payout.id);
    const page = await kassir.payouts.list({ status: 'pending', from: new Date(Date.now() - 60_000), limit: 10 });
    expect(page).toMatchObject({ total: 1, limit: 10, offset: 0 });
    expect(page.payouts.map((p) => p.id)).toEqual([payout.id]);
    const all = [];
    for await (const p of kassir.payouts.iterate({ limit: 1 })) all.push(p.id);
    expect(all).toEqual([payout.id]);
    // 5000 RUB at 100 RUB/USDT plus the terminal's 2 % payout rate: 51 USDT reserved.
    const after = await kassir.balance.get();
    expect(after.balance_frozen).toBeCloseTo(before.balance_frozen + 51, 6);
    expect(after.balance).toBeCloseTo(before.balance - 51, 6);
  });

  it('creates a withdrawal, reads it, lists it, and reports the fee', async () => {
    expect(await kassir.withdrawals.fee()).toEqual({ fee: 1.5, currency: 'USDT' });
    const address = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    const withdrawal = await kassir.withdrawals.create({ terminal_id: merchant.terminalId, amount: 100, address });
    expect(withdrawal).toMatchObject({ amount: 100, fee: 1.5, currency: 'USDT', address, tx_hash: null, status: 'pending' });
    expect(await kassir.withdrawals.get(withdrawal.id)).toEqual(withdrawal);
    const page = await kassir.withdrawals.list({ limit: 5 });
    expect(page).toMatchObject({ limit: 5, offset: 0 });
    expect(page.data.map((w) => w.id)).toContain(withdrawal.id);
  });

  it('transfers between two terminals of one merchant', async () => {
    const second = await createTerminal(service.app, merchant.merchantId, { name: 'Second' });
    const before = await kassir.balance.get();
    const transfer = await kassir.transfers.create({ from_terminal_id: merchant.terminalId, to_terminal_id: second.id, amount: 25.5 });
    expect(transfer).toEqual({ success: true, from_terminal_id: merchant.terminalId, to_terminal_id: second.id, amount: 25.5, currency: 'USDT' });
    const { terminals } = await kassir.terminals.list();
    expect(terminals.find((t) => t.id === second.id)).toMatchObject({ name: 'Second', balance: 25.5, balance_frozen: 0, currency: 'USDT', is_active: true });
    expect((await kassir.balance.get()).balance).toBeCloseTo(before.balance, 6);
    expect(await adminOk(service.app, 'GET', '/ledger/check')).toEqual({ ok: true, problems: [] });
  });

  it('lists the public bank directory without credentials in the request', async () => {
    const { banks } = await kassir.banks.list();
    expect(banks.length).toBeGreaterThan(0);
    expect(banks[0]).toEqual({ code: expect.any(String), name: expect.any(String) });
  });
});

describe('errors as KassirError', () => {
  it('carries the spec code, status, message and data', async () => {
    const missing = await kassir.payments.get(randomUUID()).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(KassirError);
    expect(missing).toMatchObject({ code: 'PAY_006', status: 404, message: expect.any(String), requestId: expect.any(String) });

    const ext_id = uniqueExtId('dup');
    await kassir.payments.create({ ext_id, amount: nextAmount() });
    const duplicate = await kassir.payments.create({ ext_id, amount: nextAmount() }).catch((err: unknown) => err);
    expect(duplicate).toMatchObject({ code: 'PAY_003', status: 409, data: { ext_id } });

    const poor = await kassir.transfers
      .create({ from_terminal_id: merchant.terminalId, to_terminal_id: merchant.terminalId, amount: 1e9 })
      .catch((err: unknown) => err);
    expect(poor).toBeInstanceOf(KassirError);
    expect((poor as KassirError).code).toMatch(/^TRF_00[13]$/);

    const wrongKey = new KassirClient({ baseUrl: origin, apiKey: merchant.apiKey, secretKey: 'sk_not_the_secret' });
    await expect(wrongKey.balance.get()).rejects.toMatchObject({ name: 'KassirError', code: 'AUTH_002', status: 401 });
    // The service checks signatures against PUBLIC_BASE_URL: signing another base URL fails.
    const elsewhere = new KassirClient({ baseUrl: origin, publicBaseUrl: 'http://kassir.test', apiKey: merchant.apiKey, secretKey: merchant.secretKey });
    await expect(elsewhere.balance.get()).rejects.toMatchObject({ code: 'AUTH_002' });
  });

  it('a call to a port nothing listens on is a KassirConnectionError after its retries', async () => {
    const dead = new KassirClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: 'k', secretKey: 's', retryBaseMs: 1 });
    await expect(dead.balance.get()).rejects.toBeInstanceOf(KassirConnectionError);
  });
});

describe('retries only where safe', () => {
  interface Seen {
    method: string;
    url: string;
    headers: IncomingHttpHeaders;
  }
  let server: Server;
  let base: string;
  let seen: Seen[] = [];
  /** The answers to give, in order; then 200 `{"ok":true}`. */
  let script: Array<{ status: number; headers?: Record<string, string>; body?: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers });
        const next = script.shift() ?? { status: 200, body: { balance: 1, balance_frozen: 0, currency: 'USDT' } };
        res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers }).end(next.body === undefined ? '' : JSON.stringify(next.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = (options: Partial<ConstructorParameters<typeof KassirClient>[0]> = {}) =>
    new KassirClient({ baseUrl: base, apiKey: 'key', secretKey: 'secret', retryBaseMs: 1, ...options });
  const overloaded = { status: 503, headers: { 'retry-after': '0' }, body: { error: 'UNAVAILABLE', message: 'overloaded' } };
  const reset = () => {
    seen = [];
    script = [];
  };

  it('repeats a GET after 503 with Retry-After and after a gateway 502, with the same signature', async () => {
    reset();
    script = [overloaded, { status: 502, body: 'bad gateway' }];
    expect(await client().balance.get()).toEqual({ balance: 1, balance_frozen: 0, currency: 'USDT' });
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.headers['x-signature'])).size).toBe(1);
  });

  it('repeats a JSON POST under one Idempotency-Key (its own, or one made for it)', async () => {
    reset();
    script = [overloaded, { status: 409, headers: { 'retry-after': '0' }, body: { error: 'CONFLICT', message: 'still being processed' } }];
    await client().transfers.create({ from_terminal_id: 'a', to_terminal_id: 'b', amount: 1 });
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);

    reset();
    script = [overloaded];
    await client().transfers.create({ from_terminal_id: 'a', to_terminal_id: 'b', amount: 1 }, { idempotencyKey: 'mine-1' });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['mine-1', 'mine-1']);
  });

  it('never repeats a POST without a key, a multipart upload, a business refusal or a 500', async () => {
    reset();
    script = [overloaded];
    await expect(client({ autoIdempotencyKeys: false }).transfers.create({ from_terminal_id: 'a', to_terminal_id: 'b', amount: 1 })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      status: 503,
      retryAfter: 0,
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers).not.toHaveProperty('idempotency-key');

    reset();
    script = [overloaded];
    await expect(client().payments.confirm('p1', { file: { data: TINY_PNG } })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(seen).toHaveLength(1);

    reset();
    script = [
      { status: 503, body: { error: 'PAY_004', message: 'No available requisites' } },
      { status: 429, body: { error: 'PAY_005', message: 'Too many payments with the same amount' } },
      { status: 500, body: { error: 'SYS_001', message: 'Internal error' } },
    ];
    await expect(client().payments.create({ ext_id: 'x', amount: 100 })).rejects.toMatchObject({ code: 'PAY_004', status: 503 });
    await expect(client().payments.create({ ext_id: 'y', amount: 100 })).rejects.toMatchObject({ code: 'PAY_005', status: 429 });
    await expect(client().balance.get()).rejects.toMatchObject({ code: 'SYS_001', status: 500 });
    expect(seen).toHaveLength(3);
  });

  it('gives up at once when Retry-After asks for longer than allowed, and after maxRetries', async () => {
    reset();
    script = [{ ...overloaded, headers: { 'retry-after': '120' } }];
    await expect(client().balance.get()).rejects.toMatchObject({ code: 'UNAVAILABLE', retryAfter: 120 });
    expect(seen).toHaveLength(1);

    reset();
    script = [overloaded, overloaded, overloaded, overloaded];
    await expect(client({ maxRetries: 2 }).balance.get()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(seen).toHaveLength(3);
  });

  it('signs the URL exactly as sent: path segments encoded, query as sent', async () => {
    reset();
    script = [
      { status: 200, body: { payouts: [], total: 0, limit: 5, offset: 0 } },
      { status: 200, body: {} },
    ];
    await client({ publicBaseUrl: 'https://pay.example.com/' }).payouts.list({ status: 'pending', from: new Date('2024-01-02T03:04:05Z'), limit: 5 });
    await client().payouts.getByExtId('order #1/ü');
    expect(seen[0]!.url).toBe('/v1/payouts?status=pending&from=2024-01-02T03%3A04%3A05.000Z&limit=5');
    expect(seen[0]!.headers['x-signature']).toBe(signRequest('secret', 'GET', `https://pay.example.com${seen[0]!.url}`));
    expect(seen[1]!.url).toBe('/v1/payouts/by-ext-id/order%20%231%2F%C3%BC');
    expect(seen[1]!.headers['x-signature']).toBe(signRequest('secret', 'GET', `${base}${seen[1]!.url}`));
  });
});

describe('signing (property)', () => {
  it("the SDK's signature is the service's for any method, URL and body", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1 }),
        fc.constantFrom('GET', 'post', 'POST'),
        fc.webUrl({ withQueryParameters: true }),
        fc.uint8Array(),
        async (secret, method, url, body) => {
          expect(await sdkSign(secret, method, url, body)).toBe(signRequest(secret, method, url, Buffer.from(body)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a multipart body carries its fields and file byte for byte, under a boundary found nowhere in them', async () => {
    const file = new Uint8Array([0, 1, 2, 13, 10, 45, 45, 255]);
    const { body, contentType } = await buildMultipart({ data: '{"comment":"ок"}' }, { data: file, filename: 'a.pdf' });
    const boundary = contentType.split('boundary=')[1]!;
    const text = Buffer.from(body).toString('latin1');
    expect(text.startsWith(`--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n`)).toBe(true);
    expect(Buffer.from(body).includes(Buffer.from('{"comment":"ок"}'))).toBe(true);
    expect(text).toContain('name="receipt"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n');
    expect(Buffer.from(body).includes(Buffer.from(file))).toBe(true);
    expect(text.endsWith(`--${boundary}--\r\n`)).toBe(true);
  });
});

describe('the SDK against the OpenAPI document', () => {
  let document: OpenApiDocument;
  beforeAll(async () => {
    document = await loadOpenApi(origin);
  });

  it('has a method for every /v1 operation, and its types match the schemas', () => {
    const v1 = Object.entries(document.paths).flatMap(([path, item]) =>
      path.startsWith('/v1/') ? Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`) : [],
    );
    expect(v1.sort()).toEqual(
      Object.values(OPERATIONS)
        .map((op) => `${op.method} ${op.path}`)
        .sort(),
    );
    expect(checkOpenApi(document)).toEqual([]);
  });

  it('reports drift: a new route, a field added, removed or made required, a nullability or kind change, an upload part', () => {
    const drifted: OpenApiDocument = structuredClone(document);
    const payment = (drifted.paths['/v1/payments/{id}']!.get!.responses!['200']!.content!['application/json']!.schema as Record<string, any>)!;
    payment.required.push('message');
    delete payment.properties.received_amount;
    payment.properties.requisites.properties.iban = { type: 'string' };
    payment.properties.payment_url = { type: 'string' };
    (drifted.paths['/v1/transfers']!.post!.requestBody!.content!['application/json']!.schema as Record<string, any>).properties.amount.type = 'string';
    const dispute = drifted.paths['/v1/payments/{id}/dispute']!.post!.requestBody!.content!;
    (dispute['application/json']!.schema as Record<string, any>).properties.currency = { type: 'string' };
    delete (dispute['multipart/form-data']!.schema as Record<string, any>).properties.receipt;
    drifted.paths['/v1/refunds'] = { post: { security: [{ identity: [] }] } };
    delete drifted.paths['/v1/balance'];
    expect(checkOpenApi(drifted).sort()).toEqual(
      [
        'payments.get answer.message: required in OpenAPI, optional in the SDK',
        'payments.get answer.received_amount: in the SDK, not in OpenAPI',
        'payments.get answer.requisites.iban: in OpenAPI (optional), missing from the SDK',
        'payments.get answer.payment_url: nullable in the SDK, not in OpenAPI',
        'transfers.create body.amount: string in OpenAPI, number in the SDK',
        'payments.openDispute input.currency: in OpenAPI (optional), missing from the SDK',
        'payments.openDispute input.file: the SDK sends a file, OpenAPI has no `receipt` file part',
        'POST /v1/refunds: in OpenAPI, but no SDK method calls it (sdk/src/operations.ts)',
        'balance.get: calls GET /v1/balance, which the OpenAPI document does not have',
      ].sort(),
    );
  });
});

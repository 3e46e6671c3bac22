import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, it } from 'vitest';
import { createExecutor, createMerchant, createPayment, createRequisite, setRate, startTestService, TINY_PNG, uniqueExtId, type MerchantCredentials, type TestService } from './helpers.js';

let service: TestService; let merchant: MerchantCredentials; let port: number;
beforeAll(async () => {
  service = await startTestService({ KASSIR_DATA_DIR: '/tmp/up/data' }, { listen: true });
  port = (service.app.server.address() as { port: number }).port;
  await setRate(service.app, 'RUB', 100);
  merchant = await createMerchant(service.app);
  const executor = await createExecutor(service.app);
  await createRequisite(service.app, executor.id);
});
afterAll(async () => service?.close(), 10000);

it('debug', async () => {
  const { body: payment } = await createPayment(service.app, merchant, { ext_id: uniqueExtId(), amount: 1000 });
  const url = `/v1/payments/${payment.id}/receipt`;
  const boundary = `----x${randomBytes(4).toString('hex')}`;
  const ZEROS = Buffer.alloc(65536);
  const size = Number(process.env.SIZE ?? 26 * 1024 * 1024);
  function* chunks() {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="receipt"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`);
    yield TINY_PNG;
    let left = size - TINY_PNG.length;
    while (left > 0) { const n = Math.min(left, ZEROS.length); yield ZEROS.subarray(0, n); left -= n; }
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  const hmac = createHmac('sha1', merchant.secretKey).update(`POSThttp://kassir.test${url}`);
  for (const c of chunks()) hmac.update(c);
  const sig = hmac.digest('base64');
  let sent = 0;
  const t0 = Date.now();
  await new Promise<void>((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: url, headers: { 'x-identity': merchant.apiKey, 'x-signature': sig, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => { console.log('response', res.statusCode, Date.now() - t0, 'sent', sent); res.on('data', (d) => console.log('body', String(d))); res.on('end', () => { console.log('end'); resolve(); }); });
    req.on('error', (e) => { console.log('req error', e.message, Date.now() - t0, 'sent', sent); resolve(); });
    req.on('close', () => console.log('req close', Date.now() - t0));
    const src = Readable.from(chunks(), { objectMode: false });
    src.on('data', (c: Buffer) => { sent += c.length; });
    src.pipe(req);
    setTimeout(() => { console.log('timeout; sent', sent, 'socket destroyed?', req.socket?.destroyed); resolve(); }, 8000);
  });
}, 20000);

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../src/http/signature.js';
import {
  ADMIN_TOKEN,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  setRate,
  startTestService,
  type TestService,
  uniqueExtId,
} from './helpers.js';

// Issue 39, item 2: Kassir behind a TLS-terminating proxy (Caddy, nginx). The proxy speaks plain
// HTTP to Kassir and says what the client used in X-Forwarded-Proto/For. Signatures are still
// checked against PUBLIC_BASE_URL (the https address the merchant signed), HSTS goes out with
// every answer when that address is https, and the client's address is believed only with
// TRUST_PROXY: without it, the address recorded is the proxy's.

const PUBLIC = 'https://pay.example.com';
const PROXY = '10.0.0.2';
const CLIENT = '203.0.113.7';
const FORWARDED = { 'x-forwarded-for': CLIENT, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'pay.example.com' };

let trusted: TestService;
let untrusted: TestService;
let merchant: MerchantCredentials;

beforeAll(async () => {
  trusted = await startTestService({ PUBLIC_BASE_URL: PUBLIC, TRUST_PROXY: '10.0.0.0/8' });
  untrusted = await trusted.startAnother({ PUBLIC_BASE_URL: PUBLIC, TRUST_PROXY: 'false' }).then((other) => ({ ...trusted, ...other }));
  await setRate(trusted.app, 'RUB', 95.5);
  merchant = await createMerchant(trusted.app);
  const executor = await createExecutor(trusted.app);
  await createRequisite(trusted.app, executor.id);
}, 120_000);
afterAll(async () => {
  await trusted?.close();
});

/** A payment create as a proxy in front passes it on: from the proxy's address, with forwarding headers. */
function createThroughProxy(service: TestService, signedUrl: string) {
  const body = JSON.stringify({ ext_id: uniqueExtId('proxy'), amount: 1500, currency: 'RUB', method: 'CARD' });
  return service.app.inject({
    method: 'POST',
    url: '/v1/payments',
    remoteAddress: PROXY,
    headers: {
      ...FORWARDED,
      'content-type': 'application/json',
      'x-identity': merchant.apiKey,
      'x-signature': signRequest(merchant.secretKey, 'POST', `${signedUrl}/v1/payments`, body),
    },
    payload: body,
  });
}

/** The address the audit log recorded for a merchant created through the proxy. */
async function auditedAddress(service: TestService): Promise<string | null> {
  const created = await service.app.inject({
    method: 'POST',
    url: '/admin/v1/merchants',
    remoteAddress: PROXY,
    headers: { ...FORWARDED, authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'Audited through a proxy' }),
  });
  expect(created.statusCode).toBe(201);
  const db = new pg.Client({ connectionString: service.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ ip: string | null }>(`SELECT ip FROM audit_log WHERE object_id = $1`, [created.json().id]);
    return rows[0]?.ip ?? null;
  } finally {
    await db.end();
  }
}

describe('behind a TLS-terminating proxy', () => {
  it('checks signatures against the https PUBLIC_BASE_URL, not the address the proxy reached', async () => {
    const valid = await createThroughProxy(trusted, PUBLIC);
    expect(valid.statusCode, valid.body).toBe(200);
    expect(valid.json()).toMatchObject({ status: 'PENDING', amount: 1500 });
    // Signed for the plain-HTTP address behind the proxy: refused.
    const wrongBase = await createThroughProxy(trusted, 'http://pay.example.com');
    expect(wrongBase.statusCode).toBe(401);
    expect(wrongBase.json()).toMatchObject({ error: 'AUTH_002' });
  });

  it('sends HSTS with every answer when PUBLIC_BASE_URL is https, and none when it is http', async () => {
    const signedAnswer = await createThroughProxy(trusted, PUBLIC);
    expect(signedAnswer.headers['strict-transport-security']).toBe('max-age=31536000');
    const health = await trusted.app.inject({ method: 'GET', url: '/healthz', remoteAddress: PROXY, headers: FORWARDED });
    expect(health.headers['strict-transport-security']).toBe('max-age=31536000');
    const error = await trusted.app.inject({ method: 'GET', url: '/no-such-route', remoteAddress: PROXY, headers: FORWARDED });
    expect(error.statusCode).toBe(404);
    expect(error.headers['strict-transport-security']).toBe('max-age=31536000');

    const plain = await trusted.startAnother({ PUBLIC_BASE_URL: 'http://127.0.0.1:8080' });
    const plainHealth = await plain.app.inject({ method: 'GET', url: '/healthz' });
    expect(plainHealth.statusCode).toBe(200);
    expect(plainHealth.headers['strict-transport-security']).toBeUndefined();
  }, 90_000);

  it("records the client's address with TRUST_PROXY and the proxy's without it", async () => {
    expect(await auditedAddress(trusted)).toBe(CLIENT);
    expect(await auditedAddress(untrusted)).toBe(PROXY);
  });

  it("with the proxy's range trusted, an X-Forwarded-For the client wrote itself is not believed", async () => {
    // The client sends its own X-Forwarded-For; an appending proxy (nginx's
    // $proxy_add_x_forwarded_for) adds the address it saw. Only the proxy trusted: the address the proxy saw.
    const created = await trusted.app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      remoteAddress: PROXY,
      headers: { 'x-forwarded-for': `198.51.100.1, ${CLIENT}`, authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Forged forwarding' }),
    });
    const db = new pg.Client({ connectionString: trusted.databaseUrl });
    await db.connect();
    const { rows } = await db.query<{ ip: string }>(`SELECT ip FROM audit_log WHERE object_id = $1`, [created.json().id]);
    await db.end();
    expect(rows[0]?.ip).toBe(CLIENT);
  });
});

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PersonSession, staffSession, startTestService, type TestService } from './helpers.js';

// The role matrix, route by route on the API (DESIGN.md "People, sessions and roles"): support
// reads everything and decides disputes and notifications; finance also completes payouts and
// withdrawals and adjusts balances; admin does everything, users, keys and rates included. The
// table is this test's own statement of the contract, written apart from the routes' declarations:
// a route added without a line here fails the first test.
const MATRIX: Record<string, { role: 'support' | 'finance' | 'admin'; confirm?: true }> = {
  'POST /users': { role: 'admin', confirm: true },
  'GET /users': { role: 'admin' },
  'GET /users/{id}': { role: 'admin' },
  'PATCH /users/{id}': { role: 'admin' },
  'POST /users/{id}/password': { role: 'admin', confirm: true },
  'POST /users/{id}/two-factor/reset': { role: 'admin', confirm: true },
  'GET /two-factor-roles': { role: 'support' },
  'PUT /two-factor-roles': { role: 'admin', confirm: true },
  'POST /executors/{id}/login': { role: 'admin', confirm: true },
  'POST /merchants/{id}/users': { role: 'admin', confirm: true },
  'GET /audit': { role: 'admin' },
  'POST /merchants': { role: 'admin' },
  'GET /merchants': { role: 'support' },
  'GET /merchants/{id}': { role: 'support' },
  'POST /merchants/{id}/secret-key/rotate': { role: 'admin', confirm: true },
  'POST /merchants/{id}/terminals': { role: 'admin' },
  'GET /merchants/{id}/terminals': { role: 'support' },
  'GET /terminals/{id}': { role: 'support' },
  'GET /terminals/{id}/statement': { role: 'support' },
  'PATCH /terminals/{id}': { role: 'admin' },
  'POST /terminals/{id}/api-key/rotate': { role: 'admin', confirm: true },
  'POST /terminals/{id}/adjustments': { role: 'finance', confirm: true },
  'GET /terminals/{id}/rates': { role: 'support' },
  'PUT /terminals/{id}/rates/{currency}': { role: 'admin' },
  'DELETE /terminals/{id}/rates/{currency}': { role: 'admin' },
  'GET /rates': { role: 'support' },
  'PUT /rates/{currency}': { role: 'admin' },
  'GET /rates/{currency}/history': { role: 'support' },
  'POST /rates/{currency}/refresh': { role: 'admin' },
  'POST /rates/{currency}/held/accept': { role: 'admin' },
  'POST /rates/{currency}/held/keep': { role: 'admin' },
  'GET /rate-refreshes/{id}': { role: 'support' },
  'GET /terminals/{id}/rates/{currency}/history': { role: 'support' },
  'POST /terminals/{id}/rates/{currency}/refresh': { role: 'admin' },
  'POST /terminals/{id}/rates/{currency}/held/accept': { role: 'admin' },
  'POST /terminals/{id}/rates/{currency}/held/keep': { role: 'admin' },
  'POST /executors': { role: 'admin' },
  'GET /executors': { role: 'support' },
  'GET /executors/{id}': { role: 'support' },
  'PATCH /executors/{id}': { role: 'admin' },
  'POST /executors/{id}/adjustments': { role: 'finance', confirm: true },
  'GET /executors/{id}/statement': { role: 'support' },
  'GET /executors/{id}/deposits': { role: 'support' },
  'POST /executors/{id}/token/rotate': { role: 'admin', confirm: true },
  'POST /executors/{id}/requisites': { role: 'admin' },
  'GET /requisites': { role: 'support' },
  'GET /requisites/{id}': { role: 'support' },
  'PATCH /requisites/{id}': { role: 'support' },
  'GET /risk/blocks': { role: 'support' },
  'POST /risk/blocks': { role: 'support' },
  'DELETE /risk/blocks/{id}': { role: 'support' },
  'GET /risk/limits': { role: 'support' },
  'PUT /risk/limits': { role: 'admin' },
  'DELETE /risk/limits': { role: 'admin' },
  'GET /alerts': { role: 'admin' },
  'PUT /alerts': { role: 'admin' },
  'GET /risk/classes': { role: 'support' },
  'PUT /risk/classes': { role: 'admin' },
  'GET /risk/requisite-limits': { role: 'support' },
  'PUT /risk/requisite-limits': { role: 'admin' },
  'GET /banks': { role: 'support' },
  'POST /banks': { role: 'admin' },
  'PATCH /banks/{code}': { role: 'admin' },
  'GET /payments': { role: 'support' },
  'GET /payments/{id}': { role: 'support' },
  'GET /payments/{id}/timeline': { role: 'support' },
  'POST /payments/{id}/cancel': { role: 'support' },
  'GET /ledger/check': { role: 'support' },
  'GET /reports/merchants': { role: 'support' },
  'GET /reports/executors': { role: 'support' },
  'GET /dashboard': { role: 'support' },
  'GET /first-steps': { role: 'support' },
  'GET /risk/hits': { role: 'support' },
  'GET /risk/hits/export': { role: 'support' },
  'GET /risk/summary': { role: 'support' },
  'POST /executors/{id}/devices': { role: 'admin' },
  'PUT /executors/{id}/device-silence': { role: 'admin' },
  'GET /executors/{id}/devices': { role: 'support' },
  'DELETE /executors/{id}/devices/{deviceId}': { role: 'support' },
  'GET /device-messages': { role: 'support' },
  'POST /device-messages/{id}/link': { role: 'support' },
  'POST /device-messages/{id}/set-aside': { role: 'support' },
  'GET /parser-forms': { role: 'support' },
  'GET /parser-forms/suggest': { role: 'support' },
  'GET /parser-forms/export': { role: 'support' },
  'POST /parser-forms': { role: 'support' },
  'POST /parser-forms/{id}/versions': { role: 'support' },
  'POST /parser-forms/{id}/versions/{version}/publish': { role: 'support' },
  'POST /parser-forms/{id}/retire': { role: 'support' },
  'GET /notifications': { role: 'support' },
  'GET /notifications/{id}': { role: 'support' },
  'POST /notifications/{id}/link': { role: 'support' },
  'POST /notifications/{id}/resolve': { role: 'support' },
  'GET /webhooks': { role: 'support' },
  'GET /webhooks/{id}': { role: 'support' },
  'POST /webhooks/{id}/resend': { role: 'support' },
  'GET /disputes': { role: 'support' },
  'GET /disputes/{id}': { role: 'support' },
  'GET /disputes/{id}/executor-file': { role: 'support' },
  'POST /payments/{id}/dispute/approve': { role: 'support' },
  'POST /payments/{id}/dispute/reject': { role: 'support' },
  'POST /risk/hits/{id}/settle': { role: 'support' },
  'GET /receipts/{id}': { role: 'support' },
  'GET /payouts': { role: 'support' },
  'GET /payouts/{id}': { role: 'support' },
  'GET /payouts/{id}/proof': { role: 'support' },
  'POST /payouts/{id}/complete': { role: 'finance', confirm: true },
  'POST /payouts/{id}/fail': { role: 'finance' },
  'POST /payouts/{id}/cancel': { role: 'finance' },
  'GET /withdrawals': { role: 'support' },
  'GET /withdrawals/{id}': { role: 'support' },
  'POST /withdrawals/{id}/complete': { role: 'finance', confirm: true },
  'POST /withdrawals/{id}/fail': { role: 'finance' },
  'POST /providers': { role: 'admin' },
  'GET /providers': { role: 'support' },
  'PATCH /providers/{id}': { role: 'admin' },
  'GET /terminals/{id}/routes': { role: 'support' },
  'PUT /terminals/{id}/routes': { role: 'admin' },
};

const ROLES = ['support', 'finance', 'admin'] as const;
const RANK = { support: 1, finance: 2, admin: 3 };
const PARAMS: Record<string, string> = {
  id: '00000000-0000-4000-8000-000000000000',
  deviceId: '00000000-0000-4000-8000-000000000000',
  currency: 'RUB',
  code: 'no-such-bank',
  version: '1',
};

let service: TestService;
let app: FastifyInstance;
let operations: string[];
const sessions: Record<string, PersonSession & { codes: string[] }> = {};

beforeAll(async () => {
  service = await startTestService({ LOGIN_ATTEMPTS_PER_MINUTE: '1000' });
  app = service.app;
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  operations = Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/admin/v1/'))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.slice('/admin/v1'.length)}`));
  // Each role as the default policy has it: admin and finance enrolled in two-factor (required of them).
  for (const role of ROLES) sessions[role] = await staffSession(service, `${role}@roles.test`, role);
});
afterAll(async () => service?.close());

function call(role: string, operation: string) {
  const [method, template] = operation.split(' ') as [string, string];
  const url = `/admin/v1${template.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name]!)}`;
  const session = sessions[role]!;
  return app.inject({
    method: method as 'GET',
    url,
    headers: {
      cookie: session.cookie,
      'x-csrf-token': session.csrf,
      ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
    },
    ...(method === 'GET' || method === 'DELETE' ? {} : { payload: '{}' }),
  });
}

describe('the role matrix', () => {
  it('the OpenAPI document says who may call each operator route', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const complete = document.paths['/admin/v1/payouts/{id}/complete'].post;
    expect(complete.description).toMatch(/the `finance` role or above/);
    expect(complete.description).toMatch(/AUTH_004/);
    expect(complete.security).toEqual([{ operator: [] }, { session: [], csrf: [] }]);
    expect(document.paths['/admin/v1/users'].get.description).toMatch(/the `admin` role\./);
    expect(document.components.securitySchemes.session).toEqual({ type: 'apiKey', in: 'cookie', name: 'kassir_session' });
  });

  it('covers every operator route, and nothing else', () => {
    expect(operations.length).toBeGreaterThan(60);
    expect([...operations].sort()).toEqual(Object.keys(MATRIX).sort());
  });

  it('refuses each role exactly the routes above it (403 AUTH_003), route by route', async () => {
    const mismatches: string[] = [];
    for (const operation of Object.keys(MATRIX)) {
      const needed = MATRIX[operation]!.role;
      for (const role of ROLES) {
        const res = await call(role, operation);
        const refused = res.statusCode === 403 && res.json().error === 'AUTH_003';
        const shouldRefuse = RANK[role] < RANK[needed];
        if (refused !== shouldRefuse) mismatches.push(`${role} ${operation}: ${res.statusCode} ${res.body.slice(0, 120)}`);
        if (refused) expect(res.json().data).toEqual({ required_role: needed });
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('asks a person to confirm again (403 AUTH_004) for exactly the risky routes', async () => {
    const mismatches: string[] = [];
    for (const operation of Object.keys(MATRIX)) {
      const res = await call('admin', operation);
      const asked = res.statusCode === 403 && res.json().error === 'AUTH_004';
      if (asked !== (MATRIX[operation]!.confirm === true)) mismatches.push(`${operation}: ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(mismatches).toEqual([]);

    // Confirmed, the same routes go through to their own checks (here: an unknown object or a missing field).
    const admin = sessions.admin!;
    const confirmed = await app.inject({
      method: 'POST',
      url: '/auth/v1/confirm',
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
      payload: { otp: admin.codes[0] },
    });
    expect(confirmed.statusCode).toBe(200);
    for (const operation of Object.keys(MATRIX).filter((op) => MATRIX[op]!.confirm)) {
      const res = await call('admin', operation);
      expect(res.statusCode, `${operation}: ${res.body}`).not.toBe(403);
    }
  });

  it('the bearer token is every role and is never asked to confirm', async () => {
    for (const operation of Object.keys(MATRIX)) {
      const [method, template] = operation.split(' ') as [string, string];
      const res = await app.inject({
        method: method as 'GET',
        url: `/admin/v1${template.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name]!)}`,
        headers: { authorization: 'Bearer test-admin-token', ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
        ...(method === 'GET' || method === 'DELETE' ? {} : { payload: '{}' }),
      });
      expect(res.statusCode, `${operation}: ${res.body}`).not.toBe(403);
    }
  });

  it('no cookie and no token: 401 AUTH_001 that says how to sign in', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/v1/payments' });
    expect([res.statusCode, res.json().error]).toEqual([401, 'AUTH_001']);
    expect(res.json().message).toMatch(/POST \/auth\/v1\/login/);
  });
});

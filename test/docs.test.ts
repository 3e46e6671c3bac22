/**
 * The API reference (issue 20): the OpenAPI 3.1 document at /openapi.json is valid, and complete
 * for the merchant API — a summary and description on every /v1 route, every error code each route
 * can answer (those of spec/merchant-api.md, and those the service really answers), examples —; its
 * worked signing example is true of the service's own signing code; and /docs renders it in
 * Chromium from this origin alone, under its CSP. SCREENSHOTS=1 writes docs/merchant.md's picture.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SIGNING_EXAMPLES } from '../src/http/openapi.js';
import { BodySigner, signRequest } from '../src/http/signature.js';
import { launchChromium, screenshotDir, watchedPage } from './browser.js';
import { admin, createMerchant, type MerchantCredentials, signed, startWebTestService, type TestService } from './helpers.js';

interface Media {
  schema?: Record<string, unknown>;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
interface OpenApiDocument {
  openapi: string;
  info: { title: string; description: string };
  tags: { name: string; description?: string }[];
  'x-tagGroups': { name: string; tags: string[] }[];
  paths: Record<string, Record<string, Operation>>;
}

/**
 * The spec's error codes per endpoint, with their HTTP statuses (spec/merchant-api.md "Endpoints"
 * and "Errors"), and DESIGN.md decision 3's AUTH_* on every signed route.
 */
const SPEC_ERRORS: Record<string, Record<string, number>> = {
  'POST /v1/payments': { PAY_001: 500, PAY_002: 400, PAY_003: 409, PAY_004: 503, PAY_005: 429 },
  'GET /v1/payments/{id}': { PAY_006: 404 },
  'GET /v1/payments/by-ext-id/{extId}': { PAY_006: 404 },
  'POST /v1/payments/{id}/confirm': { PAY_001: 500, PAY_006: 404, PAY_008: 400, PAY_009: 400, PAY_010: 400 },
  'POST /v1/payments/{id}/receipt': { PAY_002: 400, PAY_006: 404, PAY_008: 400, PAY_009: 400, PAY_010: 400 },
  'POST /v1/payments/{id}/dispute': { PAY_002: 400, PAY_006: 404, DIS_001: 400, DIS_002: 409, PAY_009: 400, PAY_010: 400 },
  'POST /v1/payments/{id}/dispute/cancel': { PAY_006: 404, DIS_003: 400, SYS_001: 500 },
  'POST /v1/payouts': { PAY_002: 400, PAY_003: 409, SYS_001: 500 },
  'GET /v1/payouts/{id}': { PAY_001: 404 },
  'GET /v1/payouts/by-ext-id/{extId}': { PAY_001: 404 },
  'GET /v1/payouts': {},
  'POST /v1/withdrawals': { WDR_001: 400, WDR_002: 400 },
  'GET /v1/withdrawals/{id}': { WDR_003: 404 },
  'GET /v1/withdrawals': {},
  'GET /v1/withdrawals/fee': {},
  'GET /v1/terminals': {},
  'GET /v1/balance': {},
  'POST /v1/transfers': { TRF_001: 400, TRF_002: 404, TRF_003: 400 },
  'GET /v1/public/banks': {},
};
const AUTH_ERRORS = { AUTH_001: 401, AUTH_002: 401, AUTH_003: 403 };

/** The merchant's main operations: each shows a request example (when it takes a body) and an answer example. */
const MAIN_OPERATIONS = [
  'POST /v1/payments',
  'GET /v1/payments/{id}',
  'POST /v1/payments/{id}/confirm',
  'POST /v1/payments/{id}/dispute',
  'POST /v1/payouts',
  'GET /v1/payouts/{id}',
  'POST /v1/withdrawals',
  'POST /v1/transfers',
  'GET /v1/terminals',
  'GET /v1/balance',
];

const SHOTS = screenshotDir('docs');
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

let service: TestService;
let origin: string;
let document: OpenApiDocument;
let merchant: MerchantCredentials;

beforeAll(async () => {
  ({ service, origin } = await startWebTestService());
  merchant = await createMerchant(service.app);
  const res = await service.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  document = res.json();
});
afterAll(async () => service?.close());

/** Every operation of the document as `METHOD /path` with the operation. */
function operations(filter: (path: string) => boolean = () => true): [string, Operation][] {
  return Object.entries(document.paths)
    .filter(([path]) => filter(path))
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation]));
}
const merchantOperations = () => operations((path) => path.startsWith('/v1/'));

/** The error codes an operation documents, by HTTP status. */
function documentedCodes(op: Operation): Map<string, number> {
  const codes = new Map<string, number>();
  for (const [status, response] of Object.entries(op.responses)) {
    if (!/^[45]/.test(status)) continue;
    const schema = response.content?.['application/json']?.schema as { properties?: { error?: { enum?: string[] } } } | undefined;
    for (const code of schema?.properties?.error?.enum ?? []) codes.set(`${code} ${status}`, Number(status));
  }
  return codes;
}

function ajv2020(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // OpenAPI's own keywords beside JSON Schema's (OpenAPI 3.1 "Schema Object").
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs']);
  return ajv;
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  // Compiles every schema of the document: seconds alone, more than the default 30 s on a machine
  // running other suites beside it.
  it('has schemas that are valid JSON Schema 2020-12, and examples that fit them', { timeout: 120_000 }, () => {
    const ajv = ajv2020();
    const problems: string[] = [];
    let examples = 0;
    const check = (where: string, media: Media) => {
      if (!media.schema) return;
      let validate: ReturnType<Ajv2020['compile']>;
      try {
        validate = ajv.compile(media.schema);
      } catch (err) {
        problems.push(`${where}: ${(err as Error).message}`);
        return;
      }
      const values = [
        ...(media.example === undefined ? [] : [['example', media.example] as const]),
        ...Object.entries(media.examples ?? {}).map(([name, e]) => [name, e.value] as const),
      ];
      for (const [name, value] of values) {
        examples++;
        if (!validate(value)) problems.push(`${where} example ${name}: ${ajv.errorsText(validate.errors)}`);
      }
    };
    for (const [name, op] of operations()) {
      for (const parameter of op.parameters ?? []) check(`${name} parameter ${parameter.name}`, { schema: parameter.schema });
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) check(`${name} body ${type}`, media);
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) check(`${name} ${status} ${type}`, media);
      }
    }
    expect(problems).toEqual([]);
    expect(examples).toBeGreaterThan(100);
  });

  it('declares every path parameter, and describes every response', () => {
    const problems: string[] = [];
    for (const [name, op] of operations()) {
      const inPath = [...name.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? []).filter((p) => p.in === 'path');
      if (JSON.stringify(declared.map((p) => p.name).sort()) !== JSON.stringify(inPath))
        problems.push(`${name}: path parameters ${declared.map((p) => p.name)}`);
      if (declared.some((p) => p.required !== true)) problems.push(`${name}: a path parameter not required`);
      if (Object.keys(op.responses).length === 0) problems.push(`${name}: no responses`);
    }
    expect(problems).toEqual([]);
  });

  it('gives every operation, of every API, a summary and its 4xx error responses', () => {
    const incomplete = operations()
      .filter(([, op]) => !op.summary?.trim() || !Object.keys(op.responses).some((status) => /^4\d\d$/.test(status)))
      .map(([name]) => name);
    expect(operations().length).toBeGreaterThan(100);
    expect(incomplete).toEqual([]);
  });

  it('puts every tag in one group, with the merchant API first', () => {
    const groups = document['x-tagGroups'];
    expect(groups[0]).toMatchObject({
      name: 'Merchant API',
      tags: expect.arrayContaining(['payments', 'payouts', 'withdrawals', 'disputes', 'balances', 'directory']),
    });
    expect(groups.map((g) => g.name)).toEqual(expect.arrayContaining(['Operator API', 'Executor API', 'Device API']));
    const grouped = groups.flatMap((g) => g.tags);
    expect(new Set(grouped).size).toBe(grouped.length);
    const declared = new Set(document.tags.map((t) => t.name));
    const used = new Set(operations().flatMap(([, op]) => op.tags ?? []));
    for (const tag of used) {
      expect(grouped, `tag ${tag} is in no group: the reference would not show it`).toContain(tag);
      expect(declared, `tag ${tag} has no description`).toContain(tag);
    }
    // The merchant's routes are in the merchant's sections and nowhere else.
    const merchantTags = new Set(groups[0]!.tags);
    for (const [name, op] of merchantOperations())
      expect(
        op.tags?.every((t) => merchantTags.has(t)),
        name,
      ).toBe(true);
  });

  it('has every endpoint of the spec', () => {
    const names = new Set(merchantOperations().map(([name]) => name));
    for (const name of Object.keys(SPEC_ERRORS)) expect(names, name).toContain(name);
  });

  it('gives every /v1 route a summary, a description and its error responses in the spec body', () => {
    const ops = merchantOperations();
    expect(ops.length).toBeGreaterThanOrEqual(Object.keys(SPEC_ERRORS).length);
    for (const [name, op] of ops) {
      expect(op.summary, name).toBeTruthy();
      expect(op.description?.length ?? 0, `${name} description`).toBeGreaterThan(30);
      const errorStatuses = Object.keys(op.responses).filter((s) => /^[45]/.test(s));
      expect(errorStatuses, `${name}: a 4xx and a 5xx`).toEqual(expect.arrayContaining(['500', '503']));
      for (const status of errorStatuses) {
        const response = op.responses[status]!;
        const media = response.content?.['application/json'];
        expect(media, `${name} ${status}`).toBeDefined();
        expect(media!.schema).toMatchObject({ type: 'object', required: ['error', 'message'], properties: { error: {}, message: {}, data: {} } });
        const codes = (media!.schema as { properties: { error: { enum: string[] } } }).properties.error.enum;
        // Each code has its line in the description and an example body.
        expect(Object.keys(media!.examples ?? {}).sort(), `${name} ${status}`).toEqual([...codes].sort());
        for (const code of codes) {
          expect(response.description).toContain(`\`${code}\``);
          expect(media!.examples![code]!.value).toMatchObject({ error: code, message: expect.any(String) });
        }
      }
      const codes = documentedCodes(op);
      const spec = { ...SPEC_ERRORS[name], ...(op.security?.length ? AUTH_ERRORS : {}) };
      for (const [code, status] of Object.entries(spec)) expect(codes.has(`${code} ${status}`), `${name} documents ${code} with ${status}`).toBe(true);
    }
    // The directory is public: no security, no AUTH_*.
    const banks = document.paths['/v1/public/banks']!.get!;
    expect(banks.security).toEqual([]);
    expect([...documentedCodes(banks).keys()].some((c) => c.startsWith('AUTH_'))).toBe(false);
  });

  it('documents the codes the /v1 routes really answer', async () => {
    const idle = await createMerchant(service.app);
    await admin(service.app, 'PATCH', `/terminals/${idle.terminalId}`, { is_active: false });
    const unknown = '00000000-0000-4000-8000-000000000000';
    const undocumented: string[] = [];
    const seen = new Set<string>();
    const expectDocumented = (name: string, op: Operation, res: { statusCode: number; json(): { error?: string } }) => {
      if (res.statusCode < 400) return;
      const code = res.json().error;
      seen.add(`${code} ${res.statusCode}`);
      if (!documentedCodes(op).has(`${code} ${res.statusCode}`)) undocumented.push(`${name} answered ${res.statusCode} ${code}`);
    };
    for (const [name, op] of merchantOperations()) {
      const [method, template] = name.split(' ') as [string, string];
      const url = template.replace(/\{\w+\}/g, unknown);
      const body = method === 'POST' ? {} : undefined;
      if (op.security?.length) {
        expectDocumented(name, op, await service.app.inject({ method: method as 'GET', url }));
        expectDocumented(name, op, await signed(service.app, { ...merchant, secretKey: 'sk_wrong' }, method, url, body, origin));
        expectDocumented(name, op, await signed(service.app, idle, method, url, body, origin));
      }
      expectDocumented(name, op, await signed(service.app, merchant, method, url, body, origin));
      expectDocumented(name, op, await signed(service.app, merchant, method, `${url}?limit=%01`, body, origin));
      if (method === 'POST') {
        expectDocumented(
          name,
          op,
          await service.app.inject({
            method: 'POST',
            url,
            headers: { 'content-type': 'text/plain', 'x-identity': merchant.apiKey, 'x-signature': 'x' },
            payload: 'hello',
          }),
        );
      }
    }
    expect(undocumented).toEqual([]);
    // The probes reached past authentication and into the routes.
    for (const answer of ['AUTH_001 401', 'AUTH_002 401', 'AUTH_003 403', 'PAY_006 404', 'PAY_001 404', 'WDR_003 404', 'PAY_002 400', 'TRF_001 400']) {
      expect(seen, answer).toContain(answer);
    }
  });

  it('shows request and answer examples for the main merchant operations', () => {
    for (const name of MAIN_OPERATIONS) {
      const [method, path] = name.split(' ') as [string, string];
      const op = document.paths[path]![method.toLowerCase()]!;
      const answer = op.responses['200']?.content?.['application/json'];
      expect(Object.keys(answer?.examples ?? {}).length, `${name} answer example`).toBeGreaterThan(0);
      if (op.requestBody) {
        expect(Object.keys(op.requestBody.content['application/json']?.examples ?? {}).length, `${name} request example`).toBeGreaterThan(0);
      }
    }
    const create = document.paths['/v1/payments']!.post!;
    expect(Object.keys(create.requestBody!.content['application/json']!.examples!)).toEqual(['card', 'sbp', 'crossBorder']);
    // Upload routes show both bodies they read; confirm's may be empty.
    const confirm = document.paths['/v1/payments/{id}/confirm']!.post!;
    expect(Object.keys(confirm.requestBody!.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(confirm.requestBody!.required).toBe(false);
    expect(document.paths['/v1/payments/{id}/receipt']!.post!.requestBody!.required).toBe(true);
    // Every signed POST documents Idempotency-Key.
    expect(create.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]));
  });
});

describe('what client generators and linters need (issue 30, item 12)', () => {
  it("passes Redocly's recommended rules with no error and no warning (redocly.yaml says which are off, and why)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'kassir-openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    try {
      const run = spawnSync(
        process.execPath,
        [
          join(ROOT, 'node_modules/@redocly/cli/bin/cli.js'),
          'lint',
          file,
          '--config',
          join(ROOT, 'redocly.yaml'),
          '--format',
          'json',
          '--max-problems',
          '1000',
        ],
        { encoding: 'utf8', cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      );
      const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names every operation: a unique camelCase operationId, the merchant’s as a client would call them', () => {
    const ids = operations().map(([name, op]) => [name, (op as { operationId?: string }).operationId] as const);
    expect(ids.filter(([, id]) => !id || !/^[a-z][A-Za-z0-9]*$/.test(id))).toEqual([]);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    const byName = Object.fromEntries(ids);
    expect(byName).toMatchObject({
      'POST /v1/payments': 'createPayment',
      'GET /v1/payments/{id}': 'getPayment',
      'GET /v1/payments/by-ext-id/{extId}': 'getPaymentByExtId',
      'POST /v1/payments/{id}/confirm': 'confirmPayment',
      'POST /v1/payments/{id}/receipt': 'attachPaymentReceipt',
      'POST /v1/payments/{id}/dispute': 'openPaymentDispute',
      'POST /v1/payments/{id}/dispute/cancel': 'cancelPaymentDispute',
      'POST /v1/payouts': 'createPayout',
      'GET /v1/payouts': 'listPayouts',
      'GET /v1/payouts/{id}': 'getPayout',
      'POST /v1/withdrawals': 'createWithdrawal',
      'GET /v1/withdrawals/fee': 'getWithdrawalFee',
      'GET /v1/terminals': 'listTerminals',
      'GET /v1/balance': 'getBalance',
      'POST /v1/transfers': 'createTransfer',
      'GET /v1/public/banks': 'listBanks',
      'POST /auth/v1/login': 'signIn',
      'POST /admin/v1/merchants/{id}/secret-key/rotate': 'adminRotateMerchantSecretKey',
      'POST /executor/v1/payouts/{id}/complete': 'executorCompletePayout',
    });
  });

  it('declares the credentials of every operation, and `security: []` on the public ones', () => {
    expect(
      operations()
        .filter(([, op]) => !Array.isArray(op.security))
        .map(([name]) => name),
    ).toEqual([]);
    const open = operations()
      .filter(([, op]) => op.security!.length === 0)
      .map(([name]) => name)
      .sort();
    expect(open).toEqual(['GET /v1/public/banks', 'POST /auth/v1/login', 'POST /device/v1/hooks/{token}/{format}']);
    expect(document.paths['/executor/v1/balance']!.get!.security).toEqual([{ operator: [] }, { session: [], csrf: [] }]);
    expect(document.paths['/merchant/v1/payments']!.get!.security).toEqual([{ session: [], csrf: [] }]);
  });

  it('documents the success answer of every operation, with its schema', () => {
    const missing = operations()
      .filter(([, op]) => {
        const success = Object.entries(op.responses).filter(([status]) => /^2\d\d$/.test(status));
        return success.length === 0 || success.some(([status, response]) => status !== '204' && !Object.values(response.content ?? {}).some((m) => m.schema));
      })
      .map(([name]) => name);
    expect(missing).toEqual([]);
  });
});

describe('the signing scheme', () => {
  const { secretKey, baseUrl, requests } = SIGNING_EXAMPLES;

  it("the worked examples' signatures are the service's own", () => {
    for (const { method, path, body, signature } of requests) {
      expect(signRequest(secretKey, method, baseUrl + path, body), `${method} ${path}`).toBe(signature);
      // And the check the service makes of an incoming request accepts it.
      const signer = new BodySigner([secretKey], method, baseUrl + path);
      signer.update(Buffer.from(body));
      expect(signer.matches(signature)).toBe(true);
    }
  });

  it('the document explains them with those very values', () => {
    const text = document.info.description;
    expect(text).toContain(`\`${secretKey}\``);
    for (const { method, path, body, signature } of requests) {
      expect(text).toContain(`${method}${baseUrl}${path}${body}`);
      expect(text).toContain(`X-Signature: ${signature}`);
    }
    expect(text).toContain('base64(HMAC-SHA1(secret_key, METHOD + URL + BODY))');
  });
});

describe('/docs in a browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium(inject('chromiumPath'));
  });
  afterAll(async () => browser?.close());

  it('renders the merchant API with its operations, loading nothing from any other origin', async () => {
    const { page, problems } = await watchedPage(browser, { viewport: { width: 1280, height: 860 } });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    const answer = await page.goto(`${origin}/docs`);
    expect(answer?.headers()['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-[^']+'/);

    await page.getByRole('heading', { name: 'Kassir API', exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Worked example' }).waitFor();
    // The merchant API first, its sections open; the other audiences after it in their own.
    const groups = (await page.getByRole('button', { name: /^(Open|Close) Group - / }).allTextContents()).map((t) => t.replace(/^(Open|Close) Group - /, ''));
    const order = ['Merchant API', 'Payments', 'Disputes', 'Payouts', 'Withdrawals', 'Operator API', 'Executor API', 'Device API'].map((name) =>
      groups.indexOf(name),
    );
    expect(
      order.every((i) => i >= 0),
      groups.join(', '),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    await page.getByRole('button', { name: 'Open Group - Payments' }).click();
    await page.getByText('Create a payment', { exact: true }).first().click();
    await page.getByRole('heading', { name: 'Create a payment' }).waitFor();
    await page.getByRole('heading', { name: 'Get a payment by ID' }).waitFor();
    await page.getByText('RUB by card, PENDING').first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'api-docs.png') });

    for (const section of ['Payouts', 'Withdrawals']) await page.getByRole('button', { name: `Open Group - ${section}` }).click();
    await page.getByText('Create a payout', { exact: true }).first().waitFor();
    await page.getByText('Create a withdrawal', { exact: true }).first().waitFor();

    expect(requested.length).toBeGreaterThanOrEqual(3);
    const foreign = requested.filter((url) => !/^(data|blob):/.test(url) && new URL(url).origin !== origin);
    expect(foreign).toEqual([]);
    expect(requested).toContain(`${origin}/docs/js/scalar.js`);
    expect(requested).toContain(`${origin}/openapi.json`);
    expect(problems).toEqual([]);
  }, 60_000);
});

import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../src/instance.js';
import { createLogger } from '../src/lib/logger.js';
import { IdentityCache, LISTENER_APPLICATION_NAME } from '../src/merchants/identity.cache.js';
import {
  adminOk,
  createExecutor,
  createMerchant,
  createRequisite,
  type MerchantCredentials,
  setRate,
  signed,
  startTestService,
  type TestService,
  uniqueExtId,
  until,
} from './helpers.js';

// The merchant API's callers are kept in memory between requests (IdentityCache). What must
// never happen: a revoked key, an expired secret, a deactivated terminal or an old rate served
// from memory after the database said otherwise.

let service: TestService;
let other: RunningService;

beforeAll(async () => {
  service = await startTestService();
  other = await service.startAnother();
});

afterAll(async () => {
  await service?.close();
});

const terminals = (app: RunningService['app'], creds: Pick<MerchantCredentials, 'apiKey' | 'secretKey'>) => signed(app, creds, 'GET', '/v1/terminals');

async function statusOf(app: RunningService['app'], creds: Pick<MerchantCredentials, 'apiKey' | 'secretKey'>): Promise<string> {
  const res = await terminals(app, creds);
  return res.statusCode === 200 ? '200' : `${res.statusCode} ${res.json().error}`;
}

describe('identity cache', () => {
  it('serves a known caller from memory, and forgets it when any writer changes its key in the database', async () => {
    const merchant = await createMerchant(service.app);
    // The merchant's creation announces itself to this instance too; on a busy machine that
    // announcement may land after the first request has cached the caller, and empties the cache
    // (rightly): the caller is cached again by the next request.
    await until(
      async () => ((await statusOf(other.app, merchant)) === '200' && other.ctx.identities.size > 0 ? true : undefined),
      10_000,
      100,
      'the caller cached',
    );
    expect(other.ctx.identities.serving).toBe(true);
    expect(other.ctx.identities.size).toBeGreaterThan(0);
    // Plain SQL, as the CLI or a script would: no operator API on this instance is involved.
    await service.ctx.db.query(`UPDATE terminal_api_keys SET expires_at = now() - interval '1 second' WHERE terminal_id = $1`, [merchant.terminalId]);
    await until(async () => ((await statusOf(other.app, merchant)) === '401 AUTH_002' ? true : undefined), 5_000, 20, 'the revoked key refused');
  });

  it("applies this instance's own operator changes to the very next request, and another instance's as soon as they are announced", async () => {
    const merchant = await createMerchant(service.app);
    expect(await statusOf(service.app, merchant)).toBe('200');
    expect(await statusOf(other.app, merchant)).toBe('200');
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: false });
    // No waiting on this instance.
    expect(await statusOf(service.app, merchant)).toBe('403 AUTH_003');
    await until(async () => ((await statusOf(other.app, merchant)) === '403 AUTH_003' ? true : undefined), 5_000, 20, 'the other instance refusing');
    await adminOk(service.app, 'PATCH', `/terminals/${merchant.terminalId}`, { is_active: true });
    expect(await statusOf(service.app, merchant)).toBe('200');
  });

  it('stops accepting an old secret at the end of its grace period, with no announcement to tell it', async () => {
    const merchant = await createMerchant(service.app);
    const rotated = await adminOk<{ secret_key: string }>(service.app, 'POST', `/merchants/${merchant.merchantId}/secret-key/rotate`, { grace_seconds: 1 });
    const started = Date.now();
    // Read (and kept) while the old secret is still in its grace period.
    expect(await statusOf(service.app, merchant)).toBe('200');
    expect(await statusOf(service.app, { ...merchant, secretKey: rotated.secret_key })).toBe('200');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_100 - (Date.now() - started))));
    expect(await statusOf(service.app, merchant)).toBe('401 AUTH_002');
    expect(await statusOf(service.app, { ...merchant, secretKey: rotated.secret_key })).toBe('200');
  });

  it('an API key rotated with a grace period stops working when it ends', async () => {
    const merchant = await createMerchant(service.app);
    const rotated = await adminOk<{ api_key: string }>(service.app, 'POST', `/terminals/${merchant.terminalId}/api-key/rotate`, { grace_seconds: 1 });
    const started = Date.now();
    expect(await statusOf(service.app, merchant)).toBe('200');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1_100 - (Date.now() - started))));
    expect(await statusOf(service.app, merchant)).toBe('401 AUTH_002');
    expect(await statusOf(service.app, { ...merchant, apiKey: rotated.api_key })).toBe('200');
  });

  it('a rate changed through another instance is the one the next creates use', async () => {
    const merchant = await createMerchant(service.app);
    const executor = await createExecutor(service.app);
    await createRequisite(service.app, executor.id);
    await createRequisite(service.app, executor.id);
    const create = async (amount: number) => {
      const res = await signed(service.app, merchant, 'POST', '/v1/payments', { ext_id: uniqueExtId(), amount, currency: 'RUB', method: 'CARD' });
      expect(res.statusCode, res.body).toBe(200);
      return String(res.json().rate);
    };
    await setRate(other.app, 'RUB', 90);
    await until(async () => ((await create(1000 + Math.floor(Math.random() * 1000))) === '90' ? true : undefined), 5_000, 20, 'rate 90');
    await setRate(other.app, 'RUB', 91.5);
    await until(async () => ((await create(1000 + Math.floor(Math.random() * 1000))) === '91.5' ? true : undefined), 5_000, 20, 'rate 91.5');
  });

  it("a terminal's routes changed by any writer are the ones the next creates on another instance follow", async () => {
    const merchant = await createMerchant(service.app);
    const executor = await createExecutor(service.app);
    await createRequisite(service.app, executor.id);
    await createRequisite(service.app, executor.id);
    await setRate(service.app, 'RUB', 90);
    const create = async () => {
      const res = await signed(other.app, merchant, 'POST', '/v1/payments', {
        ext_id: uniqueExtId(),
        amount: 1000 + Math.floor(Math.random() * 1000),
        currency: 'RUB',
        method: 'CARD',
      });
      return res.statusCode === 200 ? '200' : `${res.statusCode} ${res.json().error}`;
    };
    // No routes: the terminal's own executors. Kept in memory on the other instance from here on.
    expect(await create()).toBe('200');
    // Plain SQL: one route, to the executors, for KZT only — a RUB create has nowhere to go.
    await service.ctx.db.query(`INSERT INTO terminal_routes (terminal_id, position, provider_id, currencies) VALUES ($1, 0, NULL, '{KZT}')`, [
      merchant.terminalId,
    ]);
    await until(async () => ((await create()) === '503 PAY_004' ? true : undefined), 5_000, 20, 'the RUB create refused by the new route');
    await service.ctx.db.query(`DELETE FROM terminal_routes WHERE terminal_id = $1`, [merchant.terminalId]);
    await until(async () => ((await create()) === '200' ? true : undefined), 5_000, 20, 'the RUB create served again');
  });

  it('a change made as the announcing connection is lost is not served from memory either', async () => {
    const merchant = await createMerchant(service.app);
    expect(await statusOf(other.app, merchant)).toBe('200');
    const admin = new pg.Client({ connectionString: service.databaseUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = $1`,
        [LISTENER_APPLICATION_NAME],
      );
      expect(rows[0]!.n).toBe(2);
      // Announced to nobody, or to the new connection: either way it must be seen.
      await admin.query(`UPDATE terminal_api_keys SET expires_at = now() - interval '1 second' WHERE terminal_id = $1`, [merchant.terminalId]);
      await until(async () => ((await statusOf(other.app, merchant)) === '401 AUTH_002' ? true : undefined), 10_000, 20, 'the revoked key refused');
      await until(() => (other.ctx.identities.serving ? true : undefined), 10_000, 20, 'the cache serving again');
    } finally {
      await admin.end();
    }
  });
});

/** A TCP relay to the test database that can be cut (every connection dropped, new ones refused) and restored. */
async function relay(target: URL): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server = createServer((client) => {
    if (!open) return client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target.href);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("executors' tokens from memory (issue 38, migration 058)", () => {
  const balance = async (app: RunningService['app'], token: string): Promise<string> => {
    const res = await app.inject({ method: 'GET', url: '/executor/v1/balance', headers: { authorization: `Bearer ${token}` } });
    return res.statusCode === 200 ? '200' : `${res.statusCode} ${res.json().error}`;
  };
  /** Both instances answer `token` with 200 and keep its executor in memory. */
  async function cachedOnBoth(token: string): Promise<void> {
    for (const instance of [service, other]) {
      // As above: an announcement of the executor's creation may land after the first read, and empty the cache.
      await until(
        async () => ((await balance(instance.app, token)) === '200' && instance.ctx.identities.size > 0 ? true : undefined),
        10_000,
        50,
        'the executor cached',
      );
    }
  }

  it("serves an executor's token from memory, and refuses a rotated one at once here and promptly on the other instance", async () => {
    const executor = await createExecutor(service.app, 'Cached', { deposit: 0 });
    await cachedOnBoth(executor.token);
    const sizeBefore = other.ctx.identities.size;
    expect(await balance(other.app, executor.token)).toBe('200');
    expect(other.ctx.identities.size).toBe(sizeBefore); // served from memory: nothing new kept
    const rotated = await adminOk<{ token: string }>(service.app, 'POST', `/executors/${executor.id}/token/rotate`, {});
    // No waiting on the instance that made the change.
    expect(await balance(service.app, executor.token)).toBe('401 AUTH_002');
    await until(async () => ((await balance(other.app, executor.token)) === '401 AUTH_002' ? true : undefined), 5_000, 20, 'the old token refused there');
    expect(await balance(other.app, rotated.token)).toBe('200');
    expect(await balance(service.app, rotated.token)).toBe('200');
  });

  it('refuses a deactivated executor on both instances, whichever made the change, and takes it back when it is active again', async () => {
    const executor = await createExecutor(service.app, 'Deactivated', { deposit: 0 });
    await cachedOnBoth(executor.token);
    // Through the other instance's operator API this time.
    await adminOk(other.app, 'PATCH', `/executors/${executor.id}`, { is_active: false });
    expect(await balance(other.app, executor.token)).toBe('403 AUTH_003');
    await until(async () => ((await balance(service.app, executor.token)) === '403 AUTH_003' ? true : undefined), 5_000, 20, 'refused on the first instance');
    await adminOk(service.app, 'PATCH', `/executors/${executor.id}`, { is_active: true });
    expect(await balance(service.app, executor.token)).toBe('200');
    await until(async () => ((await balance(other.app, executor.token)) === '200' ? true : undefined), 5_000, 20, 'active again there');
  });

  it('forgets an executor changed by plain SQL (the CLI, a script) on both instances', async () => {
    const executor = await createExecutor(service.app, 'Scripted', { deposit: 0 });
    await cachedOnBoth(executor.token);
    await service.ctx.db.query('UPDATE executors SET is_active = false WHERE id = $1', [executor.id]);
    for (const instance of [service, other]) {
      await until(async () => ((await balance(instance.app, executor.token)) === '403 AUTH_003' ? true : undefined), 5_000, 20, 'refused');
    }
    await service.ctx.db.query(`UPDATE executors SET token_hash = sha256('revoked by a script'::bytea), is_active = true WHERE id = $1`, [executor.id]);
    for (const instance of [service, other]) {
      await until(async () => ((await balance(instance.app, executor.token)) === '401 AUTH_002' ? true : undefined), 5_000, 20, 'refused');
    }
  });

  it("announces a change of an executor's token, name or activity, and none of the columns its jobs write all the time", async () => {
    const executor = await createExecutor(service.app, 'Quiet', { deposit: 0 });
    const listener = new pg.Client({ connectionString: service.databaseUrl });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(`${n.channel} ${n.payload}`));
      await listener.query('LISTEN kassir_identity');
      const marker = async (label: string) => {
        // An announcement of another table, as a marker: announcements arrive in commit order.
        await service.ctx.db.query(`SELECT pg_notify('kassir_identity', $1)`, [label]);
        await until(() => (heard.includes(`kassir_identity ${label}`) ? true : undefined), 5_000, 10, label);
      };
      await marker('start');
      heard.length = 0;
      // What the score, deposit, devices and disputes jobs write: no announcement.
      await service.ctx.db.query(
        'UPDATE executors SET score = score, open_disputes = open_disputes, devices_silent = NOT devices_silent, updated_at = now() WHERE id = $1',
        [executor.id],
      );
      // A name set to what it was: no announcement either.
      await service.ctx.db.query('UPDATE executors SET name = name, is_active = is_active WHERE id = $1', [executor.id]);
      await marker('quiet');
      expect(heard).toEqual(['kassir_identity quiet']);
      heard.length = 0;
      await service.ctx.db.query(`UPDATE executors SET name = 'Renamed' WHERE id = $1`, [executor.id]);
      await marker('renamed');
      expect(heard).toEqual(['kassir_identity executors', 'kassir_identity renamed']);
    } finally {
      await listener.end();
    }
  });
});

describe('IdentityCache.get', () => {
  it('does not keep a read that a change overlapped, nor a caller that does not exist', async () => {
    const cache = new IdentityCache(createLogger('silent'));
    await cache.start(service.databaseUrl);
    try {
      expect(
        await cache.get('a', async () => {
          cache.forget(); // a change announced while the read was under way
          return { value: 'old', validUntil: null };
        }),
      ).toBe('old');
      expect(cache.size).toBe(0);
      expect(await cache.get('b', async () => undefined)).toBeUndefined();
      expect(cache.size).toBe(0);
      expect(await cache.get('c', async () => ({ value: 'kept', validUntil: null }))).toBe('kept');
      expect(await cache.get('c', async () => ({ value: 'not read', validUntil: null }))).toBe('kept');
      // Past its own expiry, read again.
      expect(await cache.get('d', async () => ({ value: 'expired', validUntil: new Date(Date.now() - 1) }))).toBe('expired');
      expect(await cache.get('d', async () => ({ value: 'fresh', validUntil: null }))).toBe('fresh');
    } finally {
      await cache.stop();
    }
    // Stopped: nothing is served from memory.
    expect(await cache.get('c', async () => ({ value: 'read', validUntil: null }))).toBe('read');
  });

  it('serves nothing from memory while the announcing connection is down, and forgets everything once it is back', async () => {
    const link = await relay(new URL(service.databaseUrl));
    const cache = new IdentityCache(createLogger('silent'));
    await cache.start(link.url);
    try {
      expect(await cache.get('k', async () => ({ value: 'v1', validUntil: null }))).toBe('v1');
      expect(await cache.get('k', async () => ({ value: 'not read', validUntil: null }))).toBe('v1');
      link.cut();
      await until(() => (cache.serving ? undefined : true), 10_000, 10, 'the cache off');
      // Whatever changed meanwhile was announced to nobody: every read goes to the database.
      expect(await cache.get('k', async () => ({ value: 'v2', validUntil: null }))).toBe('v2');
      expect(await cache.get('k', async () => ({ value: 'v3', validUntil: null }))).toBe('v3');
      expect(cache.size).toBe(0);
      link.restore();
      await until(() => (cache.serving ? true : undefined), 15_000, 20, 'the cache back');
      expect(await cache.get('k', async () => ({ value: 'v4', validUntil: null }))).toBe('v4');
      expect(await cache.get('k', async () => ({ value: 'not read', validUntil: null }))).toBe('v4');
    } finally {
      await cache.stop();
      await link.close();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_DB_POOL_SIZE, DEFAULT_SHARED_BUFFERS, loadConfig } from './config.js';

describe('KASSIR_PG_SHARED_BUFFERS', () => {
  it('defaults to 512MB and takes a PostgreSQL size', () => {
    expect(loadConfig({}).embeddedSharedBuffers).toBe(DEFAULT_SHARED_BUFFERS);
    expect(DEFAULT_SHARED_BUFFERS).toBe('512MB');
    expect(loadConfig({ KASSIR_PG_SHARED_BUFFERS: '128MB' }).embeddedSharedBuffers).toBe('128MB');
    expect(loadConfig({ KASSIR_PG_SHARED_BUFFERS: '2GB' }).embeddedSharedBuffers).toBe('2GB');
  });

  it('refuses what is not a size, naming the variable', () => {
    for (const raw of ['512', 'lots', '512mb', '1 GB; DROP']) {
      expect(() => loadConfig({ KASSIR_PG_SHARED_BUFFERS: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ KASSIR_PG_SHARED_BUFFERS: raw })).toThrow(/KASSIR_PG_SHARED_BUFFERS/);
    }
  });
});

describe('KASSIR_DB_POOL_SIZE', () => {
  it('defaults to 8 and takes any integer from 6 (the job worker shares the pool)', () => {
    expect(loadConfig({}).dbPoolSize).toBe(DEFAULT_DB_POOL_SIZE);
    expect(DEFAULT_DB_POOL_SIZE).toBe(8);
    expect(loadConfig({ KASSIR_DB_POOL_SIZE: '6' }).dbPoolSize).toBe(6);
    expect(loadConfig({ KASSIR_DB_POOL_SIZE: '40' }).dbPoolSize).toBe(40);
  });

  it('refuses fewer than 6 or what is not an integer, naming the variable', () => {
    for (const raw of ['5', '0', '-8', 'eight', '8.5']) {
      expect(() => loadConfig({ KASSIR_DB_POOL_SIZE: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ KASSIR_DB_POOL_SIZE: raw })).toThrow(/KASSIR_DB_POOL_SIZE/);
    }
  });
});

describe('HTTP timeouts against slow clients', () => {
  it('default to a 20 s head, a 60 s idle connection, an hour for a whole request and a 72 s keep-alive', () => {
    expect(loadConfig({}).timeouts).toEqual({ headersMs: 20_000, idleMs: 60_000, requestMs: 3_600_000, keepAliveMs: 72_000 });
    expect(
      loadConfig({ KASSIR_HEADERS_TIMEOUT_MS: '5000', KASSIR_IDLE_TIMEOUT_MS: '0', KASSIR_REQUEST_TIMEOUT_MS: '0', KASSIR_KEEP_ALIVE_TIMEOUT_MS: '5000' })
        .timeouts,
    ).toEqual({ headersMs: 5000, idleMs: 0, requestMs: 0, keepAliveMs: 5000 });
  });

  it('refuses a whole-request limit shorter than the head limit, and what is not a count of ms, naming the variable', () => {
    expect(() => loadConfig({ KASSIR_HEADERS_TIMEOUT_MS: '30000', KASSIR_REQUEST_TIMEOUT_MS: '10000' })).toThrow(/KASSIR_REQUEST_TIMEOUT_MS/);
    for (const [name, raw] of [
      ['KASSIR_HEADERS_TIMEOUT_MS', '0'],
      ['KASSIR_HEADERS_TIMEOUT_MS', '20s'],
      ['KASSIR_IDLE_TIMEOUT_MS', '-1'],
      ['KASSIR_KEEP_ALIVE_TIMEOUT_MS', '0'],
    ] as const) {
      expect(() => loadConfig({ [name]: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(name));
    }
  });
});

describe('load shedding', () => {
  it('is on by default: creates refused past a 100 ms delay or 64 in progress, other routes past 500 ms', () => {
    expect(loadConfig({}).shedding).toEqual({ enabled: true, retryAfterSeconds: 5, lowDelayMs: 100, lowConcurrency: 512, normalDelayMs: 500 });
    expect(loadConfig({ KASSIR_SHED: 'false' }).shedding.enabled).toBe(false);
    expect(loadConfig({ KASSIR_SHED_LOW_DELAY_MS: '20', KASSIR_SHED_NORMAL_DELAY_MS: '20', KASSIR_SHED_LOW_CONCURRENCY: '1' }).shedding).toMatchObject({
      lowDelayMs: 20,
      normalDelayMs: 20,
      lowConcurrency: 1,
    });
  });

  it('refuses limits that would shed other routes before creates, and what is not a positive integer, naming the variable', () => {
    expect(() => loadConfig({ KASSIR_SHED_LOW_DELAY_MS: '600' })).toThrow(/KASSIR_SHED_NORMAL_DELAY_MS/);
    for (const [name, raw] of [
      ['KASSIR_SHED', 'maybe'],
      ['KASSIR_SHED_RETRY_AFTER_SECONDS', '0'],
      ['KASSIR_SHED_LOW_CONCURRENCY', '0'],
      ['KASSIR_SHED_LOW_DELAY_MS', '1.5'],
    ] as const) {
      expect(() => loadConfig({ [name]: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(name));
    }
  });
});

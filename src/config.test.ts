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

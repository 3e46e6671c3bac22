import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_SHARED_BUFFERS, loadConfig } from './config.js';

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

import { describe, expect, it } from 'vitest';
import { CREATE_BATCHES_IN_FLIGHT, DEFAULT_CREATE_BATCH_SIZE } from '../config.js';
import { lowLimits } from './overload.js';

describe("the creates' limit in batches", () => {
  it('floor: the batches in the database and one waiting; start: one batch more, above the bench’s 50 merchants', () => {
    expect(CREATE_BATCHES_IN_FLIGHT).toBe(2);
    expect(DEFAULT_CREATE_BATCH_SIZE).toBe(16);
    // Before 2026-11-28 the floor was 64 (two batches waiting), and an accepted create under
    // overload waited for two batches before its own.
    expect(lowLimits(16, 512)).toEqual({ floor: 48, initial: 64 });
    expect(lowLimits(32, 512)).toEqual({ floor: 96, initial: 128 });
  });

  it('creates sent alone keep a floor of their own; KASSIR_SHED_LOW_CONCURRENCY bounds both', () => {
    expect(lowLimits(1, 512)).toEqual({ floor: 16, initial: 64 });
    expect(lowLimits(16, 2)).toEqual({ floor: 2, initial: 2 });
    expect(lowLimits(16, 56)).toEqual({ floor: 48, initial: 56 });
  });
});

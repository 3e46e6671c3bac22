import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CREATE_BATCHES_IN_FLIGHT, DEFAULT_CREATE_BATCH_SIZE } from '../config.js';
import { ADAPTIVE_LIMIT_DEFAULTS, AdaptiveLimit } from './adaptive-limit.js';
import { answerBeforeRouting, lowLimits } from './overload.js';

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

describe('answerBeforeRouting', () => {
  it('a request it answers never reaches the handler behind it; the others do, once', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end('handler');
    });
    answerBeforeRouting(server, (req, res) => {
      if (!req.url?.startsWith('/refuse')) return false;
      res.writeHead(503).end('refused');
      return true;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const refused = await fetch(`${base}/refuse`, { method: 'POST', body: 'x' });
      expect([refused.status, await refused.text()]).toEqual([503, 'refused']);
      const served = await fetch(`${base}/serve`);
      expect([served.status, await served.text()]).toEqual([200, 'handler']);
      expect(seen).toEqual(['/serve']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('leaves a server with other than one request listener as it is', () => {
    const server = createServer();
    answerBeforeRouting(server, () => true);
    expect(server.listeners('request')).toHaveLength(0);
  });
});

describe("the creates' limit under a sudden overload", () => {
  /** The creates' limit on a clock the test moves, with batches of `batchMs`, after a quiet second at 3 ms a create. */
  function createsLimit(initial?: number) {
    let t = 0;
    const limits = lowLimits(16, 512);
    const limit = new AdaptiveLimit(
      { ...ADAPTIVE_LIMIT_DEFAULTS, min: limits.floor, max: 512, initial: initial ?? limits.initial, queueMs: 100, queueBoundMs: () => 15 },
      () => t,
    );
    /** A window of `windowMs` in which `wanted` creates (all the limit lets in, by default) are in progress, each taking `ms`. */
    const window = (ms: number, wanted = Number.POSITIVE_INFINITY) => {
      const releases: ((ms: number) => void)[] = [];
      while (releases.length < wanted) {
        const release = limit.tryAcquire();
        if (!release) break;
        releases.push(release);
      }
      t += ADAPTIVE_LIMIT_DEFAULTS.windowMs;
      for (const release of releases) release(ms);
      return limit.limit;
    };
    for (let i = 0; i < 10; i++) window(3, 12);
    return { limit, window };
  }

  it('from its start, twice the load the batches carry brings it to its floor within two windows', () => {
    const { limit, window } = createsLimit();
    expect(limit.limit).toBe(64);
    // Let in all it allows, each waiting two batches and more (60 ms against 3 + 15 allowed). A
    // window closes at the first create counted out after it: the first one here still holds the
    // quiet second's creates (and grows the limit it found full); the next ones are the overload's.
    const seen = [window(60), window(60), window(60), window(60), window(60)];
    // Before 2026-11-28 (smoothed at 0.2 down as up): 65, 60, 56, 52, 48 — four windows of the
    // overload, 0.4 s, in which a create let in waited for a batch more than at the floor.
    expect(seen.slice(0, 3)).toEqual([65, 53, 48]);
    expect(seen.at(-1)).toBe(48);
  });

  it('one slow window takes more than a tenth of a limit grown high but at most about a quarter, and growth stays as slow as it was', () => {
    const { limit, window } = createsLimit(200);
    window(3);
    window(500); // closes on the fast window before it
    const before = limit.limit;
    window(500); // the slow one
    // Before 2026-11-28 at most a tenth (0.2 of a halving).
    expect(limit.limit).toBeLessThan(Math.floor(before * 0.9));
    expect(limit.limit).toBeGreaterThanOrEqual(Math.floor(before * 0.75));
    window(3); // closes on the second slow one
    const low = limit.limit;
    window(3); // fast again: up by √limit × 0.2, as before
    expect(limit.limit).toBeGreaterThan(low);
    expect(limit.limit - low).toBeLessThanOrEqual(Math.ceil(Math.sqrt(low) * 0.2));
  });
});

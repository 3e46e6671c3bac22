import { describe, expect, it } from 'vitest';
import { AdaptiveLimit, type AdaptiveLimitOptions } from './adaptive-limit.js';

const options: AdaptiveLimitOptions = { min: 8, max: 400, initial: 20, queueMs: 50, windowMs: 100, minSamples: 5, noLoadMemoryMs: 10_000, smoothing: 0.2 };

/** A limiter on a clock the test moves. */
function limiter(overrides: Partial<AdaptiveLimitOptions> = {}) {
  let t = 0;
  const limit = new AdaptiveLimit({ ...options, ...overrides }, () => t);
  return {
    limit,
    advance(ms: number): void {
      t += ms;
    },
    /**
     * `windows` windows in which as many requests as `wanted` (every one the limit lets in, by
     * default) are in progress at once and each takes `latency(inFlight)` ms.
     */
    run(windows: number, latency: (inFlight: number) => number, wanted = Number.POSITIVE_INFINITY): number[] {
      const seen: number[] = [];
      for (let w = 0; w < windows; w++) {
        const releases: ((ms: number) => void)[] = [];
        while (releases.length < wanted) {
          const release = limit.tryAcquire();
          if (!release) break;
          releases.push(release);
        }
        const ms = latency(releases.length);
        t += options.windowMs;
        for (const release of releases) release(ms);
        seen.push(limit.limit);
      }
      return seen;
    },
  };
}

describe('AdaptiveLimit', () => {
  it('lets in as many as the limit and no more; a request counted out makes room for one', () => {
    const { limit } = limiter({ min: 1, initial: 3 });
    const releases = [limit.tryAcquire(), limit.tryAcquire(), limit.tryAcquire()];
    expect(releases.every((r) => r !== undefined)).toBe(true);
    expect(limit.inFlight).toBe(3);
    expect(limit.tryAcquire()).toBeUndefined();
    releases[0]!(5);
    releases[0]!(5); // counted out once only
    expect(limit.inFlight).toBe(2);
    expect(limit.tryAcquire()).toBeDefined();
    expect(limit.tryAcquire()).toBeUndefined();
  });

  it('grows while the latency stays near the no-load latency, up to max', () => {
    const l = limiter();
    const limits = l.run(200, () => 5);
    expect(limits[10]!).toBeGreaterThan(options.initial);
    expect(limits.at(-1)).toBe(options.max);
    // Never a step down on a flat latency.
    for (let i = 1; i < limits.length; i++) expect(limits[i]!).toBeGreaterThanOrEqual(limits[i - 1]!);
  });

  it('shrinks once the queueing delay passes queueMs, and grows again when it is gone', () => {
    const l = limiter();
    // A service whose latency is 5 ms up to 40 in progress, then grows 4 ms per request more:
    // the limit settles where the queueing delay is about queueMs (40 + 50/4 ≈ 52).
    const service = (n: number) => 5 + Math.max(0, n - 40) * 4;
    const grown = l.run(300, service);
    const settled = grown.at(-1)!;
    expect(settled).toBeGreaterThan(40);
    expect(settled).toBeLessThan(80);
    expect(service(settled) - 5).toBeLessThan(2 * options.queueMs);

    // The same requests become 30 times slower (a database stalled by something else): the limit falls.
    const slow = l.run(50, (n) => 30 * service(n));
    expect(slow.at(-1)!).toBeLessThan(settled / 2);
    expect(slow.at(-1)!).toBeGreaterThanOrEqual(options.min);
    for (let i = 1; i < slow.length; i++) expect(slow[i]!).toBeLessThanOrEqual(slow[i - 1]! + 1);

    // Recovered: it climbs back to where it was.
    const recovered = l.run(300, service);
    expect(recovered[20]!).toBeGreaterThan(slow.at(-1)!);
    expect(Math.abs(recovered.at(-1)! - settled)).toBeLessThanOrEqual(settled * 0.2);
  });

  it('falls at most about a tenth a window, so one slow window does not empty it', () => {
    const l = limiter({ initial: 200 });
    l.run(3, () => 5);
    const before = l.limit.limit;
    // A window closes at the first request counted out after windowMs: the slow one closes at the next.
    l.run(2, () => 10_000);
    expect(l.limit.limit).toBeGreaterThanOrEqual(Math.floor(before * 0.9) - 1);
    expect(l.limit.limit).toBeLessThan(before);
  });

  it('never goes below min, however long the latency stays high', () => {
    const l = limiter();
    l.run(5, () => 5);
    // Longer than noLoadMemoryMs: a load that lasts does not make its own latency the reference.
    expect(l.run(300, () => 10_000).at(-1)).toBe(options.min);
  });

  it('settles under a load that lasts instead of climbing by queueMs every noLoadMemoryMs', () => {
    const l = limiter({ noLoadMemoryMs: 2_000 });
    const service = (n: number) => 5 + Math.max(0, n - 40) * 4;
    const limits = l.run(600, service);
    expect(Math.max(...limits.slice(100))).toBeLessThan(80);
    expect(l.limit.noLoadMs).toBe(5);
  });

  it('does not grow while it holds nobody back, however much of it is used', () => {
    const l = limiter({ initial: 100 });
    expect(l.run(100, () => 5, 30).at(-1)).toBe(100);
    // 50 clients each waiting for its answer before the next request (the bench's (b)): 99 of 100
    // in use, fast, and still no reason for a larger limit. Before 2026-11-28 this grew it to 100
    // from 64, and an overload right after was let in 100 at once.
    expect(l.run(100, () => 5, 99).at(-1)).toBe(100);
    // Reached, it grows.
    expect(l.run(20, () => 5).at(-1)!).toBeGreaterThan(100);
  });

  it('a limit that held the last load back starts the next where it ended, not where a lighter load in between would have grown it', () => {
    const l = limiter({ initial: 64, min: 64 });
    // A closed load of 50 at a fast latency: the limit stays at its start.
    l.run(200, () => 5, 50);
    expect(l.limit.limit).toBe(64);
    // Then twice what can be carried: the first window lets in no more than the limit.
    const releases: ((ms: number) => void)[] = [];
    for (let i = 0; i < 200; i++) {
      const release = l.limit.tryAcquire();
      if (release) releases.push(release);
    }
    expect(releases).toHaveLength(64);
  });

  it('does not shrink either while it holds nobody back: a closed load below it, however slow, keeps it', () => {
    // 2026-11-28: a floor of 48 with the bench's 50 merchants creating as fast as they are
    // answered on a busy machine: their latency past the tolerance lowered the limit from 64 to 48
    // though none was refused, and then they were. A limit not reached does not move.
    const l = limiter({ initial: 64, min: 48 });
    l.run(5, () => 5, 10);
    expect(l.limit.noLoadMs).toBe(5);
    expect(l.run(100, () => 500, 50).at(-1)).toBe(64);
    // Reached (an overload), the same latency lowers it to its floor.
    expect(l.run(100, () => 500).at(-1)).toBe(48);
  });

  it('with queueBoundMs, allows only that much queueing when it is less than queueMs', () => {
    // Latency 5 ms up to 40 in progress, then 1 ms per request more. With queueMs (50) alone the
    // limit settles where the queueing delay is ~50 ms (about 90 in progress); bounded to 10 ms,
    // about 50.
    const service = (n: number) => 5 + Math.max(0, n - 40);
    const loose = limiter().run(400, service).at(-1)!;
    expect(service(loose) - 5).toBeGreaterThan(30);
    const bound = 10;
    const tight = limiter({ queueBoundMs: () => bound })
      .run(400, service)
      .at(-1)!;
    expect(service(tight) - 5).toBeLessThanOrEqual(2 * bound);
    expect(tight).toBeGreaterThan(40);
    // The lesser of the two counts: a bound above queueMs changes nothing, nor one not known yet.
    expect(
      limiter({ queueBoundMs: () => 1_000 })
        .run(400, service)
        .at(-1),
    ).toBe(loose);
    expect(
      limiter({ queueBoundMs: () => undefined })
        .run(400, service)
        .at(-1),
    ).toBe(loose);
  });

  it('takes no decision on fewer than minSamples requests', () => {
    const l = limiter();
    l.run(5, () => 5);
    const before = l.limit.limit;
    // Full (the limit holds requests back), but one request ends a window.
    const held: ((ms: number) => void)[] = [];
    for (let release = l.limit.tryAcquire(); release; release = l.limit.tryAcquire()) held.push(release);
    const limits: number[] = [];
    for (let w = 0; w < 20; w++) {
      l.advance(options.windowMs);
      held.shift()!(10_000);
      const release = l.limit.tryAcquire();
      if (release) held.push(release);
      expect(l.limit.tryAcquire()).toBeUndefined();
      limits.push(l.limit.limit);
    }
    // One request a window: a window closes every minSamples of them, not every request.
    expect(limits.at(-1)).toBeGreaterThanOrEqual(Math.floor(before * 0.9 ** Math.ceil(20 / options.minSamples)) - 1);
    expect(limits.at(-1)).toBeLessThan(before);
    expect(limits.at(-1)).toBeLessThan(Math.floor(before * 0.9));
  });

  it('forgets a no-load latency older than noLoadMemoryMs once measured again without load (a machine grown slower)', () => {
    const l = limiter({ noLoadMemoryMs: 2_000 });
    l.run(5, () => 2);
    expect(l.limit.noLoadMs).toBe(2);
    // Few requests (less than half the limit in progress): their latency is a no-load latency.
    l.run(300, () => 40, 6);
    expect(l.limit.noLoadMs).toBe(40);
  });

  it('is late once the oldest request in progress has waited longer than the no-load latency plus queueMs', () => {
    let t = 0;
    const limit = new AdaptiveLimit(options, () => t);
    expect(limit.late()).toBe(false);
    const first = limit.tryAcquire()!;
    t += 10;
    const second = limit.tryAcquire()!;
    t += options.queueMs - 5; // the first in progress 55 ms: past queueMs (no no-load latency measured yet)
    expect(limit.late()).toBe(true);
    first(55);
    // The second has waited 45 ms: not late.
    expect(limit.late()).toBe(false);
    t += 10;
    expect(limit.late()).toBe(true);
    second(55);
    expect(limit.late()).toBe(false);
  });

  it('refuses bounds that cannot hold', () => {
    expect(() => new AdaptiveLimit({ ...options, min: 0 })).toThrow(/min/);
    expect(() => new AdaptiveLimit({ ...options, min: 10, max: 5 })).toThrow(/min/);
    expect(() => new AdaptiveLimit({ ...options, smoothing: 0 })).toThrow(/smoothing/);
    expect(() => new AdaptiveLimit({ ...options, shrinkSmoothing: 1.5 })).toThrow(/shrinkSmoothing/);
  });
});

import { performance } from 'node:perf_hooks';

export interface AdaptiveLimitOptions {
  /** The limit never goes below this (nor above `max`). */
  min: number;
  max: number;
  /** The limit before anything was measured. */
  initial: number;
  /**
   * The queueing delay allowed, ms: the limit grows while the requests' mean latency stays within
   * the no-load latency plus this, and shrinks in proportion as it passes it.
   */
  queueMs: number;
  /**
   * A tighter allowance than `queueMs`, read at every window when given (undefined: `queueMs`):
   * for creates taken together, one batch's time (src/http/overload.ts), so that under overload a
   * create let in waits for about one batch before its own, not for as many as 100 ms allow.
   * late() keeps to `queueMs`.
   */
  queueBoundMs?: () => number | undefined;
  /** A new limit is computed once this long has passed and at least `minSamples` requests ended. */
  windowMs: number;
  minSamples: number;
  /** How long the least latency seen is remembered as the no-load latency. */
  noLoadMemoryMs: number;
  /** The weight of a window's new limit against the current one (0 < smoothing ≤ 1). */
  smoothing: number;
  /**
   * The weight when the new limit is lower (0 < shrinkSmoothing ≤ 1; undefined: `smoothing`): a
   * limit comes down faster than it goes up, as TCP's window does, so that the queue a sudden
   * overload lets in is cut within a window or two.
   */
  shrinkSmoothing?: number;
}

/**
 * The creates' (src/http/overload.ts). Down at half a window's new limit: from its start of 64 an
 * overload brings it to its floor of 48 in two windows (2026-11-28; at the 0.2 of its growth it
 * took four, some 0.4–0.5 s in which a create let in waited for one batch more).
 */
export const ADAPTIVE_LIMIT_DEFAULTS = { windowMs: 100, minSamples: 10, noLoadMemoryMs: 60_000, smoothing: 0.2, shrinkSmoothing: 0.5 } as const;

/**
 * An adaptive concurrency limit (issue 38): how many requests of one kind may be in progress at
 * once, adapted to their latency. The algorithm is the gradient one of Netflix's
 * concurrency-limits (Gradient2: `new = limit × gradient + √limit`, smoothed), with TCP Vegas's
 * reference: the no-load latency, the least latency of a request seen over `noLoadMemoryMs`
 * (under a load that lasts, the least since it began: see remember()). Each
 * window, with `rtt` the mean latency of the requests that ended in it,
 *
 *     gradient = clamp((noLoad + queueMs) / rtt, 0.5, 1)
 *     limit   ← limit × (1 − smoothing) + (limit × gradient + √limit) × smoothing
 *
 * so the limit grows (by √limit a window, smoothed) while the queueing delay, rtt − noLoad, stays
 * within `queueMs`, and shrinks in proportion once it passes it — at most by half a window, as
 * Gradient2 does; with `shrinkSmoothing` the weight of a lower new limit is its own (the creates'
 * come down at 0.5, at most about a quarter a window, and go up at 0.2). The tolerance is a delay added to the no-load latency, as CoDel's target, not
 * Gradient2's multiple of it: a create's no-load latency is a few milliseconds, and a multiple of
 * that would refuse the queue that taking creates together needs (creates waiting for a batch are
 * in progress, and their wait is part of their latency). The limit grows only in a window where
 * it was reached (a request found it full, or as many as it allows were in progress): a limit that
 * held nobody back says nothing of a larger one (RFC 7661), and grown under a load that never
 * filled it, it would let the next burst in all at once. It shrinks, too, only in a window where it
 * was reached: the latency of a load the limit did not hold back is the database's under that
 * load, and a limit lowered for it refuses that very load (2026-11-28: a floor of 48 below the
 * bench's 50 merchants, lowered by their latency on a busy machine, refused them). It stays within
 * [min, max].
 *
 * The allowance may be given as a function (`queueBoundMs`, the lesser of it and `queueMs`
 * counts): creates taken together allow one batch's time, so that the queue an overload keeps
 * is about one batch (docs/performance.md, "The limit in batches").
 *
 * The caller counts a request in with tryAcquire() and out with the function it returns, giving
 * the request's latency (from its arrival, so a wait for a batch or a connection counts).
 */
export class AdaptiveLimit {
  private value: number;
  private used = 0;
  private windowStart: number | undefined;
  private windowSum = 0;
  private windowCount = 0;
  private windowLeast = Number.POSITIVE_INFINITY;
  private windowPeak = 0;
  /** Whether the limit was reached in this window: a request found it full, or as many as it allows were in progress. */
  private windowReached = false;
  /** Each window's least latency, increasing from the front (a monotonic queue: its front is the least). */
  private readonly least: { at: number; ms: number }[] = [];
  /** When each request in progress was counted in, oldest first (a Map keeps insertion order). */
  private readonly started = new Map<number, number>();
  private nextId = 0;

  constructor(
    private readonly options: AdaptiveLimitOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(options.min >= 1 && options.max >= options.min)) throw new Error(`adaptive limit: need 1 ≤ min ≤ max, got ${options.min}, ${options.max}`);
    if (!(options.smoothing > 0 && options.smoothing <= 1)) throw new Error(`adaptive limit: smoothing must be in (0, 1], got ${options.smoothing}`);
    const shrink = options.shrinkSmoothing;
    if (shrink !== undefined && !(shrink > 0 && shrink <= 1)) throw new Error(`adaptive limit: shrinkSmoothing must be in (0, 1], got ${shrink}`);
    this.value = clamp(options.initial, options.min, options.max);
  }

  /** The requests that may be in progress at once now. */
  get limit(): number {
    return Math.floor(this.value);
  }

  /** The requests counted in and not yet out. */
  get inFlight(): number {
    return this.used;
  }

  /** The no-load latency in use, ms (undefined before any request ended). */
  get noLoadMs(): number | undefined {
    return this.least[0]?.ms;
  }

  /**
   * Whether requests are late now: the oldest in progress has been so longer than the no-load
   * latency plus `queueMs`. Unlike the limit, which learns from requests that ended, this sees a
   * queue that nothing leaves (a database whose every connection is held).
   */
  late(): boolean {
    const oldest = this.started.values().next();
    if (oldest.done) return false;
    return this.now() - oldest.value > (this.noLoadMs ?? 0) + this.options.queueMs;
  }

  /**
   * Counts a request in if the limit allows it: returns the function that counts it out with its
   * latency in ms (call it once), or undefined when the limit is reached.
   */
  tryAcquire(): ((latencyMs: number) => void) | undefined {
    if (this.used >= this.limit) {
      this.windowReached = true;
      return undefined;
    }
    this.used++;
    if (this.used > this.windowPeak) this.windowPeak = this.used;
    if (this.used >= this.limit) this.windowReached = true;
    const id = this.nextId++;
    this.started.set(id, this.now());
    let done = false;
    return (latencyMs: number) => {
      if (done) return;
      done = true;
      this.used--;
      this.started.delete(id);
      this.sample(latencyMs);
    };
  }

  private sample(ms: number): void {
    const now = this.now();
    if (this.windowStart === undefined) this.windowStart = now;
    this.windowSum += ms;
    this.windowCount++;
    if (ms < this.windowLeast) this.windowLeast = ms;
    if (now - this.windowStart < this.options.windowMs || this.windowCount < this.options.minSamples) return;

    const rtt = this.windowSum / this.windowCount;
    this.remember(now, this.windowLeast, this.windowPeak < this.value / 2);
    const noLoad = this.least[0]!.ms;
    const bound = this.options.queueBoundMs?.();
    const allowed = bound === undefined ? this.options.queueMs : Math.min(this.options.queueMs, bound);
    const gradient = clamp((noLoad + allowed) / rtt, 0.5, 1);
    let next = this.value * gradient + Math.sqrt(this.value);
    // Growth only from a limit that held requests back (RFC 7661's validation of TCP's congestion
    // window: a window the sender did not fill says nothing of a larger one). Before 2026-11-28 it
    // grew while half of it was used: the bench's 50 merchants creating as fast as they are
    // answered grew it to 100 in a few seconds, and the overload that followed was let in 100 at
    // once, to wait for two batches of 16 at a time — the first slice's stall (docs/performance.md).
    // And no change at all from a window in which it was not reached: neither up (above) nor down
    // (a closed load below the limit, slower on a busy machine, would lower it under itself).
    if (!this.windowReached) next = this.value;
    const { min, max } = this.options;
    const smoothing = next < this.value ? (this.options.shrinkSmoothing ?? this.options.smoothing) : this.options.smoothing;
    this.value = clamp(this.value * (1 - smoothing) + next * smoothing, min, max);

    this.windowStart = now;
    this.windowSum = 0;
    this.windowCount = 0;
    this.windowLeast = Number.POSITIVE_INFINITY;
    this.windowPeak = this.used;
    this.windowReached = this.used >= this.limit;
  }

  /**
   * A window's least latency is a no-load latency when it is the least yet, or when the window
   * was not held by the limit (less than half of it used): a loaded window's least latency is
   * already queued, and taken as the reference it would let the limit climb by `queueMs` every
   * `noLoadMemoryMs` for as long as the load lasts. An old value goes only when a newer one came.
   */
  private remember(now: number, ms: number, unloaded: boolean): void {
    const { least } = this;
    if (!unloaded && least.length > 0 && ms >= least[0]!.ms) return;
    while (least.length > 0 && least[least.length - 1]!.ms >= ms) least.pop();
    least.push({ at: now, ms });
    while (least.length > 1 && least[0]!.at < now - this.options.noLoadMemoryMs) least.shift();
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
